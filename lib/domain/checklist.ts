/**
 * The original Checklist MCP Server's operations over the same tree: replace the children at a
 * path, mark tasks done, draw the tree as text. The tree's invariants still hold after each.
 */
import { fail } from "./errors.ts";
import { LIMITS } from "./limits.ts";
import type { Task, TaskStatus } from "./schemas.ts";
import { heightOf, type TaskTree } from "./task_tree.ts";

/** One task as the checklist tools send it: `taskId` is the id, `description` the name. */
export interface ChecklistItem {
  taskId: string;
  description: string;
  status?: "TODO" | "DONE" | undefined;
  children?: ChecklistItem[] | undefined;
}

/** The mark drawn before a task of each status. */
export const MARKS: Readonly<Record<TaskStatus, string>> = { done: "✓", todo: "○", in_progress: "◐" };

/** Options of {@link renderTree}. */
export interface RenderTreeOptions {
  /** Most lines drawn; the tasks past them are counted on one closing line. */
  maxLines?: number;
  /** Size of a subtree, itself included; pass `tree.subtreeSize` to count hidden tasks in O(1). */
  sizeOf?: (task: Task) => number;
}

/** Draws tasks as a text tree, one `├── ✓ id: name` line per task, at most `maxLines` lines. */
export function renderTree(roots: readonly Task[], options: RenderTreeOptions = {}): string {
  const maxLines = options.maxLines ?? LIMITS.treeTextLines;
  const sizeOf = options.sizeOf ?? ((task: Task) => countTasks([task]));
  if (roots.length === 0) return "(no tasks)";
  const lines: string[] = [];
  let hidden = 0;
  const draw = (list: readonly Task[], prefix: string) => {
    list.forEach((task, i) => {
      if (lines.length >= maxLines) {
        hidden += sizeOf(task);
        return;
      }
      const last = i === list.length - 1;
      lines.push(`${prefix}${last ? "└── " : "├── "}${MARKS[task.status]} ${task.id}: ${oneLine(task.name)}`);
      draw(task.tasks, prefix + (last ? "    " : "│   "));
    });
  };
  draw(roots, "");
  if (hidden > 0) {
    lines.push(`… ${hidden} more tasks not shown (call get_all_tasks on a smaller session, or getTask)`);
  }
  return lines.join("\n");
}

/** Draws a session's whole tree; hidden tasks past the line cap are counted from the tree's index. */
export function renderSession(tree: TaskTree | undefined): string {
  return tree ? renderTree(tree.roots, { sizeOf: (task) => tree.subtreeSize(task) }) : renderTree([]);
}

/** Number of tasks in `roots` and all their subtasks (for plain task lists such as snapshots). */
export function countTasks(roots: readonly Task[]): number {
  let n = 0;
  for (const task of roots) n += 1 + countTasks(task.tasks);
  return n;
}

function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, " ");
}

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
 * exists keeps its other fields (description, criteria, resolution) and, when `children` is
 * omitted, its subtree; it moves here if it was elsewhere. Tasks no longer listed are deleted.
 * Returns how many tasks the call listed.
 */
export function updateTasks(
  tree: TaskTree,
  path: string,
  items: ChecklistItem[],
): { updated: number; notes: string[] } {
  const parent = resolvePath(tree, path);
  const listed = new Map<string, ChecklistItem>();
  const visit = (list: ChecklistItem[]) => {
    if (list.length > LIMITS.childrenPerTask) {
      fail(
        "LIMIT_EXCEEDED",
        `A task holds at most ${LIMITS.childrenPerTask} direct subtasks; this call lists ${list.length} in one place.`,
      );
    }
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
  if (listed.size > LIMITS.tasksPerCall) {
    fail(
      "LIMIT_EXCEEDED",
      `One call lists at most ${LIMITS.tasksPerCall} tasks; this one lists ${listed.size}. Update deeper levels with their own path.`,
    );
  }
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
    if (item.status === "DONE") task.status = "done";
    if (item.status === "TODO" && task.status === "done") task.status = "todo";
    if (item.children) {
      task.tasks = item.children.map(build);
    } else if (existing) {
      for (const kept of walkTasks(existing.tasks)) {
        if (listed.has(kept.id)) {
          fail(
            "INVALID_INPUT",
            `taskId "${kept.id}" is listed, but it is also inside "${existing.id}", whose children this call keeps. Give "${existing.id}" its children explicitly.`,
          );
        }
      }
      task.tasks = existing.tasks;
    }
    if (task.tasks.length > 0) {
      const derived = task.tasks.every((t) => t.status === "done")
        ? "done"
        : task.tasks.some((t) => t.status === "in_progress")
        ? "in_progress"
        : "todo";
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
    return task;
  };
  const built = items.map(build);
  const added = countTasks(built);
  const height = built.reduce((h, t) => Math.max(h, heightOf(t)), 0);
  if (ancestors.length + height > LIMITS.depth) {
    fail(
      "LIMIT_EXCEEDED",
      `Tasks nest at most ${LIMITS.depth} levels deep; this update would reach ${ancestors.length + height}.`,
    );
  }
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
  if (tree.size + added > LIMITS.tasksPerSession) {
    fail(
      "LIMIT_EXCEEDED",
      `A session holds at most ${LIMITS.tasksPerSession} tasks; this update would make ${tree.size + added}.`,
    );
  }
  built.forEach((task, i) => tree.insert(parent, i, task));
  settleAfterRemoval(tree, parent);
  // The old parents of moved tasks follow what they have left (they may have become leaves).
  for (const from of leftBehind) if (tree.get(from.id) === from) settleAfterRemoval(tree, from);
  for (const leaf of tree.activeLeaves().slice(1)) {
    tree.setStatus(leaf, "todo");
    tree.settleFrom(tree.parentOf(leaf));
  }
  return { updated: listed.size, notes };
}

/** Re-derives `parent` and its ancestors after subtasks left it; one left without any waits as todo. */
function settleAfterRemoval(tree: TaskTree, parent: Task | undefined): void {
  if (parent && parent.tasks.length === 0) {
    // Now a leaf: it was in progress only through its subtasks, so it waits to be started.
    if (parent.status === "in_progress") tree.setStatus(parent, "todo");
    tree.settleFrom(tree.parentOf(parent));
  } else {
    tree.settleFrom(parent);
  }
}

function* walkTasks(list: readonly Task[]): Generator<Task> {
  for (const task of list) {
    yield task;
    yield* walkTasks(task.tasks);
  }
}

/** The outcome for one id of {@link markDone}. */
export interface MarkFailure {
  taskId: string;
  code: "NOT_FOUND" | "UNFINISHED_SUBTASKS";
  reason: string;
}

/**
 * Marks each id done in the given order (checklist `mark_task_as_done`); an id that cannot be
 * marked is reported with its reason and changes nothing. A parent whose subtasks are all done is
 * already done; one with unfinished subtasks fails.
 */
export function markDone(tree: TaskTree, taskIds: string[]): { marked: string[]; failed: MarkFailure[] } {
  const marked: string[] = [];
  const failed: MarkFailure[] = [];
  for (const taskId of taskIds) {
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
    if (task.status !== "done") {
      tree.setStatus(task, "done");
      tree.settleFrom(tree.parentOf(task));
    }
    marked.push(taskId);
  }
  return { marked, failed };
}
