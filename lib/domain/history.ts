/**
 * A session's history (docs/history.md): what each change did, recorded from the tree's
 * journal as a compact delta, and restores computed by replaying deltas backwards from the current tree.
 *
 * A delta names, for every task a change touched, what it was just before the change: its own fields
 * where they changed (`null`: the task did not exist yet) and its child ids where its list of children
 * changed (`""` is the list of root tasks). What a task was just after a change is the next change's
 * "before", or the current tree, so it is not stored twice; a change to one task of a 10,000-task
 * session records about that one task. Pure: no I/O, no clock (the caller stamps `at`).
 */
import { z } from "zod";
import { DomainError, fail } from "./errors.ts";
import { type HistoryEntry, HistoryEntrySchema } from "./history_entry.ts";
import { type Task, type TaskFields, TaskFieldsSchema, TaskIdSchema } from "./schemas.ts";
import { derivedStatus, type TaskTree, type TreeChanges } from "./task_tree.ts";
import { extraActiveLeaves } from "./invariants.ts";
import { checkReservationsKept, liveReservations } from "./reservations.ts";
import { type Actor, ANONYMOUS, checkClaimsKept, othersClaims, sameHolding } from "./team.ts";

/** One task's part of a change: its fields (`f`) and child ids (`k`) before it, where they changed. */
export const DeltaItemSchema = z.object({
  id: z.union([TaskIdSchema, z.literal("")]),
  f: TaskFieldsSchema.nullable().optional(),
  k: z.array(TaskIdSchema).optional(),
});
/** See {@link DeltaItemSchema}. */
export type DeltaItem = z.infer<typeof DeltaItemSchema>;

/** What one change did, as the module doc describes. */
export const DeltaSchema = z.array(DeltaItemSchema);
/** See {@link DeltaSchema}. */
export type Delta = z.infer<typeof DeltaSchema>;

/** A history entry with the delta that can undo it. */
export const RecordedChangeSchema = HistoryEntrySchema.extend({ delta: DeltaSchema });
/** See {@link RecordedChangeSchema}. */
export type RecordedChange = z.infer<typeof RecordedChangeSchema>;

/** A session's history as a whole: its current revision and the entries kept, oldest first. */
export const SessionHistorySchema = z.object({
  revision: z.number().int().nonnegative(),
  entries: z.array(RecordedChangeSchema),
});
/** See {@link SessionHistorySchema}. */
export type SessionHistory = z.infer<typeof SessionHistorySchema>;

/**
 * What a change to a session sees of its history: the current revision and, when the change asks
 * for them (`undoTo`, as a restore does), the oldest revision kept and the deltas after a revision.
 */
export interface HistoryContext {
  revision: number;
  /** The oldest revision kept; undefined when none is (history off, no change yet) or not asked for. */
  oldest: number | undefined;
  /** Entries kept per session (`HISTORY_SIZE`). */
  historySize: number;
  /** The deltas of the revisions after the one asked for, newest first; empty when not asked. */
  deltas: Delta[];
}

/** What a change to a session's tree answered, and the session's revision after it. */
export interface TreeUpdate<T> {
  result: T;
  /** The new revision; the current one when the change changed nothing. */
  revision: number;
}

/** How a change is recorded in the session's history (docs/history.md). */
export interface TreeChangeOptions {
  /** The tool that made the change, shown by `task_history`. */
  tool: string;
  /** Pass the change the deltas of the revisions after this one (what a restore replays). */
  undoTo?: number;
}

/** A session's history as `task_history` shows it. */
export interface HistoryPage {
  /** The session's current revision (0: never changed). */
  revision: number;
  /** The oldest revision kept; undefined when none is. */
  oldest: number | undefined;
  /** The newest entries first, at most the limit asked for. */
  entries: HistoryEntry[];
}

/** The oldest revision kept: the first recorded, or the last `historySize` before `current`. */
export function oldestKept(
  current: number,
  firstRecorded: number | undefined,
  historySize: number,
): number | undefined {
  if (historySize <= 0 || firstRecorded === undefined || current === 0) return undefined;
  return Math.max(firstRecorded, current - historySize + 1);
}

const FIELDS = TaskFieldsSchema.keyof().options;

/**
 * What a committed transaction did to `tree`, from its journal; empty when it changed nothing. A
 * claim whose lease alone changed (a renewal), with or without a new `git` record, is no change here:
 * see {@link leaseRenewed}. A `git` record is where the work was seen, not what anyone decided: it
 * changes only with another change (a take, a note, a completion) or with a renewal.
 */
