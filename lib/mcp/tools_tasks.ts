/** Tool group `tasks`: the hierarchical task tree (docs/requirements.md R1–R6), thin over `domain/task_ops.ts`. */
import { z } from "zod";
import { fail } from "../domain/errors.ts";
import { gitSummary, recordGit } from "../domain/git_record.ts";
import { gitOf } from "./git_of.ts";
import { RevisionSchema } from "../domain/history_entry.ts";
import {
  AgentSchema,
  ClaimResultSchema,
  CompleteResultSchema,
  CreateTaskInputSchema,
  DescriptionSchema,
  LeaseSecondsSchema,
  NewTaskSchema,
  PathsSchema,
  RequiredResolutionSchema,
  SessionIdSchema,
  StartResultSchema,
  StatementListSchema,
  type Task,
  TaskIdSchema,
  TaskSchema,
  TaskViewSchema,
  UpdateTaskInputSchema,
} from "../domain/schemas.ts";
import {
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  listTasks,
  startTask,
  updateTask,
} from "../domain/task_ops.ts";
import { isLive } from "../domain/team.ts";
import { MARKS, renderTree } from "../domain/tree_text.ts";
import { actorOf, defineTool, type ToolDef } from "./tool.ts";
import { checkPathsTool } from "./tool_check_paths.ts";
import { DEFAULT_SESSION } from "../domain/names.ts";

const sessionId = SessionIdSchema.default(DEFAULT_SESSION);
const taskId = TaskIdSchema;
const agent = AgentSchema.optional();
const leaseSeconds = LeaseSecondsSchema.optional();

