/**
 * The zod schemas of the domain: the single source of its types.
 *
 * They validate tool input, declare tool output and check a store file on load.
 */
import { z } from "zod";
import { LIMITS } from "./limits.ts";

/** A task's status; a parent's status follows its children. */
export const TaskStatusSchema = z.enum(["todo", "in_progress", "done"]);
/** `"todo" | "in_progress" | "done"`. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** A session (one task tree) name. */
export const SessionIdSchema = z.string().min(1).max(LIMITS.sessionIdLength).describe("Tree name");

/** The default names live in names.ts (no zod there, for the browser bundles); re-exported for the domain's users. */
export { DEFAULT_NAMESPACE, DEFAULT_SESSION } from "./names.ts";

/** What a namespace name is, in words (error messages). */
export const NAMESPACE_RULE = "a namespace name is 1-64 characters of A-Z a-z 0-9 . _ -";

/** A namespace name: 1–64 characters of `A–Z a–z 0–9 . _ -` (docs/namespaces.md). */
export const NamespaceSchema = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, NAMESPACE_RULE).describe(
  "Namespace name",
);

/** Whether `name` is a valid namespace name (see {@link NamespaceSchema}). */
export function isNamespace(name: unknown): name is string {
  return typeof name === "string" && NamespaceSchema.safeParse(name).success;
}

/** A task id: unique in its session; no whitespace or `/` (checklist paths use `/`). */
export const TaskIdSchema = z.string().min(1).max(LIMITS.taskIdLength).regex(
  /^[^\s/]+$/,
  "an id has no whitespace and no '/'",
);

/** What an agent name is, in words (error messages). */
export const AGENT_RULE = "an agent name is 1-64 characters of A-Z a-z 0-9 . _ -";

/** An agent's name (docs/teams.md): 1–64 characters of `A–Z a–z 0–9 . _ -`. */
export const AgentSchema = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, AGENT_RULE);

/** Whether `name` is a valid agent name (see {@link AgentSchema}). */
export function isAgent(name: unknown): name is string {
  return typeof name === "string" && AgentSchema.safeParse(name).success;
}

/** A time as ISO 8601 text (`2026-01-02T03:04:05.000Z`). */
export const TimeSchema = z.iso.datetime({ offset: true });

/** Who holds a leaf in progress and until when: live while the reader's clock is before `expires_at`. */
export const ClaimSchema = z.object({
  agent: AgentSchema,
  since: TimeSchema.describe("When the agent took it"),
  expires_at: TimeSchema.describe("End of the lease"),
});
/** See {@link ClaimSchema}. */
export type Claim = z.infer<typeof ClaimSchema>;

/** A text of a git record: 1–1,024 characters of well-formed Unicode (what git printed, decoded). */
const GitTextSchema = z.string().min(1).max(LIMITS.gitTextLength).refine(
  (text) => text.isWellFormed(),
  "must be well-formed Unicode",
);

/**
 * Where work lives, as `git` saw it (docs/teams.md "Where the work lives"): the work tree's top directory,
 * the branch (absent when HEAD is detached), HEAD (absent before the first commit; 64 hex digits in a
 * SHA-256 repository), the upstream with the commits ahead of and behind it, and the changed and untracked
 * paths (`dirty`: the first {@link LIMITS}.gitDirty in path order; `dirty_count`: all). What lib/git reads.
 */
export const GitStateSchema = z.object({
  worktree: GitTextSchema.optional(),
  branch: GitTextSchema.optional(),
  head: z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/).optional(),
  upstream: GitTextSchema.optional(),
  ahead: z.number().int().nonnegative().optional(),
  behind: z.number().int().nonnegative().optional(),
  dirty: z.array(GitTextSchema).max(LIMITS.gitDirty).optional(),
  dirty_count: z.number().int().nonnegative().optional(),
});
/** See {@link GitStateSchema}. */
export type GitState = z.infer<typeof GitStateSchema>;

/** A task's `git`: where the work on it was last seen, by which agent and when (lib/domain/git_record.ts). */
export const GitRecordSchema = z.object({ agent: AgentSchema, at: TimeSchema, ...GitStateSchema.shape });
/** See {@link GitRecordSchema}. */
export type GitRecord = z.infer<typeof GitRecordSchema>;

