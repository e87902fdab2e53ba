/**
 * The view model: how a session and the handoff documents are shown, as plain JSON.
 *
 * The server builds it (fold.ts, build.ts), renders it to HTML for the first paint and sends it as
 * JSON to the dashboard's script and the chat view, which render the same nodes into the DOM
 * (render.ts). These schemas are the single source of its types; browser code imports the types only.
 */
import { z } from "zod";
import { HistoryEntrySchema, RevisionSchema } from "../domain/history_entry.ts";
import { TaskStatusSchema } from "../domain/schemas.ts";

/** Agents at work listed per session; the rest are counted. */
export const AGENTS_SHOWN = 20;

/**
 * Who holds a leaf in progress and until when (docs/teams.md). Whether the lease is live
 * is judged by the viewer's clock when drawn (text.ts `leaseLive`), never stored here.
 */
export const HolderSchema = z.object({ agent: z.string(), expires_at: z.string() });
/** See {@link HolderSchema}. */
export type Holder = z.infer<typeof HolderSchema>;

/** An unfinished task another waits for; `name` is empty when it was cut to keep one read small. */
export const BlockerSchema = z.object({ id: z.string(), name: z.string() });
/** See {@link BlockerSchema}. */
export type Blocker = z.infer<typeof BlockerSchema>;

/**
 * Where a held leaf's work is (docs/teams.md "Paths and reservations", "Where the work lives"): its
 * paths, own or inherited, the first few (team_marks.ts `PATHS_SHOWN`), which its claim reserves
 * while the lease is live, and its `git` record in short. The dashboard only.
 */
export const HeldWorkSchema = z.object({
  paths: z.array(z.string()),
  /** Paths beyond those listed. */
  paths_more: z.number().int().positive().optional(),
  /** The leaf's `git` record: `short` is branch@head (`feature/x@1a2b3c4`), `line` the whole record in a line. */
  git: z.object({ short: z.string(), line: z.string(), agent: z.string(), at: z.string() }).optional(),
});
/** See {@link HeldWorkSchema}. */
export type HeldWork = z.infer<typeof HeldWorkSchema>;

/**
 * A live reservation a leaf's paths overlap: the holder, its lease's end, the leaf it holds, and the
 * first overlapping pair of patterns, `[this leaf's, the holder's]`.
 */
export const ReserverSchema = HolderSchema.extend({
  id: z.string(),
  name: z.string(),
  pair: z.tuple([z.string(), z.string()]),
});
/** See {@link ReserverSchema}. */
export type Reserver = z.infer<typeof ReserverSchema>;

/** A leaf in progress held by an agent, live or stale: the session's agents at work. */
export const AgentAtWorkSchema = HolderSchema.extend({ id: z.string(), name: z.string() });
/** See {@link AgentAtWorkSchema}. */
export type AgentAtWork = z.infer<typeof AgentAtWorkSchema>;

/** One shown task of a folded tree, in tree order; `depth` 0 is a root. */
export const TaskRowSchema = z.object({
  kind: z.literal("task"),
  id: z.string(),
  name: z.string(),
  status: TaskStatusSchema,
  depth: z.number().int().nonnegative(),
  parent_id: z.string().nullable(),
  /** Direct subtasks. */
  children: z.number().int().nonnegative(),
  /**
   * Done tasks of this task's subtree (itself and all below it), and how many there are: the
   * counts of the roots add up to the session's `done`/`total`.
   */
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  /** Its subtasks follow in the rows (unfolded); false with `children > 0` means folded. */
  open: z.boolean(),
  /** On the path from a root to the task in progress (or, with none in progress, to the next one). */
  on_path: z.boolean(),
  /** A leaf in progress (with agents at work, each holder's leaf is one). */
  active: z.boolean(),
  /** Its subtasks may run at once, in any order, by several agents. */
  parallel: z.literal(true).optional(),
  /** The agent holding this leaf and its lease's end. */
  claim: HolderSchema.optional(),
  /** Unfinished tasks it waits for, its own blockers and its ancestors', the first few of them. */
  blocked_by: z.array(BlockerSchema).optional(),
  /** Unfinished blockers beyond those listed. */
  blocked_more: z.number().int().positive().optional(),
  /** Where the work of this held leaf is: its paths and branch@head (the dashboard only). */
  work: HeldWorkSchema.optional(),
  /**
   * A leaf that would be ready but for other agents' live reservations: their holders, the first few
   * (the dashboard only).
   */
  reserved_by: z.array(ReserverSchema).optional(),
  /** Holders beyond those listed. */
  reserved_more: z.number().int().positive().optional(),
  /** What the call being shown did to this task (the chat view marks it); absent on the dashboard. */
  change: z.enum(["started", "completed", "added", "changed"]).optional(),
});
/** See {@link TaskRowSchema}. */
export type TaskRow = z.infer<typeof TaskRowSchema>;