const createTaskTool = defineTool({
  name: "createTask",
  group: "tasks",
  title: "Create task",
  description:
    "Create a task, with nested subtasks (all or nothing); subtasks inherit criteria and constraints.",
  input: CreateTaskInputSchema.extend({
    sessionId,
    id: TaskIdSchema.optional().describe("Default: generated"),
    description: DescriptionSchema.optional().describe("What to do"),
    completion_criteria: StatementListSchema.optional().describe("When it is done; inherited"),
    constraints: StatementListSchema.optional().describe("Rules to keep; inherited"),
    paths: PathsSchema.optional().describe("Repo paths/globs it changes; claims reserve them"),
    tasks: z.array(NewTaskSchema).optional().describe("Subtasks in order, same shape"),
    parentId: CreateTaskInputSchema.shape.parentId.describe("Omit for a root task"),
    insertIndex: CreateTaskInputSchema.shape.insertIndex.describe("Default: last"),
  }),
  output: z.object({ task: TaskSchema, message: z.string(), revision: RevisionSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run({ sessionId, ...input }, { space }) {
    const { result: { task, message, drawn }, revision } = await space.updateTree(sessionId, (tree) => {
      const created = createTask(tree, input);
      return { ...created, drawn: renderTree([created.task], { lookup: (id) => tree.get(id) }) };
    }, { tool: "createTask" });
    return {
      text: `${message}\n\n${drawn}`,
      structured: { task, message, revision },
      effect: { added: subtreeIds(task) },
    };
  },
});

const getTaskTool = defineTool({
  name: "getTask",
  group: "tasks",
  title: "Get task",
  description: "Get a task with its whole subtree.",
  input: z.object({ sessionId, id: taskId }),
  output: z.object({ task: TaskSchema }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run({ sessionId, id }, { space, now }) {
    const at = now();
    return await space.readTree(sessionId, (tree) => {
      const task = tree?.get(id) ??
        fail(
          "NOT_FOUND",
          `No task with id "${id}" in session "${sessionId}". Call listTasks to see the ids.`,
        );
      const parent = tree!.parentOf(task);
      const lines = [
        `${task.name} (${task.id}) — ${task.status}${parent ? `, subtask of ${parent.id}` : ""}`,
        ...(task.description ? [task.description] : []),
        ...(task.resolution ? [`Resolution: ${task.resolution}`] : []),
        ...(task.completion_criteria ?? []).map((c) => `Criterion: ${c}`),
        ...(task.constraints ?? []).map((c) => `Constraint: ${c}`),
        ...(task.parallel ? ["Subtasks may run in parallel."] : []),
        ...(task.blocked_by ? [`Blocked by: ${task.blocked_by.join(", ")}`] : []),
        ...(task.paths ? [`Paths: ${task.paths.join(", ")}`] : []),
        ...(task.claim && task.status === "in_progress"
          ? [
            `Held by ${task.claim.agent} until ${task.claim.expires_at}${
              isLive(task.claim, at) ? "" : " (expired)"
            }`,
          ]
          : []),
        ...(task.git ? [`Work: ${gitSummary(task.git)} (seen by ${task.git.agent} at ${task.git.at})`] : []),
        ...notesText(task),
        "",
        renderTree([task], { lookup: (ref) => tree!.get(ref), now: at }),
      ];
      return { text: lines.join("\n"), structured: { task } };
    });
  },
});

const listTasksTool = defineTool({
  name: "listTasks",
  group: "tasks",
  title: "List tasks",
  description: "List one level: the root tasks, or the subtasks of parentId.",
  input: z.object({ sessionId, parentId: TaskIdSchema.optional() }),
  output: z.object({ tasks: z.array(TaskViewSchema) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run({ sessionId, parentId }, { space }) {
    const tasks = await space.readTree(sessionId, (tree) => {
      if (!tree) {
        if (parentId !== undefined) fail("NOT_FOUND", `Session "${sessionId}" has no task "${parentId}".`);
        return [];
      }
      return listTasks(tree, parentId);
    });
    const text = tasks.length === 0
      ? "No tasks at this level. Create one with createTask."
      : tasks.map((t) =>
        `- ${MARKS[t.status]} ${t.id}: ${t.name}${
          t.subtasks_total ? ` (${t.subtasks_done}/${t.subtasks_total} subtasks done)` : ""
        }${t.claim && t.status === "in_progress" ? ` @${t.claim.agent}` : ""}${
          t.blocked_by ? ` (blocked_by: ${t.blocked_by.join(", ")})` : ""
        }${t.paths ? ` (paths: ${t.paths.join(", ")})` : ""}${
          t.notes_count ? ` (${t.notes_count} note${t.notes_count > 1 ? "s" : ""})` : ""
        }`
      ).join("\n");
    return { text, structured: { tasks } };
  },
});

const updateTaskTool = defineTool({
  name: "updateTask",
  group: "tasks",
  title: "Update task",
  description:
    "Change a task's fields, or append a note by agent (last 20 kept). Status follows start/complete rules, a parent's its subtasks. An empty list clears a list field.",
  input: z.object({ sessionId, ...UpdateTaskInputSchema.shape, id: taskId, agent }),
  output: z.object({ task: TaskViewSchema, message: z.string(), revision: RevisionSchema }),
  // A note appends: calling it twice adds two.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run({ sessionId, agent, ...input }, ctx) {
    const records = input.note !== undefined || input.status === "in_progress" || input.status === "done";
    const git = records ? await gitOf(ctx, agent) : undefined;
    const { result, revision } = await ctx.space.updateTree(sessionId, (tree) => {
      if (tree.size === 0) fail("NOT_FOUND", `Session "${sessionId}" has no task "${input.id}".`);
      const actor = actorOf(ctx, agent);
      const updated = updateTask(tree, input, actor);
      recordGit(tree, tree.get(input.id), actor, git);
      return updated;
    }, { tool: "updateTask" });
    return {
      text: result.message,
      structured: { ...result, revision },
      effect: { changed: [result.task.id] },
    };
  },
});

const deleteTaskTool = defineTool({
  name: "deleteTask",
  group: "tasks",
  title: "Delete task",
  description: "Delete a task and its whole subtree.",
  input: z.object({ sessionId, id: taskId }),
  output: z.object({
    id: z.string(),
    deleted: z.number().int().describe("Tasks removed"),
    freed: z.array(z.string()).optional(),
    revision: RevisionSchema,
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run({ sessionId, id }, ctx) {
    const { result, revision } = await ctx.space.updateTree(
      sessionId,
      (tree) => deleteTask(tree, id, actorOf(ctx)),
      { tool: "deleteTask" },
    );
    const more = result.deleted - 1;
    const freed = result.freed ? ` No longer blocked by it: ${result.freed.join(", ")}.` : "";
    return {
      text: `Deleted task ${id}${more > 0 ? ` and its ${more} subtask${more > 1 ? "s" : ""}` : ""}.${freed}`,
      structured: { ...result, revision },
      effect: { removed: [id] },
    };
  },
});

const startTaskTool = defineTool({
  name: "startTask",
  group: "tasks",
  title: "Start task",
  description:
    "Start a task (a parent: its first ready leaf); earlier siblings must be done unless the parent is parallel. Returns inherited criteria, constraints, progress and context.",
  input: z.object({ sessionId, id: taskId, agent, lease_seconds: leaseSeconds }),
  output: StartResultSchema.extend({ revision: RevisionSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run({ sessionId, id, agent, lease_seconds }, ctx) {
    const git = await gitOf(ctx, agent);
    const { result, revision } = await ctx.space.updateTree(sessionId, (tree) => {
      if (tree.size === 0) {
        fail("NOT_FOUND", `Session "${sessionId}" has no task "${id}". Create tasks with createTask first.`);
      }
      const actor = actorOf(ctx, agent, lease_seconds);
      const started = startTask(tree, id, actor);
      recordGit(tree, tree.get(started.task.id), actor, git);
      return started;
    }, { tool: "startTask" });
    return {
      text: `${result.message}\n\n${result.hierarchy_summary}`,
      structured: { ...result, revision },
      effect: { started: result.started_tasks.map((t) => t.id), focus: result.task.id },
    };
  },
});

const completeTaskTool = defineTool({
  name: "completeTask",
  group: "tasks",
  title: "Complete task",
  description:
    "Complete a task (its subtasks done) with a resolution; parents complete themselves. Names the next task, shows progress.",
  input: z.object({
    sessionId,
    id: taskId,
    resolution: RequiredResolutionSchema.describe("What was done, briefly"),
    agent,
  }),
  output: CompleteResultSchema.extend({ revision: RevisionSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run({ sessionId, id, resolution, agent }, ctx) {
    const git = await gitOf(ctx, agent);
    const { result, revision } = await ctx.space.updateTree(sessionId, (tree) => {
      if (tree.size === 0) fail("NOT_FOUND", `Session "${sessionId}" has no task "${id}".`);
      const actor = actorOf(ctx, agent);
      const completed = completeTask(tree, id, resolution, actor);
      recordGit(tree, tree.get(id), actor, git);
      return completed;
    }, { tool: "completeTask" });
    return {
      text: `${result.message}\n\n${result.progress_summary.table}`,
      structured: { ...result, revision },
      effect: { completed: [id] },
    };
  },
});

const claimTaskTool = defineTool({
  name: "claimTask",
  group: "tasks",
  title: "Claim task",
  description:
    "Team work: start the first ready leaf under id for agent, leased (default 1800 s), or renew the one it holds. None ready: task null.",
  input: z.object({
    sessionId,
    agent: AgentSchema,
    id: TaskIdSchema.optional(),
    lease_seconds: leaseSeconds,
  }),
  output: ClaimResultSchema.extend({ revision: RevisionSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run({ sessionId, agent, id, lease_seconds }, ctx) {
    const git = await gitOf(ctx, agent);
    const { result, revision } = await ctx.space.updateTree(sessionId, (tree) => {
      if (tree.size === 0) {
        fail("NOT_FOUND", `Session "${sessionId}" has no tasks. A lead creates them with createTask first.`);
      }
      const actor = { ...actorOf(ctx, agent, lease_seconds), agent };
      const claimed = claimTask(tree, actor, id);
      // Nothing taken (nothing ready): the record has no leaf to go on and is dropped.
      recordGit(tree, claimed.task ? tree.get(claimed.task.id) : undefined, actor, git);
      return claimed;
    }, { tool: "claimTask" });
    if (result.task === null) {
      return { text: result.message, structured: { ...result, revision }, effect: {} };
    }
    return {
      text: `${result.message}\n\n${result.hierarchy_summary}`,
      structured: { ...result, revision },
      effect: { started: (result.started_tasks ?? []).map((t) => t.id), focus: result.task.id },
    };
  },
});

/** A task's notes as getTask's text shows them, oldest first: `- 2026-… w1: text`. */
function notesText(task: Task): string[] {
  if (!task.notes?.length) return [];
  const older = task.notes_dropped ? ` (${task.notes_dropped} older dropped)` : "";
  return [`Notes${older}:`, ...task.notes.map((note) => `- ${note.at} ${note.agent}: ${note.text}`)];
}

/** The ids of `task` and of every task under it, in tree order. */
function subtreeIds(task: { id: string; tasks?: readonly { id: string; tasks?: unknown }[] }): string[] {
  return [task.id, ...(task.tasks ?? []).flatMap((sub) => subtreeIds(sub as typeof task))];
}

/** The task tools, in listing order. */
export const TASK_TOOLS: ToolDef[] = [
  createTaskTool,
  getTaskTool,
  listTasksTool,
  updateTaskTool,
  deleteTaskTool,
  startTaskTool,
  completeTaskTool,
  claimTaskTool,
  checkPathsTool,
] as unknown as ToolDef[];