/** Ids of tasks of the same session that must be done before a task may start. */
export const BlockedBySchema = z.array(TaskIdSchema).max(LIMITS.blockedBy);

/** What the anonymous agent is called in a note: not a valid agent name, so no named agent can take it. */
export const ANONYMOUS_NOTE_AGENT = "(anonymous)";

/** A note's text as an agent sends it: 1–2,000 characters after trimming (docs/teams.md "Context that travels with the work"). */
export const NoteTextSchema = z.string().trim().min(1).max(LIMITS.noteLength);

/**
 * One note on a task: who wrote it (an agent, or {@link ANONYMOUS_NOTE_AGENT}), when, and what. A task
 * keeps its last {@link LIMITS}.notesKept, oldest first (lib/domain/notes.ts).
 */
export const NoteSchema = z.object({
  agent: z.union([AgentSchema, z.literal(ANONYMOUS_NOTE_AGENT)]),
  at: TimeSchema,
  text: NoteTextSchema,
});
/** See {@link NoteSchema}. */
export type Note = z.infer<typeof NoteSchema>;

/**
 * One path pattern as an agent sends it: 1–200 characters; what it may hold, and its normal form,
 * is lib/domain/path_patterns.ts (docs/teams.md "Paths and reservations").
 */
export const PathPatternSchema = z.string().min(1).max(LIMITS.patternLength);

/** The paths a task will change: at most 32 patterns; stored normalised. */
export const PathsSchema = z.array(PathPatternSchema).max(LIMITS.pathsPerTask);

/** A task's name. */
export const NameSchema = z.string().trim().min(1).max(LIMITS.nameLength);
/** A task's description. */
export const DescriptionSchema = z.string().max(LIMITS.descriptionLength);
/** What was done to finish a task. */
export const ResolutionSchema = z.string().max(LIMITS.resolutionLength);
/** A resolution that must be given (completeTask): not blank, trimmed. */
export const RequiredResolutionSchema = z.string().trim().min(1).max(LIMITS.resolutionLength);
/** Completion criteria or constraints: short statements inherited by subtasks. */
export const StatementListSchema = z.array(z.string().min(1).max(LIMITS.listItemLength)).max(
  LIMITS.listItems,
);

/** A stored task with its nested subtasks (R1.3, R1.6, R4.6). */
export const TaskSchema = z.object({
  id: TaskIdSchema,
  name: NameSchema,
  description: DescriptionSchema,
  status: TaskStatusSchema,
  resolution: ResolutionSchema.optional(),
  completion_criteria: StatementListSchema.optional(),
  constraints: StatementListSchema.optional(),
  parallel: z.boolean().optional(),
  blocked_by: BlockedBySchema.optional(),
  paths: PathsSchema.optional(),
  claim: ClaimSchema.optional(),
  git: GitRecordSchema.optional(),
  notes: z.array(NoteSchema).max(LIMITS.notesKept).optional(),
  /** Older notes no longer kept (absent: none dropped). */
  notes_dropped: z.number().int().positive().optional(),
  get tasks(): z.ZodArray<typeof TaskSchema> {
    return z.array(TaskSchema);
  },
});
/** A stored task; `tasks` holds its subtasks in execution order (R3.10). */
export type Task = z.infer<typeof TaskSchema>;

/** A task's own fields: everything but its id and its subtasks. */
export const TaskFieldsSchema = TaskSchema.omit({ id: true, tasks: true });
/** See {@link TaskFieldsSchema}. */
export type TaskFields = z.infer<typeof TaskFieldsSchema>;

/** A task without its subtree, with subtask counts: what replies show where the tree is not needed. */
export const TaskViewSchema = z.object({
  id: TaskIdSchema,
  name: z.string(),
  description: z.string(),
  status: TaskStatusSchema,
  resolution: z.string().optional(),
  completion_criteria: z.array(z.string()).optional(),
  constraints: z.array(z.string()).optional(),
  parallel: z.boolean().optional(),
  blocked_by: z.array(z.string()).optional(),
  paths: z.array(z.string()).optional(),
  claim: ClaimSchema.optional(),
  /** Notes kept on the task (getTask shows them); absent when it has none. */
  notes_count: z.number().int().optional(),
  parent_id: z.string().optional().describe("Absent for a root task"),
  subtasks_total: z.number().int(),
  subtasks_done: z.number().int(),
});
/** See {@link TaskViewSchema}. */
export type TaskView = z.infer<typeof TaskViewSchema>;