export function recordChange(tree: TaskTree, changes: TreeChanges): Delta {
  const delta: Delta = [];
  const ids = new Set([...changes.fieldsBefore.keys(), ...changes.childrenBefore.keys()]);
  for (const id of ids) {
    const now = id === "" ? undefined : tree.get(id);
    const item: DeltaItem = { id };
    const before = changes.fieldsBefore.get(id);
    if (before === null) {
      if (!now) continue; // added and removed again within the change
      item.f = null;
    } else if (before !== undefined && (!now || !sameRecorded(before, now))) {
      item.f = before;
    }
    const kidsBefore = changes.childrenBefore.get(id);
    if (item.f !== null && kidsBefore) {
      const kidsNow = id === "" ? tree.roots : now?.tasks ?? [];
      if (!sameIds(kidsBefore, kidsNow)) item.k = [...kidsBefore];
    }
    if (item.f !== undefined || item.k) delta.push(item);
  }
  return delta;
}

/**
 * Whether the transaction renewed a lease: a claim whose `expires_at` alone changed, or the `git`
 * record a renewal refreshes. Such a change adds no revision and no history entry, but a store must
 * still write it (docs/teams.md).
 */
export function leaseRenewed(tree: TaskTree, changes: TreeChanges): boolean {
  for (const [id, before] of changes.fieldsBefore) {
    const task = tree.get(id);
    if (!before || !task) continue;
    const claim = task.claim;
    if (claim && before.claim && before.claim.expires_at !== claim.expires_at) return true;
    if (!sameValue(before.git, task.git)) return true;
  }
  return false;
}

/**
 * The history entry of a change that changed something: its revision, time and tool, a summary
 * naming a few tasks, and the delta that undoes it. The one constructor every store uses.
 */
export function historyEntry(
  tree: TaskTree,
  delta: Delta,
  options: { revision: number; tool: string; at: string },
): RecordedChange {
  return {
    revision: options.revision,
    at: options.at,
    tool: options.tool,
    summary: summarize(tree, delta),
    delta,
  };
}

/** One line saying what a change did, naming a few of the tasks (for `task_history`). */
export function summarize(tree: TaskTree, delta: Delta): string {
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  let moved = 0;
  const only = delta.length === 1 ? delta[0]! : undefined;
  const noted = only?.f ? tree.get(only.id) : undefined;
  if (noted && only?.f && onlyNotesDiffer(only.f, noted)) {
    return `note on ${quote(noted.name)} by ${noted.notes!.at(-1)!.agent}`;
  }
  for (const item of delta) {
    if (item.id === "") continue;
    const now = tree.get(item.id);
    if (item.f === null) added.push(quote(now!.name));
    else if (item.f === undefined) moved++;
    else if (!now) removed.push(quote(item.f.name));
    else {
      const by = now.claim ? ` by ${now.claim.agent}` : "";
      const what = item.f.status !== now.status
        ? `${now.status}${by}`
        : !sameHolding(item.f.claim, now.claim)
        ? now.claim ? `taken over${by}` : "released"
        : "edited";
      changed.push(`${quote(now.name)} ${what}`);
    }
  }
  const parts: string[] = [];
  const list = (verb: string, names: string[]) => {
    if (names.length === 0) return;
    const shown = names.slice(0, 3).join(", ");
    parts.push(`${verb} ${names.length}: ${shown}${names.length > 3 ? ", ..." : ""}`);
  };
  list("added", added);
  list("removed", removed);
  list("changed", changed);
  if (parts.length === 0) parts.push(moved > 0 ? "reordered tasks" : "reordered root tasks");
  return parts.join("; ");
}

function quote(name: string): string {
  const line = name.replace(/\s+/g, " ");
  return `"${line.length > 40 ? `${line.slice(0, 37)}...` : line}"`;
}

/**
 * What the tree was before a run of changes, for the tasks they touched: replays their deltas
 * (newest first) backwards. A task absent from the maps is as it is now.
 */
export interface PastState {
  /** Own fields per task id (`null`: the task did not exist). */
  fields: Map<string, TaskFields | null>;
  /** Child ids per task id (`""`: the roots). */
  children: Map<string, readonly string[]>;
}

/** Replays `deltas`, newest first, backwards; see {@link PastState}. */
export function replay(deltas: readonly Delta[]): PastState {
  const past: PastState = { fields: new Map(), children: new Map() };
  for (const delta of deltas) {
    for (const item of delta) {
      if (item.f !== undefined) past.fields.set(item.id, item.f);
      // A task that did not exist has no children; an older delta that brings it back says which.
      if (item.f === null) past.children.set(item.id, []);
      if (item.k) past.children.set(item.id, item.k);
    }
  }
  return past;
}

/**
 * The whole tree as it was before `deltas` (newest first), as new task objects; `tree` is not
 * changed. Throws `INVALID_INPUT` when the history does not fit the tree.
 */
