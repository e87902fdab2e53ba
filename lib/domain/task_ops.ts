/**
 * The task tools' rules (docs/requirements.md R1–R3, R6) as operations on a {@link TaskTree}.
 *
 * Each operation checks everything it can before it changes anything, and runs inside the caller's
 * transaction, so a refusal leaves the tree as it was (R6.9). None of them touches I/O.
 */
import { fail } from "./errors.ts";
import { checkTreeShape } from "./limits.ts";
import { taskTable } from "./task_table.ts";
import type {
  CompleteResult,
  CreateTaskInput,
  NewTask,
  StartResult,
  Task,
  TaskView,
  UpdateTaskInput,
} from "./schemas.ts";
import { countTasks, settleAfterRemoval, type TaskTree } from "./task_tree.ts";

/** Creates a task with its subtasks under `parentId` or at root level (R1, R2.1–R2.4, R6). */
export function createTask(
  tree: TaskTree,
  input: CreateTaskInput,
): { task: Task; message: string } {
  const parent = input.parentId === undefined ? undefined : tree.require(input.parentId);
  const siblings = parent?.tasks ?? tree.roots;
  const index = input.insertIndex ?? siblings.length;
  if (!Number.isInteger(index) || index < 0 || index > siblings.length) {
    fail(
      "INVALID_INPUT",
      `insertIndex ${index} is outside 0–${siblings.length} (${
        parent ? `"${parent.id}" has` : "the session has"
      } ${siblings.length} ${parent ? "subtasks" : "root tasks"}). Omit it to append.`,
    );
  }
  checkNewTasks(tree, input, parent);
  const task = buildTask(tree, input);
  const wasActiveLeaf = parent?.status === "in_progress" && parent.tasks.length === 0;
  tree.insert(parent, index, task);
  tree.settleFrom(parent);
  const count = countTasks([input]);
  let message: string;
  if (!parent && task.tasks.length === 0) {
    message =
      `Created root task "${task.name}" (${task.id}). Break it into subtasks: call createTask with parentId "${task.id}" (or pass \`tasks\`), so each step can be started and completed in order.`;
  } else {
    message = `Created "${task.name}" (${task.id})${
      count > 1 ? ` with ${count - 1} subtask${count > 2 ? "s" : ""}` : ""
    }${
      parent ? ` under "${parent.name}" (${parent.id})` : ""
    }. Call startTask with id "${task.id}" to begin.`;
  }
  if (wasActiveLeaf) {
    message += ` "${
      parent!.name
    }" now has subtasks and is no longer in progress itself: call startTask on it to begin its first subtask.`;
  }
  return { task, message };
}

function checkNewTasks(tree: TaskTree, input: NewTask, parent: Task | undefined): void {
  checkTreeShape([input], {
    depthAbove: parent ? tree.pathTo(parent).length : 0,
    parentId: parent?.id,
    siblings: (parent?.tasks ?? tree.roots).length,
    existing: tree.size,
    oneCall: true,
  });
  const seen = new Set<string>();
  const visit = (t: NewTask) => {
    if (t.id !== undefined) {
      if (seen.has(t.id)) {
        fail("DUPLICATE_ID", `Id "${t.id}" appears twice in this call. Ids are unique per session.`);
      }
      if (tree.get(t.id)) {
        fail(
          "DUPLICATE_ID",
          `Id "${t.id}" is already used in this session (by "${
            tree.get(t.id)!.name
          }"). Choose another id or omit it.`,
        );
      }
      seen.add(t.id);
    }
    for (const child of t.tasks ?? []) visit(child);
  };
  visit(input);
}

function buildTask(tree: TaskTree, input: NewTask, reserved = new Set<string>()): Task {
  const collect = (t: NewTask) => {
    if (t.id !== undefined) reserved.add(t.id);
    for (const c of t.tasks ?? []) collect(c);
  };
  collect(input);
  const build = (t: NewTask): Task => {
    const task: Task = {
      id: t.id ?? newTaskId((id) => tree.get(id) !== undefined || reserved.has(id)),
      name: t.name,
      description: t.description ?? "",
      status: "todo",
      tasks: [],
    };
    reserved.add(task.id);
    if (t.completion_criteria?.length) task.completion_criteria = [...t.completion_criteria];
    if (t.constraints?.length) task.constraints = [...t.constraints];
    if (t.parallel) task.parallel = true;
    if (t.blocked_by?.length) task.blocked_by = [...t.blocked_by];
    task.tasks = (t.tasks ?? []).map(build);
    return task;
  };
  return build(input);
}

