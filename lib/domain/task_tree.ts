/**
 * One session's task tree: plain {@link Task} objects plus an id index, status counters and a journal.
 *
 * Every change goes through the journaled primitives below, so a transaction can be rolled back
 * exactly (R6.9) and reports which tasks it touched (what a store must write).
 */
import { fail } from "./errors.ts";
import type { Task, TaskFields, TaskStatus } from "./schemas.ts";

interface Entry {
  task: Task;
  parent: Task | undefined;
  /** Tasks in this task's subtree, itself included; kept up to date on insert and remove. */
  size: number;
  /** This task's children that are done; kept up to date by every status change, insert and remove. */
  done: number;
  /** This task's children that are in progress; kept up to date like {@link Entry.done}. */
  running: number;
}

/** What a committed transaction changed: enough for a store to write only that. */
export interface TreeChanges {
  /** Ids whose own fields or child list changed, or that were added. */
  readonly touched: ReadonlySet<string>;
  /** Ids removed from the tree (with their subtrees). */
  readonly removed: ReadonlySet<string>;
  /** Roots were added, removed or reordered. */
  readonly rootsChanged: boolean;
  /** Status before the transaction, for every task whose status changed. */
  readonly statusBefore: ReadonlyMap<string, TaskStatus>;
  /** Own fields before the transaction of every task it changed, added or removed (null: it is new). */
  readonly fieldsBefore: ReadonlyMap<string, TaskFields | null>;
  /** Child ids before the transaction of every list it changed (`""`: the roots) and of removed tasks. */
  readonly childrenBefore: ReadonlyMap<string, readonly string[]>;
}

/** An open transaction on a tree; exactly one of `commit` or `rollback` ends it. */
export interface TreeTransaction {
  /** What the transaction changed so far. */
  readonly changes: TreeChanges;
  /** Keep the changes. */
  commit(): void;
  /** Undo every change since `begin`, in reverse order. */
  rollback(): void;
}

interface OpenTransaction {
  undo: (() => void)[];
  touched: Set<string>;
  removed: Set<string>;
  rootsChanged: boolean;
  statusBefore: Map<string, TaskStatus>;
  fieldsBefore: Map<string, TaskFields | null>;
  childrenBefore: Map<string, string[]>;
}

/** A task's own fields other than its id, status and subtasks: each set by {@link TaskTree.setField}. */
export const EDITABLE_FIELDS = [
  "name",
  "description",
  "resolution",
  "completion_criteria",
  "constraints",
  "parallel",
  "blocked_by",
  "paths",
  "claim",
  "git",
  "notes",
  "notes_dropped",
] as const;
/** One of {@link EDITABLE_FIELDS}. */
export type EditableField = typeof EDITABLE_FIELDS[number];

/** A session's tree. Lookups by id are O(1); the parent of a task is in the index, not searched. */
export class TaskTree {
  /** The root tasks in execution order: the stored form (R4.6). */
  readonly roots: Task[];
  #index = new Map<string, Entry>();
  #counts: Record<TaskStatus, number> = { todo: 0, in_progress: 0, done: 0 };
  #active = new Set<string>();
  /** Blocker id to the tasks whose own `blocked_by` names it. */
  #dependents = new Map<string, Set<Task>>();
  #tx: OpenTransaction | undefined;

  /** Builds the index over `roots` (taken, not copied); duplicate ids are refused. */
  constructor(roots: Task[] = []) {
    this.roots = roots;
    for (const root of roots) this.#indexSubtree(root, undefined);
  }

  /** Number of tasks in the tree. */
  get size(): number {
    return this.#index.size;
  }

  /** Tasks per status, kept up to date by every change. */
  get counts(): Readonly<Record<TaskStatus, number>> {
    return this.#counts;
  }

  /** The task with this id, if any. */
  get(id: string): Task | undefined {
    return this.#index.get(id)?.task;
  }

