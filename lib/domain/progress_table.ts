/**
 * The progress table shared by startTask and completeTask (R3.6, R3.11–R3.14).
 *
 * One row per task in tree order. A tree larger than the row cap is shown around the active path
 * (the focus task, the tasks this call changed, their ancestors and nearby siblings); every hidden
 * run of tasks is a "… N more" row counting them with their subtasks, so the rows shown and the
 * counts add up to the whole tree and nothing is cut silently. Totals come from the tree's counters.
 */
import { LIMITS } from "./limits.ts";
import type { Task, TaskStatus } from "./schemas.ts";
import type { TaskTree } from "./task_tree.ts";

/** Overall totals plus the Markdown table (R3.13). */
export interface ProgressSummary {
  total_tasks: number;
  completed_tasks: number;
  in_progress_tasks: number;
  todo_tasks: number;
  completion_percentage: number;
  table: string;
}

/** Options of {@link progressSummary}. */
export interface ProgressOptions {
  /** The task the reader should look at next (started leaf or next task). */
  focus?: Task | undefined;
  /** Status of each task before this call, for the "Changed" column. */
  statusBefore?: ReadonlyMap<string, TaskStatus>;
  /** Maximum number of task rows. */
  rowCap?: number;
}

const MAX_ANCHORS = 12;

