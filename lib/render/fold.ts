/**
 * Folding a task tree around the path in progress: the rows a view shows first, and the rows of a
 * folded part when it is opened. A big tree never turns into all its rows at once.
 *
 * Unfolded: every task on the path from a root to the task in progress (or, with none in progress,
 * to the next task), the paths to the leaves agents hold (docs/teams.md), and the tasks
 * named in `open`. Everything else with subtasks is folded and
 * shows its counts. Of a long list of siblings only a window is shown ({@link SIBLING_WINDOW}, around
 * the one on the path); the rest become "more" rows that load in pages ({@link PAGE_ROWS}).
 */
import type { Task } from "../domain/schemas.ts";
import { nextTask } from "../domain/task_ops.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import { AGENTS_SHOWN, type MoreRow, type Row, type TaskChange, type TaskRow } from "./model.ts";
import {
  blockedMark,
  heldBy,
  heldLeaves,
  heldWork,
  reservationMarks,
  type ReservedMark,
} from "./team_marks.ts";

/** Siblings shown per list before the rest is folded into "more" rows. */
export const SIBLING_WINDOW = 50;
/** Siblings shown before the one on the path, when a window is needed. */
export const WINDOW_BEFORE = 10;
/** Siblings shown around another agent's leaf, in a list unfolded only to show it. */
export const HELD_WINDOW = 7;
/** Rows one opened folded part or "more" row returns at most. */
export const PAGE_ROWS = 100;
/** Ids of user-opened tasks honoured per request. */
export const MAX_OPEN = 100;

/** Counts of done tasks below each task (descendants, not itself), made in one pass over the tree. */
export class DoneCounts {
  readonly #below = new Map<string, number>();