/** What a call did to a task: see {@link TaskRowSchema} `change`. */
export type TaskChange = NonNullable<TaskRow["change"]>;

/** Siblings not shown: `count` subtasks of `parent_id` (null: roots) from index `offset` on. */
export const MoreRowSchema = z.object({
  kind: z.literal("more"),
  depth: z.number().int().nonnegative(),
  parent_id: z.string().nullable(),
  offset: z.number().int().nonnegative(),
  count: z.number().int().positive(),
});
/** See {@link MoreRowSchema}. */
export type MoreRow = z.infer<typeof MoreRowSchema>;

/** A row of the tree: a task or a placeholder for siblings that load on demand. */
export const RowSchema = z.discriminatedUnion("kind", [TaskRowSchema, MoreRowSchema]);
/** See {@link RowSchema}. */
export type Row = z.infer<typeof RowSchema>;

/** A criterion or constraint that applies to the task in progress, with the task that states it. */
export const RuleSchema = z.object({ text: z.string(), from_id: z.string(), from_name: z.string() });
/** See {@link RuleSchema}. */
export type Rule = z.infer<typeof RuleSchema>;

/** Notes of the dashboard's session: the latest ones shown; the rest are counted (getTask has them). */
export const NOTES_SHOWN = 20;

/** A note on a task as the dashboard shows it (docs/teams.md "Context that travels with the work"): text, never markup. */
export const TaskNoteSchema = z.object({ agent: z.string(), at: z.string(), text: z.string() });
/** See {@link TaskNoteSchema}. */
export type TaskNote = z.infer<typeof TaskNoteSchema>;

/** A note with the task it is on: the session's latest notes. */
export const SessionNoteSchema = TaskNoteSchema.extend({ task_id: z.string(), task_name: z.string() });
/** See {@link SessionNoteSchema}. */
export type SessionNote = z.infer<typeof SessionNoteSchema>;

/** The task in progress: its path from the root and what applies to it (own and inherited, root first). */
export const FocusSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  path: z.array(z.object({ id: z.string(), name: z.string() })),
  criteria: z.array(RuleSchema),
  constraints: z.array(RuleSchema),
  /** Criteria and constraints left out to keep one read small (the chat view; see lib/render/budget.ts). */
  rules_cut: z.number().int().positive().optional(),
  /** Whether the description was cut for the same reason. */
  description_cut: z.boolean().optional(),
  /** The agent holding it. */
  claim: HolderSchema.optional(),
  /** Its notes, oldest first (the dashboard only; the plan view shows none). */
  notes: z.array(TaskNoteSchema).optional(),
});
/** See {@link FocusSchema}. */
export type Focus = z.infer<typeof FocusSchema>;

/** A session's history as the store offers it: the current revision and the newest entries. */
export const RecentHistorySchema = z.object({
  revision: RevisionSchema,
  entries: z.array(HistoryEntrySchema),
});
/** See {@link RecentHistorySchema}. */
export type RecentHistory = z.infer<typeof RecentHistorySchema>;

