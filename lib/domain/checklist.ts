/**
 * The original Checklist MCP Server's operations over the same tree: replace the children at a
 * path, mark tasks done (the text drawing is `tree_text.ts`). Statuses, settling and walks are the
 * tree's own (`task_tree.ts`); the tree's invariants still hold after each operation.
 */
import { z } from "zod";
import { fail } from "./errors.ts";
import { checkPerCall, checkPerSession, checkTreeShape, LIMITS } from "./limits.ts";
import { NameSchema, type Task, TaskIdSchema } from "./schemas.ts";
import { derivedStatus, settleAfterRemoval, subtree, type TaskTree } from "./task_tree.ts";
import { extraActiveLeaves } from "./invariants.ts";
import { checkReservationsKept, liveReservations } from "./reservations.ts";
import {
  type Actor,
  ANONYMOUS,
  checkBlockedBy,
  checkClaimsKept,
  checkReopened,
  claimAgainst,
  claimedMessage,
  othersClaims,
} from "./team.ts";

/** One task as the checklist tools send it: `taskId` is the id, `description` the name. */
export const ChecklistItemSchema = z.object({
  taskId: TaskIdSchema.describe("Task id"),
  description: NameSchema.describe("Task text"),
  status: z.enum(["TODO", "DONE", "todo", "done"]).transform((s) => s.toUpperCase() as "TODO" | "DONE")
    .optional().describe("Default: kept, TODO if new"),
  get children(): z.ZodOptional<z.ZodArray<typeof ChecklistItemSchema>> {
    return z.array(ChecklistItemSchema).optional().describe("Subtasks; omit to keep an existing task's");
  },
});
/** See {@link ChecklistItemSchema}; `status` is upper case once parsed. */
export type ChecklistItem = z.output<typeof ChecklistItemSchema>;

/** Why one id of {@link markDone} was not marked. */
export const MarkFailureSchema = z.object({
  taskId: z.string(),
  code: z.enum(["INVALID_INPUT", "NOT_FOUND", "UNFINISHED_SUBTASKS", "CLAIMED"]),
  reason: z.string(),
});
/** See {@link MarkFailureSchema}. */
export type MarkFailure = z.infer<typeof MarkFailureSchema>;

/** The parent a checklist `path` names: undefined for `/`, else the task at `/a/b/`. */
export function resolvePath(tree: TaskTree, path: string): Task | undefined {
  const segments = path.split("/").filter((s) => s.length > 0);
  let parent: Task | undefined;
  for (const id of segments) {
    const task = tree.get(id);
    if (!task || tree.parentOf(task) !== parent) {
      fail(
        "NOT_FOUND",
        `Path "${path}" does not exist: "${id}" is not ${
          parent ? `a subtask of "${parent.id}"` : "a root task"
        }. Call get_all_tasks to see the tree.`,
      );
    }
    parent = task;
  }
  return parent;
}

/**
 * Replaces the children at `path` with `items` (checklist `update_tasks`). A listed `taskId` that
 * exists keeps its other fields (description, criteria, resolution, notes) and, when `children` is
 * omitted, its subtree; it moves here if it was elsewhere. Tasks no longer listed are deleted.
 * Returns how many tasks the call listed. A leaf another agent holds must come out of it as it was
 * (`CLAIMED` otherwise), and each agent keeps at most one leaf in progress. A move that would make two
 * live claims reserve overlapping paths is `RESERVED`.
 */