/** A short random id not `taken` (8 base-36 characters). */
export function newTaskId(taken: (id: string) => boolean): string {
  const bytes = new Uint8Array(8);
  for (;;) {
    crypto.getRandomValues(bytes);
    let id = "";
    for (const b of bytes) id += (b % 36).toString(36);
    if (!taken(id)) return id;
  }
}

/** Refuses when an earlier sibling of `task` or of any ancestor is unfinished (R3.3, R3.10). */
export function checkOrder(tree: TaskTree, task: Task, verb: "start" | "complete"): void {
  for (const node of tree.pathTo(task)) {
    const siblings = tree.siblingsOf(node);
    const pending: Task[] = [];
    for (const sibling of siblings) {
      if (sibling === node) break;
      if (sibling.status !== "done") pending.push(sibling);
    }
    if (pending.length > 0) {
      const names = pending.slice(0, 3).map((t) => `"${t.name}" (${t.id})`).join(", ");
      const more = pending.length > 3 ? ` and ${pending.length - 3} more` : "";
      const whose = node === task ? "" : ` of its ancestor "${node.name}" (${node.id})`;
      fail(
        "EXECUTION_ORDER_VIOLATION",
        `Cannot ${verb} "${task.name}" (${task.id}): earlier sibling${
          pending.length > 1 ? "s" : ""
        } ${names}${more}${whose} ${pending.length > 1 ? "are" : "is"} not done. Finish ${
          pending.length > 1 ? "them" : "it"
        } first (startTask "${pending[0]!.id}").`,
      );
    }
  }
}

/** The first unfinished leaf in tree order, or undefined when everything is done (R3.8, R3.9). */
export function nextTask(tree: TaskTree, from: readonly Task[] = tree.roots): Task | undefined {
  let list = from;
  let found: Task | undefined;
  for (;;) {
    const next = list.find((t) => t.status !== "done");
    if (!next) return found;
    found = next;
    if (next.tasks.length === 0) return next;
    list = next.tasks;
  }
}

/** A task without its subtree, with subtask counts. */
export function viewOf(tree: TaskTree, task: Task): TaskView {
  const view: TaskView = {
    id: task.id,
    name: task.name,
    description: task.description,
    status: task.status,
    subtasks_total: task.tasks.length,
    subtasks_done: task.tasks.filter((t) => t.status === "done").length,
  };
  if (task.resolution !== undefined) view.resolution = task.resolution;
  if (task.completion_criteria) view.completion_criteria = task.completion_criteria;
  if (task.constraints) view.constraints = task.constraints;
  if (task.parallel) view.parallel = true;
  if (task.blocked_by) view.blocked_by = task.blocked_by;
  if (task.claim) view.claim = task.claim;
  const parent = tree.parentOf(task);
  if (parent) view.parent_id = parent.id;
  return view;
}

/**
 * Starts a task (R3.1–R3.6, R3.17, R3.18). On a parent it descends to the deepest first unfinished
 * leaf; that leaf and its ancestors become in progress. Another leaf in progress goes back to todo.
 */
export function startTask(tree: TaskTree, id: string): StartResult {
  const task = tree.require(id);
  if (task.status === "done") {
    fail(
      "INVALID_INPUT",
      `"${task.name}" (${task.id}) is already done. To redo it, call updateTask with status "todo" first.`,
    );
  }
  checkOrder(tree, task, "start");
  const leaf = task.tasks.length === 0 ? task : nextTask(tree, task.tasks)!;
  const notes: string[] = [];
  if (leaf.status === "in_progress") {
    notes.push(`"${leaf.name}" (${leaf.id}) was already in progress.`);
  } else {
    for (const other of tree.activeLeaves()) {
      tree.setAndSettle(other, "todo");
      notes.push(`"${other.name}" (${other.id}) was in progress and is back to todo.`);
    }
    tree.setAndSettle(leaf, "in_progress");
  }
  const path = tree.pathTo(leaf);
  const before = tree.statusBefore;
  const started = path.filter((t) => t.status === "in_progress" && before.has(t.id));
  const criteria = aggregate(path, "completion_criteria");
  const constraints = aggregate(path, "constraints");
  const lines = [
    leaf === task
      ? `Started "${leaf.name}" (${leaf.id}).`
      : `"${task.name}" has subtasks: started its first unfinished leaf "${leaf.name}" (${leaf.id}).`,
    ...notes,
  ];
  if (criteria.length) lines.push("", "Completion criteria:", ...criteria.map((c) => `- ${c}`));
  if (constraints.length) lines.push("", "Constraints:", ...constraints.map((c) => `- ${c}`));
  lines.push("", `When finished, call completeTask with id "${leaf.id}" and a resolution.`);
  return {
    task: viewOf(tree, leaf),
    started_tasks: started.map((t) => ({ id: t.id, name: t.name })),
    message: lines.join("\n"),
    hierarchy_summary: taskTable(tree, { focus: leaf, statusBefore: before }).table,
    aggregated_completion_criteria: criteria,
    aggregated_constraints: constraints,
  };
}