export function pastRoots(tree: TaskTree, deltas: readonly Delta[]): Task[] {
  const view = pastView(tree, replay(deltas), (id) => tree.get(id));
  return view.build("", new Set()).tasks;
}

/** The outcome of {@link restoreTree}. */
export interface Restored {
  added: number;
  removed: number;
  changed: number;
  /** Sentences on the task in progress when it changed (the one in progress now goes back). */
  notes: string[];
}

/**
 * Changes `tree`, inside the caller's transaction, into what it was before `deltas` (newest first),
 * through the journaled primitives, so the restore is itself a change with a compact delta (only
 * the tasks that differ are touched). Statuses come back as they were, in-progress leaf included.
 * Throws `INVALID_INPUT` when the history does not fit the tree (it was changed by other means),
 * `CLAIMED` when it would change a leaf another agent holds live, `RESERVED` when two live claims
 * would then reserve overlapping paths.
 */
export function restoreTree(tree: TaskTree, deltas: readonly Delta[], actor: Actor = ANONYMOUS): Restored {
  const held = othersClaims(tree, actor);
  const reserved = liveReservations(tree, { now: actor.now });
  const past = replay(deltas);
  const activeBefore = tree.activeLeaves();
  const counts = { added: 0, removed: 0, changed: 0 };
  for (const [id, fields] of past.fields) {
    const now = tree.get(id);
    if (fields && !now) counts.added++;
    else if (!fields && now) counts.removed++;
    else if (fields && now && !sameFields(fields, now)) counts.changed++;
  }
  // Removed objects stay readable: fresh copies of moved subtrees are built from them.
  const detached = new Map<string, Task>();
  const view = pastView(tree, past, (id) => tree.get(id) ?? detached.get(id));
  const exists = (id: string) => id === "" || view.fieldsOf(id) !== null;
  const owners = [...past.children.keys()].filter(exists);
  const original = new Map(owners.map((id) => [id, tree.get(id)]));
  const parentOf = new Map<string, string>();
  for (const owner of owners) for (const id of view.childrenOf(owner)) parentOf.set(id, owner);
  try {
    // 1. Off the lists that change: children not wanted there, or out of order (kept in place otherwise).
    const removals: Task[] = [];
    for (const owner of owners) {
      const task = original.get(owner);
      if (owner !== "" && !task) continue;
      const position = new Map(view.childrenOf(owner).map((id, i) => [id, i]));
      let last = -1;
      for (const child of task?.tasks ?? tree.roots) {
        const at = parentOf.get(child.id) === owner ? position.get(child.id)! : -1;
        if (at > last) last = at;
        else removals.push(child);
      }
    }
    for (const task of removals) {
      if (tree.get(task.id) !== task) continue; // inside a subtree removed already
      tree.remove(task);
      for (const t of walkTasks(task)) detached.set(t.id, t);
    }
    // 2. Into them, in order: fresh copies of what each list lacks.
    const fresh = new Set<string>();
    for (const owner of owners) {
      const task = original.get(owner);
      if (owner !== "" && (!task || tree.get(owner) !== task)) continue; // rebuilt with an ancestor
      const list = task?.tasks ?? tree.roots;
      view.childrenOf(owner).forEach((id, i) => {
        if (list[i]?.id === id) return;
        const built = view.build(id, fresh);
        tree.insert(task, i, built);
      });
    }
    // 3. Fields and statuses of the tasks kept in place.
    for (const [id, fields] of past.fields) {
      const task = tree.get(id);
      if (!fields || !task || fresh.has(id)) continue;
      for (const key of FIELDS) {
        if (key === "status" || sameValue(task[key], fields[key])) continue;
        tree.setField(task, key, fields[key] as never);
      }
      if (task.status !== fields.status) tree.setStatus(task, fields.status);
    }
  } catch (error) {
    if (error instanceof DomainError) throw doesNotFit();
    throw error;
  }
  if (extraActiveLeaves(tree).length > 0) throw doesNotFit();
  checkClaimsKept(tree, held, "restore over");
  checkReservationsKept(tree, reserved, { now: actor.now, what: "restore this revision" });
  for (const owner of owners) {
    const task = tree.get(owner);
    if (task && derivedStatus(task) !== task.status) throw doesNotFit();
  }
  const activeNow = tree.activeLeaves();
  const notes: string[] = [];
  for (const leaf of activeBefore) {
    const now = tree.get(leaf.id);
    if (activeNow.includes(leaf)) continue;
    notes.push(
      now
        ? `"${now.name}" (${now.id}) was in progress and is back to ${now.status}.`
        : `"${leaf.name}" (${leaf.id}) was in progress and is gone at that revision.`,
    );
  }
  for (const leaf of activeNow) {
    if (!activeBefore.some((t) => t.id === leaf.id)) {
      notes.push(`"${leaf.name}" (${leaf.id}) is in progress again.`);
    }
  }
  return { ...counts, notes };
}