/** A task to create, with optional nested subtasks (R6.3, R6.4) and an optional id (R6.7). */
export const NewTaskSchema = z.object({
  id: TaskIdSchema.optional(),
  name: NameSchema,
  description: DescriptionSchema.optional(),
  completion_criteria: StatementListSchema.optional(),
  constraints: StatementListSchema.optional(),
  parallel: z.boolean().optional(),
  blocked_by: BlockedBySchema.optional(),
  paths: PathsSchema.optional(),
  get tasks(): z.ZodOptional<z.ZodArray<typeof NewTaskSchema>> {
    return z.array(NewTaskSchema).optional();
  },
});
/** See {@link NewTaskSchema}. */
export type NewTask = z.infer<typeof NewTaskSchema>;

/** Overall totals plus the Markdown task table (R3.13): a reply's `progress_summary`. */
export const TaskTableSchema = z.object({
  total_tasks: z.number().int(),
  completed_tasks: z.number().int(),
  in_progress_tasks: z.number().int(),
  todo_tasks: z.number().int(),
  completion_percentage: z.number(),
  table: z.string().describe("Markdown"),
});
/** See {@link TaskTableSchema}. */
export type TaskTable = z.infer<typeof TaskTableSchema>;

/** A note as a start hands it over: its text cut to a readable length (lib/domain/notes.ts). */
export const ContextNoteSchema = z.object({ agent: z.string(), at: z.string(), text: z.string() });
/** See {@link ContextNoteSchema}. */
export type ContextNote = z.infer<typeof ContextNoteSchema>;

/** A finished task the started leaf waited for, with what its agents left (lib/domain/notes.ts). */
export const ContextBlockerSchema = z.object({
  id: z.string(),
  name: z.string(),
  resolution: z.string().optional(),
  /** A parent: the resolutions of its leaves, the last few in tree order. */
  resolutions: z.array(z.object({ id: z.string(), resolution: z.string() })).optional(),
  /** A parent: its earlier leaves' resolutions, not listed. */
  more_resolutions: z.number().int().positive().optional(),
  last_note: ContextNoteSchema.optional(),
  /** Where its work was last seen: its `git` in short. */
  git: z.object({
    branch: z.string().optional(),
    head: z.string().optional(),
    worktree: z.string().optional(),
  })
    .optional(),
});
/** See {@link ContextBlockerSchema}. */
export type ContextBlocker = z.infer<typeof ContextBlockerSchema>;

/**
 * What a start or claim that takes a leaf hands the agent (docs/teams.md "Context that travels with the work"): its blockers' resolutions, last notes and where their work lives, the stale holder's notes and git record on a takeover, the
 * leaf's own notes; `dropped` counts what was left out to stay small (getTask has it).
 */
export const TakeContextSchema = z.object({
  blockers: z.array(ContextBlockerSchema).optional(),
  /** `git`: the stale holder's last record on the leaf, its texts cut as notes are. */
  previous: z.object({
    agent: z.string(),
    notes: z.array(ContextNoteSchema),
    git: GitRecordSchema.optional(),
  })
    .optional(),
  notes: z.array(ContextNoteSchema).optional(),
  dropped: z.number().int().positive().optional(),
});
/** See {@link TakeContextSchema}. */
export type TakeContext = z.infer<typeof TakeContextSchema>;

/** What startTask answers (R3.1–R3.6). */
export const StartResultSchema = z.object({
  task: TaskViewSchema.describe("The leaf started"),
  started_tasks: z.array(z.object({ id: z.string(), name: z.string() })),
  message: z.string(),
  hierarchy_summary: z.string(),
  aggregated_completion_criteria: z.array(z.string()),
  aggregated_constraints: z.array(z.string()),
  context: TakeContextSchema.optional(),
});
/**
 * See {@link StartResultSchema}; a start by a named agent may also say whose expired claim it took
 * over and whether it only renewed the caller's lease (declared by claimTask's output, not repeated
 * in startTask's listing, which every agent pays for).
 */
