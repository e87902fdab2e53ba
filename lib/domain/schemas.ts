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
export const SessionIdSchema = z.string().min(1).max(LIMITS.sessionIdLength).describe("Task tree name");

/** A task id: unique in its session; no whitespace or `/` (checklist paths use `/`). */
export const TaskIdSchema = z.string().min(1).max(LIMITS.taskIdLength).regex(
  /^[^\s/]+$/,
  "an id has no whitespace and no '/'",
);

/** A task's name. */
export const NameSchema = z.string().trim().min(1).max(LIMITS.nameLength);
/** A task's description. */
export const DescriptionSchema = z.string().max(LIMITS.descriptionLength);
/** What was done to finish a task. */
export const ResolutionSchema = z.string().max(LIMITS.resolutionLength);
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
  get tasks(): z.ZodArray<typeof TaskSchema> {
    return z.array(TaskSchema);
  },
});
/** A stored task; `tasks` holds its subtasks in execution order (R3.10). */
export type Task = z.infer<typeof TaskSchema>;

/** A task without its subtree, with subtask counts: what replies show where the tree is not needed. */
export const TaskViewSchema = z.object({
  id: TaskIdSchema,
  name: z.string(),
  description: z.string(),
  status: TaskStatusSchema,
  resolution: z.string().optional(),
  completion_criteria: z.array(z.string()).optional(),
  constraints: z.array(z.string()).optional(),
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
  get tasks(): z.ZodOptional<z.ZodArray<typeof NewTaskSchema>> {
    return z.array(NewTaskSchema).optional();
  },
});
/** See {@link NewTaskSchema}. */
export type NewTask = z.infer<typeof NewTaskSchema>;