/** The past as lookups over the tree now: a task's fields and children then, and fresh copies. */
function pastView(tree: TaskTree, past: PastState, objectOf: (id: string) => Task | undefined) {
  const fieldsOf = (id: string): TaskFields | null => {
    const known = past.fields.get(id);
    if (known !== undefined) return known;
    const task = objectOf(id);
    if (!task) return null;
    const { id: _id, tasks: _tasks, ...fields } = task;
    return fields;
  };
  const childrenOf = (id: string): readonly string[] =>
    past.children.get(id) ??
      (id === "" ? tree.roots : objectOf(id)?.tasks ?? []).map((t) => t.id);
  const build = (id: string, made: Set<string>): Task => {
    const fields = id === "" ? { name: "", description: "", status: "todo" as const } : fieldsOf(id);
    if (!fields || made.has(id)) throw doesNotFit();
    made.add(id);
    return { id, ...fields, tasks: childrenOf(id).map((child) => build(child, made)) };
  };
  return { fieldsOf, childrenOf, build };
}

function doesNotFit(): DomainError {
  return new DomainError(
    "INVALID_INPUT",
    "This session's history does not fit its tasks (the store was changed by other means); it cannot be restored. Rebuild the plan with the task tools.",
  );
}

/**
 * Checks that `revision` can be restored: it is kept (`oldest`–`current`) and history is on.
 * Throws `NOT_FOUND` naming the oldest revision kept.
 */
export function checkRestorable(
  revision: number,
  window: { current: number; oldest: number | undefined; historySize: number },
): void {
  if (window.historySize === 0) {
    fail("NOT_FOUND", "History is off on this server (HISTORY_SIZE=0): no revision is kept to restore.");
  }
  const { current, oldest } = window;
  if (current === 0) {
    fail("NOT_FOUND", `Revision ${revision} is not kept: this session has no revisions yet.`);
  }
  if (oldest === undefined) {
    fail(
      "NOT_FOUND",
      `Revision ${revision} is not kept: no revision of this session is kept (it is at revision ${current}).`,
    );
  }
  if (revision < oldest || revision > current) {
    fail(
      "NOT_FOUND",
      `Revision ${revision} is not kept: the oldest kept is ${oldest} and the newest ${current}. Call task_history to see them.`,
    );
  }
}

/** Adds `entry` to the kept entries (oldest first), keeping the last `size`; returns the new list. */
export function keepLast(
  entries: readonly RecordedChange[],
  entry: RecordedChange,
  size: number,
): RecordedChange[] {
  if (size <= 0) return [];
  const kept = entries.length >= size ? entries.slice(entries.length - size + 1) : [...entries];
  kept.push(entry);
  return kept;
}

/**
 * {@link sameFields}, but two claims of one holding (a renewed lease) are the same, and so are two
 * `git` records (see {@link recordChange}).
 */
function sameRecorded(a: TaskFields, b: TaskFields): boolean {
  for (const key of FIELDS) {
    if (key === "git") continue;
    if (key === "claim" ? !sameHolding(a.claim, b.claim) : !sameValue(a[key], b[key])) return false;
  }
  return true;
}

function sameFields(a: TaskFields, b: TaskFields): boolean {
  for (const key of FIELDS) if (!sameValue(a[key], b[key])) return false;
  return true;
}

/**
 * Whether a change to a task appended a note (`b`'s last note is new; older ones may have gone) and
 * changed nothing else (the `git` record a note refreshes aside): history says `note on "x"`. A
 * restore that takes notes away is an edit.
 */
function onlyNotesDiffer(a: TaskFields, b: TaskFields): boolean {
  const last = b.notes?.at(-1);
  if (!last || a.notes?.some((note) => sameValue(note, last))) return false;
  for (const key of FIELDS) {
    if (key !== "notes" && key !== "notes_dropped" && key !== "git" && !sameValue(a[key], b[key])) {
      return false;
    }
  }
  return true;
}

/**
 * Whether two field values are equal as JSON: strings, numbers, lists, a claim, the notes (a list
 * of small objects). Fields read back from a stored delta are new objects, so identity is not enough.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (typeof a === "object" && typeof b === "object" && a !== null && b !== null) {
    if (Array.isArray(a) || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length &&
      ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

function sameIds(ids: readonly string[], tasks: readonly Task[]): boolean {
  return ids.length === tasks.length && ids.every((id, i) => tasks[i]!.id === id);
}

function* walkTasks(task: Task): Generator<Task> {
  const stack = [task];
  while (stack.length > 0) {
    const t = stack.pop()!;
    yield t;
    stack.push(...t.tasks);
  }
}