export function updateTasks(
  tree: TaskTree,
  path: string,
  items: ChecklistItem[],
  actor: Actor = ANONYMOUS,
): { updated: number; notes: string[] } {
  const held = othersClaims(tree, actor);
  const reserved = liveReservations(tree, { now: actor.now });
  const parent = resolvePath(tree, path);
  const listed = new Map<string, ChecklistItem>();
  const visit = (list: ChecklistItem[]) => {
    for (const item of list) {
      if (listed.has(item.taskId)) {
        fail(
          "DUPLICATE_ID",
          `taskId "${item.taskId}" appears twice in this call; ids are unique per session.`,
        );
      }
      listed.set(item.taskId, item);
      if (item.children) visit(item.children);
    }
  };
  visit(items);
  checkPerCall(listed.size);
  const ancestors = parent ? tree.pathTo(parent) : [];
  for (const a of ancestors) {
    if (listed.has(a.id)) {
      fail(
        "INVALID_INPUT",
        `taskId "${a.id}" is on the path "${path}" itself; a task cannot be placed under itself.`,
      );
    }
  }
  const notes: string[] = [];
  const build = (item: ChecklistItem): Task => {
    const existing = tree.get(item.taskId);
    const task: Task = {
      id: item.taskId,
      name: item.description,
      description: existing?.description ?? "",
      status: existing?.status ?? "todo",
      tasks: [],
    };
    if (existing?.resolution !== undefined) task.resolution = existing.resolution;
    if (existing?.completion_criteria) task.completion_criteria = existing.completion_criteria;
    if (existing?.constraints) task.constraints = existing.constraints;
    if (existing?.parallel) task.parallel = existing.parallel;
    if (existing?.blocked_by) task.blocked_by = existing.blocked_by;
    if (existing?.paths) task.paths = existing.paths;
    if (existing?.notes) task.notes = existing.notes;
    if (existing?.notes_dropped) task.notes_dropped = existing.notes_dropped;
    if (existing?.git) task.git = existing.git;
    if (item.status === "DONE") task.status = "done";
    if (item.status === "TODO" && task.status === "done") task.status = "todo";
    if (item.children) {
      task.tasks = item.children.map(build);
    } else if (existing) {
      for (const { task: kept } of subtree(existing)) {
        if (kept !== existing && listed.has(kept.id)) {
          fail(
            "INVALID_INPUT",
            `taskId "${kept.id}" is listed, but it is also inside "${existing.id}", whose children this call keeps. Give "${existing.id}" its children explicitly.`,
          );
        }
      }
      task.tasks = existing.tasks;
    }
    if (task.tasks.length > 0) {
      const derived = derivedStatus(task);
      if (item.status === "DONE" && derived !== "done") {
        fail(
          "UNFINISHED_SUBTASKS",
          `taskId "${task.id}" is marked DONE but its subtasks are not all done. Mark them DONE too, or leave it TODO.`,
        );
      }
      if (item.status === "TODO" && derived === "done") {
        notes.push(`"${task.id}" is done because all its subtasks are.`);
      }
      task.status = derived;
    } else if (task.status === "in_progress" && existing && existing.tasks.length > 0) {
      task.status = "todo";
    }
    // A claim stays with a leaf that stays in progress (see TaskTree.setStatus).
    if (existing?.claim && task.status === "in_progress" && task.tasks.length === 0) {
      task.claim = existing.claim;
    }
    return task;
  };
  const built = items.map(build);
  const added = checkTreeShape(built, { depthAbove: ancestors.length, parentId: parent?.id });
  // Remove what is replaced, and listed tasks that stand elsewhere (they move here).
  for (const old of [...(parent?.tasks ?? tree.roots)]) tree.remove(old);
  const leftBehind: Task[] = [];
  for (const id of listed.keys()) {
    const elsewhere = tree.get(id);
    if (!elsewhere) continue;
    const from = tree.parentOf(elsewhere);
    if (from) leftBehind.push(from);
    tree.remove(elsewhere);
  }
  checkPerSession(tree.size + added);
  built.forEach((task, i) => tree.insert(parent, i, task));
  settleAfterRemoval(tree, parent);
  // The old parents of moved tasks follow what they have left (they may have become leaves).
  for (const from of leftBehind) if (tree.get(from.id) === from) settleAfterRemoval(tree, from);
  for (const leaf of extraActiveLeaves(tree)) {
    if (leaf.claim) tree.setField(leaf, "claim", undefined);
    tree.setAndSettle(leaf, "todo");
  }
  checkClaimsKept(tree, held, "replace");
  // A move may change the paths a held leaf inherits.
  checkReservationsKept(tree, reserved, { now: actor.now, what: `replace the tasks at "${path}"` });
  checkReopened(tree);
  // Tasks replaced away leave every blocked_by (as deleteTask does); moves can turn a dependency
  // into an ancestor link or a cycle, so the session's links are checked again.
  for (const blocked of tree.blockedTasks()) {
    const kept = blocked.blocked_by!.filter((id) => tree.get(id) !== undefined);
    if (kept.length < blocked.blocked_by!.length) {
      tree.setField(blocked, "blocked_by", kept.length > 0 ? kept : undefined);
    }
  }
  for (const blocked of tree.blockedTasks()) checkBlockedBy(tree, blocked);
  return { updated: listed.size, notes };
}

/**
 * Marks each id done in the given order (checklist `mark_task_as_done`); an id that cannot be
 * marked (malformed, unknown, or a parent with unfinished subtasks) is reported with its reason
 * and changes nothing, and the others are still marked. A parent whose subtasks are all done is
 * already done. A leaf another agent holds is not marked (`CLAIMED`).
 */
export function markDone(
  tree: TaskTree,
  taskIds: string[],
  actor: Actor = ANONYMOUS,
): { marked: string[]; failed: MarkFailure[] } {
  const marked: string[] = [];
  const failed: MarkFailure[] = [];
  for (const taskId of taskIds) {
    const malformed = TaskIdSchema.safeParse(taskId).error?.issues[0];
    if (malformed) {
      const why = malformed.code === "too_big"
        ? `an id has at most ${LIMITS.taskIdLength} characters`
        : taskId === ""
        ? "an id is not empty"
        : malformed.message;
      failed.push({ taskId, code: "INVALID_INPUT", reason: `not a task id (${why})` });
      continue;
    }
    const task = tree.get(taskId);
    if (!task) {
      failed.push({ taskId, code: "NOT_FOUND", reason: `no task "${taskId}" in this session` });
      continue;
    }
    const open = task.tasks.filter((t) => t.status !== "done");
    if (open.length > 0) {
      failed.push({
        taskId,
        code: "UNFINISHED_SUBTASKS",
        reason: `${open.length} subtask${open.length > 1 ? "s" : ""} not done (${
          open.slice(0, 3).map((t) => t.id).join(", ")
        }); mark them first`,
      });
      continue;
    }
    const claim = claimAgainst(task, actor);
    if (claim) {
      failed.push({ taskId, code: "CLAIMED", reason: claimedMessage(task, task, claim, "mark") });
      continue;
    }
    if (task.status !== "done") {
      if (task.claim) tree.setField(task, "claim", undefined);
      tree.setAndSettle(task, "done");
    }
    marked.push(taskId);
  }
  return { marked, failed };
}