function aggregate(path: Task[], key: "completion_criteria" | "constraints"): string[] {
  const out: string[] = [];
  for (const t of path) for (const s of t[key] ?? []) if (!out.includes(s)) out.push(s);
  return out;
}

/**
 * Completes a leaf with its resolution (R3.7–R3.16): parents whose children are all done complete
 * themselves, and the next task is named. A task with unfinished subtasks is refused (R3.15).
 */
export function completeTask(tree: TaskTree, id: string, resolution: string): CompleteResult {
  const task = tree.require(id);
  const autoCompleted = finish(tree, task, resolution);
  const next = nextTask(tree);
  const lines = [`Completed "${task.name}" (${task.id}).`];
  if (autoCompleted.length) {
    lines.push(
      `All subtasks done, so also completed: ${
        autoCompleted.map((t) => `"${t.name}" (${t.id})`).join(", ")
      }.`,
    );
  }
  lines.push(
    next
      ? `Next task: "${next.name}" (${next.id}). Call startTask with id "${next.id}".`
      : "All tasks are complete.",
  );
  const result: CompleteResult = {
    message: lines.join("\n"),
    progress_summary: taskTable(tree, { focus: next, statusBefore: tree.statusBefore }),
  };
  if (next) result.next_task_id = next.id;
  return result;
}

/** Marks a leaf done with checks; returns the ancestors that completed with it. */
function finish(tree: TaskTree, task: Task, resolution: string | undefined): Task[] {
  if (task.status === "done") {
    fail("INVALID_INPUT", `"${task.name}" (${task.id}) is already done.`);
  }
  if (task.tasks.length > 0) {
    const open = task.tasks.filter((t) => t.status !== "done");
    fail(
      "UNFINISHED_SUBTASKS",
      `Cannot complete "${task.name}" (${task.id}): ${open.length} subtask${
        open.length > 1 ? "s are" : " is"
      } not done: ${
        open.slice(0, 3).map((t) => `"${t.name}" (${t.id})`).join(", ")
      }. A parent completes itself when its last subtask is done.`,
    );
  }
  if (task.status === "todo") checkOrder(tree, task, "complete");
  if (resolution !== undefined) tree.setField(task, "resolution", resolution);
  return tree.setAndSettle(task, "done").filter((t) => t.status === "done");
}

/**
 * Changes the given fields (R2.7). A status change follows the same rules as start and complete;
 * a parent's status follows its children, so it cannot be set to todo directly.
 */
export function updateTask(tree: TaskTree, input: UpdateTaskInput): { task: TaskView; message: string } {
  const task = tree.require(input.id);
  const fields = ["name", "description", "resolution", "completion_criteria", "constraints"] as const;
  const given = fields.filter((f) => input[f] !== undefined);
  if (given.length === 0 && input.status === undefined) {
    fail(
      "INVALID_INPUT",
      "Nothing to update: give at least one of name, description, status, resolution, completion_criteria, constraints.",
    );
  }
  for (const f of given) {
    const value = input[f];
    if (Array.isArray(value) && value.length === 0) tree.setField(task, f, undefined);
    else tree.setField(task, f, value as never);
  }
  const notes: string[] = [];
  if (input.status !== undefined && input.status !== task.status) {
    if (input.status === "in_progress") {
      const started = startTask(tree, task.id);
      notes.push(started.message.split("\n")[0]!);
    } else if (input.status === "done") {
      finish(tree, task, input.resolution);
    } else {
      if (task.tasks.length > 0) {
        fail(
          "INVALID_INPUT",
          `"${task.name}" (${task.id}) has subtasks, so its status follows them. Set a subtask back to todo instead.`,
        );
      }
      tree.setAndSettle(task, "todo");
    }
  }
  return {
    task: viewOf(tree, task),
    message: [`Updated "${task.name}" (${task.id}).`, ...notes].join(" "),
  };
}

/** Deletes a task and its whole subtree (R2.8); the parent's status follows what remains. */
export function deleteTask(tree: TaskTree, id: string): { id: string; deleted: number } {
  const task = tree.require(id);
  const parent = tree.parentOf(task);
  const deleted = tree.remove(task);
  settleAfterRemoval(tree, parent);
  return { id, deleted };
}

/** Views of the tasks at one level: the roots, or the subtasks of `parentId` (R2.6). */
export function listTasks(tree: TaskTree, parentId?: string): TaskView[] {
  const list = parentId === undefined ? tree.roots : tree.require(parentId).tasks;
  return list.map((t) => viewOf(tree, t));
}