  constructor(tree: TaskTree) {
    const items = [...tree.walk()];
    for (let i = items.length - 1; i >= 0; i--) {
      const { task, parent } = items[i]!;
      if (!parent) continue;
      const add = (this.#below.get(task.id) ?? 0) + (task.status === "done" ? 1 : 0);
      if (add > 0) this.#below.set(parent.id, (this.#below.get(parent.id) ?? 0) + add);
    }
  }

  /** Done tasks below `id`. */
  below(id: string): number {
    return this.#below.get(id) ?? 0;
  }
}

/**
 * The task the view centres on: the leaf in progress (`prefer`, when it names one: with agents at
 * work, the one a call started), else the next unfinished leaf, else none.
 */
export function focusTask(tree: TaskTree, prefer?: string): { task: Task; active: boolean } | undefined {
  const preferred = prefer === undefined ? undefined : tree.get(prefer);
  if (preferred?.status === "in_progress" && preferred.tasks.length === 0) {
    return { task: preferred, active: true };
  }
  const active = tree.activeLeaves()[0];
  if (active) return { task: active, active: true };
  const next = nextTask(tree);
  return next ? { task: next, active: false } : undefined;
}

/** Options of {@link foldTree}. */
export interface FoldOptions {
  /** Ids of tasks to show unfolded as well (at most {@link MAX_OPEN} are honoured). */
  open?: Iterable<string>;
  /** What the call being shown did, by task id: those rows carry it, and their ancestors are unfolded. */
  changes?: ReadonlyMap<string, TaskChange>;
  /**
   * Siblings shown per list before the rest is folded into "more" rows (default {@link SIBLING_WINDOW});
   * a smaller window keeps a read small (lib/render/budget.ts).
   */
  window?: number;
  /** The leaf in progress to centre on when several are (see {@link focusTask}). */
  focus?: string;
  /** Unfold the paths to the leaves agents hold (default true; a view that must shrink drops them). */
  held?: boolean;
  /** Show where work is and what it reserves: see {@link WorkOptions} (the dashboard; absent: not shown). */
  work?: WorkOptions;
}

/**
 * Rows that show where work is (docs/teams.md "Paths and reservations", "Where the work lives"): each
 * held leaf with its paths and branch@head, and the leaves waiting on reservations with their holders,
 * the reservations judged live at `now`.
 */
export interface WorkOptions {
  /** The clock reservations are judged by (ms since the epoch). */
  now: number;
}

/** What each row is marked with, besides its own fields: one per view, so reservations are read once. */
interface RowMarks {
  work?: (task: Task) => ReservedMark;
}

function rowMarks(tree: TaskTree, work: WorkOptions | undefined): RowMarks {
  return work ? { work: reservationMarks(tree, work.now) } : {};
}

/** The first rows of a tree: unfolded around the focus and the `open` tasks, the rest folded. */
export function foldTree(tree: TaskTree, options: FoldOptions = {}): Row[] {
  const counts = new DoneCounts(tree);
  const focus = focusTask(tree, options.focus);
  const path = new Set(focus ? tree.pathTo(focus.task).map((t) => t.id) : []);
  const open = new Set<string>();
  for (const id of options.open ?? []) {
    if (open.size >= MAX_OPEN) break;
    open.add(id);
  }
  for (const id of options.changes?.keys() ?? []) {
    if (open.size >= MAX_OPEN) break;
    const task = tree.get(id);
    const parent = task && tree.parentOf(task);
    if (parent) { for (const t of tree.pathTo(parent)) open.add(t.id); }
  }
  // The paths to other agents' leaves: unfolded, with a narrower window where nothing else is shown.
  const held = new Set<string>();
  if (options.held ?? true) {
    for (const { task } of heldLeaves(tree).slice(0, AGENTS_SHOWN)) {
      for (const t of tree.pathTo(task)) held.add(t.id);
    }
  }
  const changes = options.changes;
  const marks = rowMarks(tree, options.work);
  const window = Math.max(1, options.window ?? SIBLING_WINDOW);
  const rows: Row[] = [];
  const level = (list: readonly Task[], depth: number, parentId: string | null) => {
    let at = list.findIndex((t) => path.has(t.id) || open.has(t.id));
    let size = window;
    if (at === -1) {
      at = list.findIndex((t) => held.has(t.id));
      if (at !== -1) size = Math.min(window, HELD_WINDOW);
    }
    const before = Math.min(WINDOW_BEFORE, Math.floor((size - 1) / 2));
    let from = 0;
    let to = list.length;
    if (list.length > size) {
      from = at === -1 ? 0 : Math.max(0, Math.min(at - before, list.length - size));
      to = from + size;
    }
    if (from > 0) rows.push(moreRow(depth, parentId, 0, from));
    for (let i = from; i < to; i++) {
      const task = list[i]!;
      const unfold = task.tasks.length > 0 && (path.has(task.id) || open.has(task.id) || held.has(task.id));
      const row = taskRow(tree, counts, task, depth, parentId, { unfold, path, marks });
      const change = changes?.get(task.id);
      if (change) row.change = change;
      rows.push(row);
      if (unfold) level(task.tasks, depth + 1, task.id);
    }
    if (to < list.length) rows.push(moreRow(depth, parentId, to, list.length - to));
  };
  level(tree.roots, 0, null);
  return rows;
}

/** A range of subtasks */
export interface ChildRange {
  /** The parent whose subtasks to show; undefined for the roots. */
  parentId?: string;
  /** Index of the first subtask to show. */
  offset: number;
  /** How many subtasks the range covers; the first {@link PAGE_ROWS} are shown, the rest stay a "more" row. */
  count: number;
}

/**
 * The rows of a folded part: `range` of a parent's subtasks (or of the roots), each folded, and a
 * "more" row for what is past {@link PAGE_ROWS}; with `work`, marked as {@link WorkOptions} says.
 * Undefined when the parent does not exist.
 */
export function childRows(
  tree: TaskTree,
  range: ChildRange,
  options: { work?: WorkOptions } = {},
): Row[] | undefined {
  const parent = range.parentId === undefined ? undefined : tree.get(range.parentId);
  if (range.parentId !== undefined && !parent) return undefined;
  const list = parent ? parent.tasks : tree.roots;
  const depth = parent ? tree.pathTo(parent).length : 0;
  const parentId = parent ? parent.id : null;
  const start = Math.min(Math.max(0, range.offset), list.length);
  const end = Math.min(list.length, start + Math.max(0, range.count));
  const shown = Math.min(end, start + PAGE_ROWS);
  const counts = new DoneCounts(tree);
  const focus = focusTask(tree);
  const path = new Set(focus ? tree.pathTo(focus.task).map((t) => t.id) : []);
  const marks = rowMarks(tree, options.work);
  const rows: Row[] = [];
  for (let i = start; i < shown; i++) {
    rows.push(taskRow(tree, counts, list[i]!, depth, parentId, { unfold: false, path, marks }));
  }
  if (shown < end) rows.push(moreRow(depth, parentId, shown, end - shown));
  return rows;
}

function taskRow(
  tree: TaskTree,
  counts: DoneCounts,
  task: Task,
  depth: number,
  parentId: string | null,
  how: { unfold: boolean; path: ReadonlySet<string>; marks: RowMarks },
): TaskRow {
  const row: TaskRow = {
    kind: "task",
    id: task.id,
    name: task.name,
    status: task.status,
    depth,
    parent_id: parentId,
    children: task.tasks.length,
    // The task and everything below it: a session's roots add up to its header (buildSessionView).
    done: counts.below(task.id) + (task.status === "done" ? 1 : 0),
    total: tree.subtreeSize(task),
    open: how.unfold,
    on_path: how.path.has(task.id),
    active: task.status === "in_progress" && task.tasks.length === 0,
  };
  if (task.parallel) row.parallel = true;
  const claim = heldBy(task);
  if (claim) row.claim = claim;
  Object.assign(row, blockedMark(tree, task));
  if (how.marks.work) {
    const work = heldWork(tree, task);
    if (work) row.work = work;
    Object.assign(row, how.marks.work(task));
  }
  return row;
}

function moreRow(depth: number, parentId: string | null, offset: number, count: number): MoreRow {
  return { kind: "more", depth, parent_id: parentId, offset, count };
}