  /** The task with this id, or a `NOT_FOUND` error naming it. */
  require(id: string): Task {
    return this.get(id) ??
      fail("NOT_FOUND", `No task with id "${id}" in this session. Call listTasks to see the ids.`);
  }

  /** Number of tasks in `task`'s subtree, itself included; O(1). */
  subtreeSize(task: Task): number {
    return this.#index.get(task.id)?.size ?? 0;
  }

  /** Number of `task`'s children that are done; O(1) (the progress table reads it per parent row). */
  doneChildren(task: Task): number {
    return this.#index.get(task.id)?.done ?? 0;
  }

  /** Number of `task`'s children that are in progress; O(1) (a parent's status follows it). */
  runningChildren(task: Task): number {
    return this.#index.get(task.id)?.running ?? 0;
  }

  /** The parent of a task; undefined for a root. */
  parentOf(task: Task): Task | undefined {
    return this.#index.get(task.id)?.parent;
  }

  /** The list a task sits in: its parent's `tasks`, or the roots. */
  siblingsOf(task: Task): Task[] {
    return this.parentOf(task)?.tasks ?? this.roots;
  }

  /** The tasks from the root down to `task`, inclusive. */
  pathTo(task: Task): Task[] {
    const path: Task[] = [];
    for (let t: Task | undefined = task; t; t = this.parentOf(t)) path.push(t);
    return path.reverse();
  }

