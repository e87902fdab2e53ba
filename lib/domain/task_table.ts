/**
 * The task table shared by startTask and completeTask (R3.6, R3.11–R3.14): overall totals and a
 * Markdown table of the tasks (the tools' output calls it `progress_summary`; not the progress document).
 *
 * One row per task in tree order. A tree larger than the row cap is shown around the active path
 * (the focus task, the tasks this call changed, their ancestors and nearby siblings); every hidden
 * run of tasks is a "... N more" row counting them with their subtasks, so the rows shown and the
 * counts add up to the whole tree and nothing is cut silently. Totals come from the tree's counters.
 * The table is plain ASCII apart from task names: it goes out twice per reply (text and structured),
 * and one-byte strings serialize and encode several times faster.
 */
import { LIMITS } from "./limits.ts";
import type { Task, TaskStatus, TaskTable } from "./schemas.ts";
import type { TaskTree } from "./task_tree.ts";

/** Options of {@link taskTable}. */
export interface TaskTableOptions {
  /** The task the reader should look at next (started leaf or next task). */
  focus?: Task | undefined;
  /** Status of each task before this call, for the "Changed" column. */
  statusBefore?: ReadonlyMap<string, TaskStatus>;
  /** Maximum number of task rows. */
  rowCap?: number;
}

const MAX_ANCHORS = 12;

/** Totals and the table for the whole session. */
export function taskTable(tree: TaskTree, options: TaskTableOptions = {}): TaskTable {
  const counts = tree.counts;
  const total = tree.size;
  const percent = total === 0 ? 0 : Math.round((counts.done / total) * 1000) / 10;
  return {
    total_tasks: total,
    completed_tasks: counts.done,
    in_progress_tasks: counts.in_progress,
    todo_tasks: counts.todo,
    completion_percentage: percent,
    table: renderTable(tree, options, percent),
  };
}

function renderTable(tree: TaskTree, options: TaskTableOptions, percent: number): string {
  const cap = options.rowCap ?? LIMITS.tableRows;
  const before = options.statusBefore ?? new Map<string, TaskStatus>();
  if (tree.size === 0) return "No tasks in this session.";
  // The Agent column appears once an agent holds a leaf: a session without agents looks as before.
  const team = tree.activeLeaves().some((leaf) => leaf.claim !== undefined);
  // One string built by appending (a rope, flattened once when the reply is serialized): cheaper
  // than an array of lines joined, on every startTask and completeTask.
  let text = team
    ? "| Task | ID | Parent | Status | Agent | Changed | Subtasks | Progress |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    : "| Task | ID | Parent | Status | Changed | Subtasks | Progress |\n| --- | --- | --- | --- | --- | --- | --- |";
  const hiddenEnd = team ? " | | | | | |" : " | | | | |";
  // Per-parent summary lines (R3.12) for the parents on the active paths; every other parent's
  // progress is in its row. With no active path, every parent shown gets a line.
  const anchors = anchorsOf(tree, options, before);
  const onPath = new Set<Task>();
  for (const anchor of anchors) for (let p = tree.parentOf(anchor); p; p = tree.parentOf(p)) onPath.add(p);
  const pathParents: { task: Task; done: number }[] = [];
  const otherParents: { task: Task; done: number }[] = [];
  let shown = 0;
  const emit = (task: Task, depth: number, parent: Task | undefined) => {
    shown++;
    const done = task.tasks.length > 0 ? tree.doneChildren(task) : 0;
    text += "\n" + formatRow(tree, task, depth, parent, done, before.get(task.id), team);
    if (task.tasks.length > 0) (onPath.has(task) ? pathParents : otherParents).push({ task, done });
  };
  const hiddenRow = (count: number, depth: number, parent: Task | undefined) => {
    text += "\n| " + indent(depth) + "... " + count + " more | | " + (parent?.id ?? "-") + hiddenEnd;
  };
  if (tree.size <= cap) {
    for (const { task, depth, parent } of tree.walk()) emit(task, depth, parent);
  } else {
    // Only lists holding a chosen task are walked, from one chosen position to the next: the cost
    // follows the rows shown, never the size of the tree or of a list. Hidden tasks are counted
    // with their subtrees: a run of hidden leaves by subtraction of positions, and the longest run
    // of a list (the 90 hidden roots of a 100,000-task session) from the list's total, unvisited.
    const chosen = chooseRows(tree, anchors, cap);
    const sizeOf = (task: Task) => task.tasks.length === 0 ? 1 : tree.subtreeSize(task);
    const visit = (list: Task[], depth: number, parent: Task | undefined) => {
      const positions = chosen.get(parent) ?? [];
      const gaps: { from: number; to: number; hidden: number }[] = [];
      let next = 0;
      for (const at of positions) {
        if (at > next) gaps.push({ from: next, to: at, hidden: at - next });
        next = at + 1;
      }
      if (list.length > next) gaps.push({ from: next, to: list.length, hidden: list.length - next });
      const total = parent ? tree.subtreeSize(parent) - 1 : tree.size;
      if (total !== list.length && gaps.length > 0) {
        let longest = gaps[0]!;
        for (const gap of gaps) if (gap.to - gap.from > longest.to - longest.from) longest = gap;
        let known = 0;
        for (const at of positions) known += sizeOf(list[at]!);
        for (const gap of gaps) {
          if (gap === longest) continue;
          gap.hidden = 0;
          for (let i = gap.from; i < gap.to; i++) gap.hidden += sizeOf(list[i]!);
          known += gap.hidden;
        }
        longest.hidden = total - known;
      }
      let gap = 0;
      for (const at of positions) {
        if (gaps[gap]?.to === at) hiddenRow(gaps[gap++]!.hidden, depth, parent);
        const task = list[at]!;
        emit(task, depth, parent);
        if (task.tasks.length === 0) continue;
        if (chosen.has(task)) visit(task.tasks, depth + 1, task);
        else hiddenRow(tree.subtreeSize(task) - 1, depth + 1, task);
      }
      if (gap < gaps.length) hiddenRow(gaps[gap]!.hidden, depth, parent);
    };
    visit(tree.roots, 0, undefined);
  }
  text += "\n";
  if (shown < tree.size) {
    text +=
      `\nShowing ${shown} of ${tree.size} tasks around the active path; a row "... N more" counts the N tasks hidden there (subtasks included). Use getTask or listTasks for the rest.\n`;
  }
  const summary = pathParents.length > 0 ? pathParents : otherParents;
  if (summary.length > 0) {
    text += "\nParent progress:";
    for (const { task, done } of summary) text += "\n" + parentLine(task, done);
    text += "\n";
  }
  const c = tree.counts;
  return text +
    `\nOverall: ${tree.size} tasks, ${c.done} done, ${c.in_progress} in progress, ${c.todo} todo (${percent}% complete)`;
}