/** A session in a list: name and done/total. */
export const SessionSummarySchema = z.object({
  namespace: z.string(),
  id: z.string(),
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  /** Name of the task in progress, if any. */
  active: z.string().nullable(),
  /** The agents holding a leaf in progress (stale leases among them, judged when drawn), by name. */
  agents: z.array(HolderSchema),
});
/** See {@link SessionSummarySchema}. */
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** One session shown: totals, folded rows, the task in progress and the history (null: none kept). */
export const SessionViewSchema = z.object({
  namespace: z.string(),
  id: z.string(),
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  rows: z.array(RowSchema),
  focus: FocusSchema.nullable(),
  /** The next task when nothing is in progress; null when all is done or something is in progress. */
  next: z.object({ id: z.string(), name: z.string() }).nullable(),
  history: RecentHistorySchema.nullable(),
  /** The leaves held by agents (live or stale), by agent name, the first {@link AGENTS_SHOWN}. */
  agents: z.array(AgentAtWorkSchema),
  /** Held leaves beyond those listed. */
  agents_more: z.number().int().positive().optional(),
  /** The dashboard only: the session's latest notes on any task, newest first, the first {@link NOTES_SHOWN}. */
  notes: z.array(SessionNoteSchema).optional(),
  /** Older notes of the session not listed. */
  notes_more: z.number().int().positive().optional(),
});
/** See {@link SessionViewSchema}. */
export type SessionView = z.infer<typeof SessionViewSchema>;

/** A progress document: the four named fields as lists of text, and when it was last written. */
export const DocumentViewSchema = z.object({
  project: z.string(),
  revision: z.number().int(),
  updated_at: z.string(),
  session_id: z.string().nullable(),
  goal: z.array(z.string()),
  completed: z.array(z.string()),
  next_steps: z.array(z.string()),
  blockers: z.array(z.string()),
});
/** See {@link DocumentViewSchema}. */
export type DocumentView = z.infer<typeof DocumentViewSchema>;

/** A work-info entry, most recently used first in lists. */
export const WorkViewSchema = z.object({
  workId: z.string(),
  at: z.string(),
  description: z.string(),
  /** The summary, cut to a readable length (`summary_cut` says so). */
  summary: z.string(),
  summary_cut: z.boolean(),
  session_id: z.string().nullable(),
});
/** See {@link WorkViewSchema}. */
export type WorkView = z.infer<typeof WorkViewSchema>;

/**
 * A namespace and one window of its sessions, by name: at most `LIMITS.listPage` from index `start`
 * of `total`, the sessions named after `after` (`""`: from the first). `next` and `previous` are the
 * `after` of the neighbouring windows (null: there is none).
 */
export const NamespaceViewSchema = z.object({
  name: z.string(),
  total: z.number().int().nonnegative(),
  start: z.number().int().nonnegative(),
  after: z.string(),
  sessions: z.array(SessionSummarySchema),
  previous: z.string().nullable(),
  next: z.string().nullable(),
});
/** See {@link NamespaceViewSchema}. */
export type NamespaceView = z.infer<typeof NamespaceViewSchema>;

/** Everything the dashboard shows at once (`GET /api/view`). */
export const PageViewSchema = z.object({
  namespaces: z.array(NamespaceViewSchema),
  session: SessionViewSchema.nullable(),
  documents: z.array(DocumentViewSchema),
  works: z.array(WorkViewSchema),
});
/** See {@link PageViewSchema}. */
export type PageView = z.infer<typeof PageViewSchema>;

/** A folded part opened (`GET /api/children`): the rows of one range of subtasks. */
export const ChildrenViewSchema = z.object({ rows: z.array(RowSchema) });
/** See {@link ChildrenViewSchema}. */
export type ChildrenView = z.infer<typeof ChildrenViewSchema>;