  /** Leaves currently in progress (at most one while invariant 1 holds). */
  activeLeaves(): Task[] {
    const leaves: Task[] = [];
    for (const id of this.#active) leaves.push(this.#index.get(id)!.task);
    return leaves;
  }

  /** The tasks whose own `blocked_by` names `id`, from an index kept by every change. */
  dependentsOf(id: string): Task[] {
    return [...this.#dependents.get(id) ?? []];
  }

  /** Every task whose own `blocked_by` names a task, each once (from the index; no walk). */
  blockedTasks(): Task[] {
    const all = new Set<Task>();
    for (const set of this.#dependents.values()) for (const task of set) all.add(task);
    return [...all];
  }

  /** Every task in tree order (depth first, siblings in order) with its depth and parent. */
  *walk(): Generator<{ task: Task; depth: number; parent: Task | undefined }> {
    const stack: { task: Task; depth: number; parent: Task | undefined }[] = [];
    for (let i = this.roots.length - 1; i >= 0; i--) {
      stack.push({ task: this.roots[i]!, depth: 0, parent: undefined });
    }
    while (stack.length > 0) {
      const item = stack.pop()!;
      yield item;
      const children = item.task.tasks;
      for (let i = children.length - 1; i >= 0; i--) {
        stack.push({ task: children[i]!, depth: item.depth + 1, parent: item.task });
      }
    }
  }

  /** Status before the open transaction of every task it changed; empty outside one. */
  get statusBefore(): ReadonlyMap<string, TaskStatus> {
    return this.#tx?.statusBefore ?? new Map();
  }

  /** Opens a transaction; changes made until `commit`/`rollback` are journaled. Not reentrant. */
  begin(): TreeTransaction {
    if (this.#tx) throw new Error("a transaction is already open on this tree");
    const tx: OpenTransaction = {
      undo: [],
      touched: new Set(),
      removed: new Set(),
      rootsChanged: false,
      statusBefore: new Map(),
      fieldsBefore: new Map(),
      childrenBefore: new Map(),
    };
    this.#tx = tx;
    const end = () => {
      if (this.#tx !== tx) throw new Error("transaction already ended");
      this.#tx = undefined;
    };
    return {
      changes: {
        touched: tx.touched,
        removed: tx.removed,
        get rootsChanged() {
          return tx.rootsChanged;
        },
        statusBefore: tx.statusBefore,
        fieldsBefore: tx.fieldsBefore,
        childrenBefore: tx.childrenBefore,
      },
      commit: end,
      rollback: () => {
        for (let i = tx.undo.length - 1; i >= 0; i--) tx.undo[i]!();
        end();
      },
    };
  }

  /** Runs `fn` in a transaction: commits on return, rolls back and rethrows on throw. */
  transact<T>(fn: (tree: this) => T): { result: T; changes: TreeChanges; rollback: () => void } {
    const tx = this.begin();
    let result: T;
    try {
      result = fn(this);
    } catch (error) {
      tx.rollback();
      throw error;
    }
    // Keep the journal alive until the caller's store has written: it may still roll back.
    const undo = [...this.#tx!.undo];
    tx.commit();
    return {
      result,
      changes: tx.changes,
      rollback: () => {
        for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      },
    };
  }

  /**
   * Sets a task's status, keeping counters and the active-leaf set in step. A claim lives only on a
   * leaf in progress: a task leaving `in_progress` loses it.
   */
  setStatus(task: Task, status: TaskStatus): void {
    const before = task.status;
    if (before === status) return;
    const tx = this.#open();
    if (!tx.statusBefore.has(task.id)) tx.statusBefore.set(task.id, before);
    keepFields(tx, task);
    tx.touched.add(task.id);
    this.#applyStatus(task, status);
    tx.undo.push(() => this.#applyStatus(task, before));
    if (status !== "in_progress" && task.claim) this.setField(task, "claim", undefined);
  }

  /** Sets an editable field; `undefined` removes it. */
  setField<K extends EditableField>(task: Task, key: K, value: Task[K]): void {
    const tx = this.#open();
    const had = Object.hasOwn(task, key);
    const before = task[key];
    keepFields(tx, task);
    const blockers = key === "blocked_by";
    // A removed field comes back in its place, so a refused change leaves even the key order.
    const keysAfter = had && value === undefined ? keysFollowing(task, key) : [];
    if (blockers) this.#linkBlockers(task, -1);
    if (value === undefined) delete task[key];
    else task[key] = value;
    if (blockers) this.#linkBlockers(task, 1);
    tx.touched.add(task.id);
    tx.undo.push(() => {
      if (blockers) this.#linkBlockers(task, -1);
      if (had) task[key] = before;
      else delete task[key];
      for (const k of keysAfter) moveLast(task, k);
      if (blockers) this.#linkBlockers(task, 1);
    });
  }

  /**
   * Inserts a new subtree under `parent` (or at root level) at `index`; its ids must be new. A leaf
   * that gains a subtask stops being a leaf, and so loses its claim.
   */
  insert(parent: Task | undefined, index: number, task: Task): void {
    if (parent?.claim) this.setField(parent, "claim", undefined);
    const tx = this.#open();
    const list = parent?.tasks ?? this.roots;
    keepChildren(tx, parent?.id ?? "", list);
    list.splice(index, 0, task);
    try {
      this.#indexSubtree(task, parent);
    } catch (error) {
      list.splice(index, 1);
      throw error;
    }
    this.#markList(tx, parent);
    for (const { task: t } of subtree(task)) {
      if (!tx.fieldsBefore.has(t.id)) tx.fieldsBefore.set(t.id, null);
      tx.touched.add(t.id);
      tx.removed.delete(t.id);
    }
    tx.undo.push(() => {
      list.splice(list.indexOf(task), 1);
      this.#unindexSubtree(task, parent);
    });
  }

  /** Removes a task and its subtree; returns how many tasks were removed. */
  remove(task: Task): number {
    const tx = this.#open();
    const parent = this.parentOf(task);
    const list = parent?.tasks ?? this.roots;
    const index = list.indexOf(task);
    keepChildren(tx, parent?.id ?? "", list);
    list.splice(index, 1);
    const count = this.#unindexSubtree(task, parent);
    this.#markList(tx, parent);
    for (const { task: t } of subtree(task)) {
      keepFields(tx, t);
      keepChildren(tx, t.id, t.tasks);
      tx.removed.add(t.id);
      tx.touched.delete(t.id);
    }
    tx.undo.push(() => {
      list.splice(index, 0, task);
      this.#indexSubtree(task, parent);
    });
    return count;
  }

  /** Sets a task's own status and re-derives its ancestors; returns the ancestors that changed. */
  setAndSettle(task: Task, status: TaskStatus): Task[] {
    this.setStatus(task, status);
    return this.settleFrom(this.parentOf(task));
  }

  /**
   * Recomputes the statuses of `parent` and its ancestors from their children (invariant 2).
   *
   * Stops at the first ancestor whose status does not change; returns the tasks that changed.
   */
  settleFrom(parent: Task | undefined): Task[] {
    const changed: Task[] = [];
    for (let t = parent; t; t = this.parentOf(t)) {
      const next = this.#derived(t);
      if (next === t.status) break;
      this.setStatus(t, next);
      changed.push(t);
    }
    return changed;
  }

  #open(): OpenTransaction {
    return this.#tx ?? fail("INVALID_INPUT", "internal: tree changed outside a transaction");
  }

  #markList(tx: OpenTransaction, parent: Task | undefined): void {
    if (parent) tx.touched.add(parent.id);
    else tx.rootsChanged = true;
  }

  #applyStatus(task: Task, status: TaskStatus): void {
    const parent = this.#index.get(task.id)?.parent;
    this.#countChild(parent, task.status, -1);
    this.#countChild(parent, status, 1);
    this.#counts[task.status]--;
    this.#counts[status]++;
    task.status = status;
    this.#trackActive(task);
  }

  #trackActive(task: Task): void {
    if (task.status === "in_progress" && task.tasks.length === 0) this.#active.add(task.id);
    else this.#active.delete(task.id);
  }

  /** Adds (`1`) or removes (`-1`) `task`'s own blockers in the dependents index. */
  #linkBlockers(task: Task, sign: 1 | -1): void {
    for (const id of task.blocked_by ?? []) {
      let set = this.#dependents.get(id);
      if (sign === 1) {
        if (!set) this.#dependents.set(id, set = new Set());
        set.add(task);
      } else if (set) {
        set.delete(task);
        if (set.size === 0) this.#dependents.delete(id);
      }
    }
  }

  #indexSubtree(task: Task, parent: Task | undefined): void {
    const added: Entry[] = [];
    try {
      for (const item of subtree(task, parent)) {
        if (this.#index.has(item.task.id)) {
          fail("DUPLICATE_ID", `Task id "${item.task.id}" is already used in this session.`);
        }
        const entry = { task: item.task, parent: item.parent, size: 1, done: 0, running: 0 };
        this.#index.set(item.task.id, entry);
        added.push(entry);
        this.#counts[item.task.status]++;
        this.#trackActive(item.task);
        this.#linkBlockers(item.task, 1);
      }
    } catch (error) {
      for (const { task: t } of added) {
        this.#linkBlockers(t, -1);
        this.#counts[t.status]--;
        this.#active.delete(t.id);
        this.#index.delete(t.id);
      }
      throw error;
    }
    // Depth-first order puts every task before its descendants: sum sizes from the end.
    for (let i = added.length - 1; i > 0; i--) {
      const entry = added[i]!;
      this.#index.get(entry.parent!.id)!.size += entry.size;
    }
    for (const entry of added) this.#countChild(entry.parent, entry.task.status, 1);
    this.#addToAncestors(parent, added.length);
    // Called after the subtree joined its list: a parent that gains a child stops being a leaf.
    if (parent) this.#trackActive(parent);
  }

  #unindexSubtree(task: Task, parent: Task | undefined): number {
    this.#countChild(parent, task.status, -1);
    let count = 0;
    for (const { task: t } of subtree(task)) {
      this.#index.delete(t.id);
      this.#counts[t.status]--;
      this.#active.delete(t.id);
      this.#linkBlockers(t, -1);
      count++;
    }
    this.#addToAncestors(parent, -count);
    if (parent) this.#trackActive(parent);
    return count;
  }