export type StartResult = z.infer<typeof StartResultSchema> & { taken_over_from?: string; renewed?: boolean };

/**
 * A leaf that would be ready but for other agents' live reservations (docs/teams.md "Paths and
 * reservations"): per holder, its leaf, lease end and the overlapping patterns `[mine, theirs]`.
 */
export const ReservedLeafSchema = z.object({
  id: z.string(),
  name: z.string(),
  conflicts: z.array(z.object({
    id: z.string(),
    agent: z.string(),
    expires_at: z.string(),
    pairs: z.array(z.tuple([z.string(), z.string()])),
  })),
});
/** See {@link ReservedLeafSchema}. */
export type ReservedLeaf = z.infer<typeof ReservedLeafSchema>;

/** A live reservation that overlaps a path checkPaths was asked about (docs/teams.md). */
export const PathConflictSchema = z.object({
  path: z.string().describe("As asked"),
  agent: z.string(),
  task_id: z.string(),
  task_name: z.string(),
  pattern: z.string().describe("The holder's pattern"),
  expires_at: z.string(),
});
/** See {@link PathConflictSchema}. */
export type PathConflict = z.infer<typeof PathConflictSchema>;

/**
 * What claimTask answers: startTask's whole reply (its fields are not repeated here, to keep the tool
 * listing short) plus the claim; or with nothing ready `task: null`, who holds what (`waiting_on`),
 * what is blocked, and what waits on a reservation (`reserved`).
 */
export const ClaimResultSchema = z.looseObject({
  task: TaskViewSchema.nullable(),
  message: z.string(),
  claim: ClaimSchema.optional(),
  taken_over_from: AgentSchema.optional(),
  renewed: z.boolean().optional(),
  waiting_on: z.array(
    z.object({ id: z.string(), name: z.string(), agent: z.string(), expires_at: z.string() }),
  )
    .optional(),
  blocked: z.array(z.object({ id: z.string(), name: z.string(), blocked_by: z.array(z.string()) }))
    .optional(),
  reserved: z.array(ReservedLeafSchema).optional(),
});
/** See {@link ClaimResultSchema}. */
export type ClaimResult = z.infer<typeof ClaimResultSchema> & Partial<Omit<StartResult, "task" | "message">>;

/** A lease in seconds (`lease_seconds`, docs/teams.md). */
export const LeaseSecondsSchema = z.number().int().min(1).max(86_400);

/** What completeTask answers (R3.7–R3.16). */
export const CompleteResultSchema = z.object({
  message: z.string(),
  next_task_id: z.string().optional(),
  progress_summary: TaskTableSchema,
});
/** See {@link CompleteResultSchema}. */
export type CompleteResult = z.infer<typeof CompleteResultSchema>;

/** Input of createTask: one task with optional nested subtasks, where to put it (R2.1, R2.2, R6). */
export const CreateTaskInputSchema = NewTaskSchema.extend({
  parentId: TaskIdSchema.optional(),
  insertIndex: z.number().int().min(0).optional(),
});
/** See {@link CreateTaskInputSchema}. */
export type CreateTaskInput = z.infer<typeof CreateTaskInputSchema>;

/** Input of updateTask: the task and the fields to change (R2.7). */
export const UpdateTaskInputSchema = z.object({
  id: TaskIdSchema,
  name: NameSchema.optional(),
  description: DescriptionSchema.optional(),
  status: TaskStatusSchema.optional(),
  resolution: ResolutionSchema.optional(),
  completion_criteria: StatementListSchema.optional(),
  constraints: StatementListSchema.optional(),
  parallel: z.boolean().optional(),
  blocked_by: BlockedBySchema.optional(),
  paths: PathsSchema.optional(),
  note: NoteTextSchema.optional(),
});
/** See {@link UpdateTaskInputSchema}. */
export type UpdateTaskInput = z.infer<typeof UpdateTaskInputSchema>;