function parentLine(task: Task, done: number): string {
  const total = task.tasks.length;
  return `- ${cell(task.name)} (${task.id}): ${done}/${total} subtasks done, ${total - done} remaining (${
    pct(done, total)
  }%)`;
}

function anchorsOf(
  tree: TaskTree,
  options: TaskTableOptions,
  before: ReadonlyMap<string, TaskStatus>,
): Task[] {
  const anchors: Task[] = [];
  const add = (task: Task | undefined) => {
    if (task && anchors.length < MAX_ANCHORS && !anchors.includes(task)) anchors.push(task);
  };
  add(options.focus);
  for (const [id, status] of before) {
    const task = tree.get(id);
    if (task && task.status !== status) add(task);
  }
  for (const leaf of tree.activeLeaves()) add(leaf);
  if (anchors.length === 0) add(tree.roots[0]);
  return anchors;
}

/**
 * The tasks to show, at most `cap`, each with its ancestors: the anchors' paths first (the focus
 * before the others), then their siblings nearest first, then the rest breadth first from the top.
 * Returned as the positions chosen in each list, in order, by the list's parent (undefined: the roots).
 */
function chooseRows(tree: TaskTree, anchors: Task[], cap: number): Map<Task | undefined, number[]> {
  const chosen = new Set<Task>();
  const lists = new Map<Task | undefined, number[]>();
  const take = (list: Task[], at: number, parent: Task | undefined) => {
    const task = list[at]!;
    if (chosen.has(task)) return true;
    if (chosen.size >= cap) return false;
    chosen.add(task);
    const positions = lists.get(parent);
    if (positions) positions.push(at);
    else lists.set(parent, [at]);
    return true;
  };
  const around: { list: Task[]; at: number; parent: Task | undefined }[] = [];
  for (const anchor of anchors) {
    let parent: Task | undefined;
    for (const task of tree.pathTo(anchor)) {
      const list = parent ? parent.tasks : tree.roots;
      const at = list.indexOf(task);
      if (!take(list, at, parent)) break;
      if (!around.some((a) => a.list === list && a.at === at)) around.push({ list, at, parent });
      parent = task;
    }
  }
  let widest = 0;
  for (const { list } of around) widest = Math.max(widest, list.length);
  for (let d = 1; d < widest && chosen.size < cap; d++) {
    for (const { list, at, parent } of around) {
      if (at - d >= 0) take(list, at - d, parent);
      if (at + d < list.length) take(list, at + d, parent);
    }
  }
  const levels: { list: Task[]; parent: Task | undefined }[] = [{ list: tree.roots, parent: undefined }];
  for (let i = 0; i < levels.length && chosen.size < cap; i++) {
    const { list, parent } = levels[i]!;
    for (let at = 0; at < list.length; at++) {
      if (!take(list, at, parent)) break;
      const task = list[at]!;
      if (task.tasks.length > 0) levels.push({ list: task.tasks, parent: task });
    }
  }
  for (const positions of lists.values()) positions.sort((a, b) => a - b);
  return lists;
}

function formatRow(
  tree: TaskTree,
  task: Task,
  depth: number,
  parent: Task | undefined,
  done: number,
  before: TaskStatus | undefined,
  team: boolean,
): string {
  const changed = before !== undefined && before !== task.status ? `${before} -> ${task.status}` : "";
  const count = task.tasks.length;
  const subtasks = count > 0 ? `${done}/${count}` : "-";
  const progress = count > 0 ? `${pct(done, count)}%` : "-";
  const agent = team ? ` ${task.status === "in_progress" ? task.claim?.agent ?? "" : ""} |` : "";
  return `| ${indent(depth)}${cell(task.name)} | ${task.id} | ${parent?.id ?? "-"} | ${task.status}${
    blockedNote(tree, task)
  } |${agent} ${changed} | ${subtasks} | ${progress} |`;
}

/** `, blocked` after the status of a task whose own blockers are not all done. */
function blockedNote(tree: TaskTree, task: Task): string {
  if (!task.blocked_by || task.status === "done") return "";
  for (const id of task.blocked_by) {
    const blocker = tree.get(id);
    if (blocker && blocker.status !== "done") return ", blocked";
  }
  return "";
}

function pct(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 100);
}

const INDENTS = Array.from({ length: LIMITS.depth + 1 }, (_, depth) => ". ".repeat(depth));

function indent(depth: number): string {
  return INDENTS[depth] ?? ". ".repeat(depth);
}

/** Text made safe for one Markdown table cell. */
export function cell(text: string): string {
  if (!text.includes("|") && !text.includes("\n")) return text;
  return text.replace(/\r?\n/g, " ").replaceAll("|", "\\|");
}