/** Totals and the table for the whole session. */
export function progressSummary(tree: TaskTree, options: ProgressOptions = {}): ProgressSummary {
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

interface Row {
  task: Task;
  depth: number;
  parent: Task | undefined;
}

function renderTable(tree: TaskTree, options: ProgressOptions, percent: number): string {
  const cap = options.rowCap ?? LIMITS.tableRows;
  const before = options.statusBefore ?? new Map<string, TaskStatus>();
  if (tree.size === 0) return "No tasks in this session.";
  const lines = [
    "| Task | ID | Parent | Status | Changed | Subtasks | Progress |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  const parents: Row[] = [];
  let shown = 0;
  const emit = (row: Row) => {
    shown++;
    if (row.task.tasks.length > 0) parents.push(row);
    lines.push(formatRow(row, before.get(row.task.id)));
  };
  if (tree.size <= cap) {
    for (const row of tree.walk()) emit(row);
  } else {
    const chosen = chooseRows(tree, anchorsOf(tree, options, before), cap);
    const chosenUnder = new Map<Task | undefined, Task[]>();
    for (const task of chosen) {
      const parent = tree.parentOf(task);
      const list = chosenUnder.get(parent);
      if (list) list.push(task);
      else chosenUnder.set(parent, [task]);
    }
    // Costs follow the rows shown, not the siblings hidden: each list's longest hidden run is
    // counted by subtraction from its parent's subtree size.
    const visit = (parent: Task | undefined, depth: number) => {
      const list = parent?.tasks ?? tree.roots;
      const shownHere = (chosenUnder.get(parent) ?? []).map((task) => ({ task, at: list.indexOf(task) }))
        .sort((a, b) => a.at - b.at);
      const hidden = hiddenRuns(tree, parent, list, shownHere.map((s) => s.at));
      const flushHidden = (count: number) => {
        if (count > 0) lines.push(`| ${indent(depth)}… ${count} more | | ${parent?.id ?? "—"} | | | | |`);
      };
      shownHere.forEach(({ task }, i) => {
        flushHidden(hidden[i]!);
        emit({ task, depth, parent });
        visit(task, depth + 1);
      });
      flushHidden(hidden[shownHere.length]!);
    };
    visit(undefined, 0);
  }
  const out = [lines.join("\n"), ""];
  if (shown < tree.size) {
    out.push(
      `Showing ${shown} of ${tree.size} tasks around the active path; a row "… N more" counts the N tasks hidden there (subtasks included). Use getTask or listTasks for the rest.`,
      "",
    );
  }
  if (parents.length > 0) {
    out.push("Parent progress:");
    for (const { task } of parents) {
      const done = doneChildren(task);
      const totalChildren = task.tasks.length;
      out.push(
        `- ${cell(task.name)} (${task.id}): ${done}/${totalChildren} subtasks done, ${
          totalChildren - done
        } remaining (${pct(done, totalChildren)}%)`,
      );
    }
    out.push("");
  }
  const c = tree.counts;
  out.push(
    `Overall: ${tree.size} tasks, ${c.done} done, ${c.in_progress} in progress, ${c.todo} todo (${percent}% complete)`,
  );
  return out.join("\n");
}

function anchorsOf(
  tree: TaskTree,
  options: ProgressOptions,
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
 */
function chooseRows(tree: TaskTree, anchors: Task[], cap: number): Set<Task> {
  const chosen = new Set<Task>();
  const take = (task: Task) => {
    if (chosen.size < cap) chosen.add(task);
    return chosen.has(task);
  };
  const path: Task[] = [];
  for (const anchor of anchors) {
    for (const task of tree.pathTo(anchor)) {
      if (!take(task)) break;
      if (!path.includes(task)) path.push(task);
    }
  }
  const around = path.map((task) => {
    const siblings = tree.siblingsOf(task);
    return { siblings, at: siblings.indexOf(task) };
  });
  const widest = Math.max(0, ...around.map((a) => a.siblings.length));
  for (let d = 1; d < widest && chosen.size < cap; d++) {
    for (const { siblings, at } of around) {
      if (at - d >= 0) take(siblings[at - d]!);
      if (at + d < siblings.length) take(siblings[at + d]!);
    }
  }
  const levels: Task[][] = [tree.roots];
  for (let i = 0; i < levels.length && chosen.size < cap; i++) {
    for (const task of levels[i]!) {
      if (!take(task)) break;
      if (task.tasks.length > 0) levels.push(task.tasks);
    }
  }
  return chosen;
}

/**
 * Tasks hidden (subtrees included) before each shown index of `list`, and after the last one.
 * The longest run is not summed: it is the list's total (its parent's subtree size) minus the rest.
 */
function hiddenRuns(tree: TaskTree, parent: Task | undefined, list: Task[], shownAt: number[]): number[] {
  const starts = [0, ...shownAt.map((at) => at + 1)];
  const ends = [...shownAt, list.length];
  let longest = 0;
  for (let i = 1; i < starts.length; i++) {
    if (ends[i]! - starts[i]! > ends[longest]! - starts[longest]!) longest = i;
  }
  let rest = parent ? tree.subtreeSize(parent) - 1 : tree.size;
  for (const at of shownAt) rest -= tree.subtreeSize(list[at]!);
  const counts = starts.map((start, i) => {
    let count = 0;
    if (i !== longest) { for (let j = start; j < ends[i]!; j++) count += tree.subtreeSize(list[j]!); }
    rest -= count;
    return count;
  });
  counts[longest] = rest;
  return counts;
}

function formatRow(row: Row, before: TaskStatus | undefined): string {
  const { task } = row;
  const changed = before !== undefined && before !== task.status ? `${before} → ${task.status}` : "";
  let subtasks = "—";
  let progress = "—";
  if (task.tasks.length > 0) {
    const done = doneChildren(task);
    subtasks = `${done}/${task.tasks.length}`;
    progress = `${pct(done, task.tasks.length)}%`;
  }
  return `| ${indent(row.depth)}${cell(task.name)} | ${task.id} | ${
    row.parent?.id ?? "—"
  } | ${task.status} | ${changed} | ${subtasks} | ${progress} |`;
}

function doneChildren(task: Task): number {
  let done = 0;
  for (const child of task.tasks) if (child.status === "done") done++;
  return done;
}

function pct(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 100);
}

function indent(depth: number): string {
  return "· ".repeat(depth);
}

/** Text made safe for one Markdown table cell. */
export function cell(text: string): string {
  return text.replace(/\r?\n/g, " ").replaceAll("|", "\\|");
}