  /** Adds `sign` to `parent`'s count of children with `status` (done and in progress are counted). */
  #countChild(parent: Task | undefined, status: TaskStatus, sign: 1 | -1): void {
    if (!parent || status === "todo") return;
    const entry = this.#index.get(parent.id)!;
    if (status === "done") entry.done += sign;
    else entry.running += sign;
  }

  /** {@link derivedStatus} from the counts of the index, without reading the children. */
  #derived(task: Task): TaskStatus {
    const count = task.tasks.length;
    if (count === 0) return task.status;
    const entry = this.#index.get(task.id)!;
    return entry.running > 0 ? "in_progress" : entry.done === count ? "done" : "todo";
  }

  #addToAncestors(parent: Task | undefined, delta: number): void {
    for (let t = parent; t; t = this.#index.get(t.id)!.parent) this.#index.get(t.id)!.size += delta;
  }
}

/** Notes a task's own fields as they are before its first change in the transaction. */
function keepFields(tx: OpenTransaction, task: Task): void {
  if (tx.fieldsBefore.has(task.id)) return;
  const { id: _id, tasks: _tasks, ...fields } = task;
  tx.fieldsBefore.set(task.id, fields);
}

/** The keys after `key` in `task`'s own order. */
function keysFollowing(task: Task, key: string): (keyof Task)[] {
  const keys = Object.keys(task) as (keyof Task)[];
  return keys.slice(keys.indexOf(key as keyof Task) + 1);
}

/** Moves `key`, when present, to the end of `task`'s key order, keeping its value. */
function moveLast(task: Task, key: keyof Task): void {
  if (!Object.hasOwn(task, key)) return;
  const value = task[key];
  delete task[key];
  (task as unknown as Record<string, unknown>)[key] = value;
}

/** Notes a list's child ids as they are before its first change in the transaction. */
function keepChildren(tx: OpenTransaction, owner: string, list: readonly Task[]): void {
  if (!tx.childrenBefore.has(owner)) tx.childrenBefore.set(owner, list.map((t) => t.id));
}

/** The status a parent must have given its children; a leaf keeps its own. */
export function derivedStatus(task: Task): TaskStatus {
  if (task.tasks.length === 0) return task.status;
  let allDone = true;
  for (const child of task.tasks) {
    if (child.status === "in_progress") return "in_progress";
    if (child.status !== "done") allDone = false;
  }
  return allDone ? "done" : "todo";
}

/** `task` and all its descendants, depth first, each with its parent. */
export function* subtree(
  task: Task,
  parent?: Task,
): Generator<{ task: Task; parent: Task | undefined }> {
  const stack: { task: Task; parent: Task | undefined }[] = [{ task, parent }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    yield item;
    for (let i = item.task.tasks.length - 1; i >= 0; i--) {
      stack.push({ task: item.task.tasks[i]!, parent: item.task });
    }
  }
}

/**
 * Re-derives `parent` and its ancestors after subtasks left it (a delete, a checklist replace or
 * move). A parent left without subtasks was in progress only through them, so it waits as todo.
 */
export function settleAfterRemoval(tree: TaskTree, parent: Task | undefined): void {
  if (parent && parent.tasks.length === 0) {
    if (parent.status === "in_progress") tree.setStatus(parent, "todo");
    tree.settleFrom(tree.parentOf(parent));
  } else {
    tree.settleFrom(parent);
  }
}

/** A task or a task to create: all the shape rules (counts, height) need. */
interface Nested {
  tasks?: readonly Nested[] | undefined;
}

/** Number of tasks in `roots` and all their subtasks (plain lists: snapshots, tasks to create). */
export function countTasks(roots: readonly Nested[]): number {
  let n = 0;
  for (const task of roots) n += 1 + countTasks(task.tasks ?? []);
  return n;
}

/** Height of a subtree: 1 for a leaf. */
export function heightOf(task: Nested): number {
  let max = 0;
  for (const child of task.tasks ?? []) {
    max = Math.max(max, heightOf(child));
  }
  return max + 1;
}
