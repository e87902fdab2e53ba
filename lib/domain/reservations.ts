/**
 * Reservations (docs/teams.md "Paths and reservations"): a leaf's paths are its own, else those of
 * its nearest ancestor that has any; a live claim of a named agent reserves its leaf's paths in that
 * session. Which reservations a leaf's paths would collide with, the `RESERVED` refusal of a start,
 * the check that keeps "no two live claims reserve overlapping paths" after a change, and
 * checkPaths' question (which live reservations overlap these paths) are here.
 *
 * Pure, beside the claim rules of team.ts: the clock is the actor's (an expired claim reserves
 * nothing, judged when read), and every store runs these inside its atomic change of one session, so
 * a leaf is chosen with its reservation checked atomically, across processes too. Overlap is
 * path_overlap.ts; patterns are stored normalised (path_patterns.ts).
 */
import { fail } from "./errors.ts";
import { LIMITS } from "./limits.ts";
import { type CompiledPattern, compilePattern, compilePatterns, overlapCompiled } from "./path_overlap.ts";
import { normalizePaths, normalizePattern } from "./path_patterns.ts";
import type { PathConflict, ReservedLeaf, Task } from "./schemas.ts";
import type { TaskTree } from "./task_tree.ts";
import { type Actor, isLive } from "./team.ts";

/** One live reservation: a named agent's live claim on a leaf, with the leaf's paths. */
export interface Reservation {
  /** The agent whose claim it is. */
  agent: string;
  /** The leaf it holds. */
  leaf: Task;
  /** The end of the claim's lease. */
  expires_at: string;
  /** The leaf's paths, its own or inherited, normalised; never empty. */
  paths: readonly string[];
}

/** A collision of some paths with one reservation: the overlapping patterns, `[mine, theirs]`. */
export interface ReservationConflict {
  reservation: Reservation;
  /** At most {@link PAIRS_SHOWN}, in the order of the two lists; at least one. */
  pairs: [string, string][];
}

/** Overlapping pairs kept per conflict, in replies and messages (32 × 32 would be a wall of text). */
export const PAIRS_SHOWN = 8;

const NO_PATHS: readonly string[] = Object.freeze([]);

/** The paths that bind `task`: its own, else those of its nearest ancestor that has any; none: `[]`. */
export function pathsOf(tree: TaskTree, task: Task): readonly string[] {
  for (let t: Task | undefined = task; t; t = tree.parentOf(t)) if (t.paths?.length) return t.paths;
  return NO_PATHS;
}

/**
 * Every live reservation in the session at `now`, by agent then leaf id, leaving out those `exclude`
 * accepts (e.g. the caller's own, or, for a commit guard, the holders working in its work tree).
 * Looks at the leaves in progress only, never the whole tree.
 */
export function liveReservations(
  tree: TaskTree,
  options: { now: number; exclude?: (reservation: Reservation) => boolean },
): Reservation[] {
  const out: Reservation[] = [];
  for (const leaf of tree.activeLeaves()) {
    const claim = leaf.claim;
    if (!claim || !isLive(claim, options.now)) continue;
    const paths = pathsOf(tree, leaf);
    if (paths.length === 0) continue;
    const reservation = { agent: claim.agent, leaf, expires_at: claim.expires_at, paths };
    if (!options.exclude?.(reservation)) out.push(reservation);
  }
  return out.sort((a, b) => compare(a.agent, b.agent) || compare(a.leaf.id, b.leaf.id));
}

/** The live reservations that bind `actor` now: every other agent's (all of them for the anonymous agent). */
export function othersReservations(tree: TaskTree, actor: Actor): Reservation[] {
  return liveReservations(tree, { now: actor.now, exclude: (r) => r.agent === actor.agent });
}

/** One reserved pattern in a {@link ReservationIndex}: which reservation, which of its patterns. */
interface Reserved {
  reservation: number;
  theirs: number;
  pattern: CompiledPattern;
}

/**
 * Reservations arranged for overlap tests: their patterns by first segment where it is literal, the
 * others apart. A pattern whose first segment is literal can only meet patterns with the same first
 * segment or a wildcard there, so a leaf's `src/api/**` is never tried against `docs/**`.
 */
export interface ReservationIndex {
  readonly reservations: readonly Reservation[];
  readonly all: readonly Reserved[];
  readonly byFirst: ReadonlyMap<string, readonly Reserved[]>;
  readonly wild: readonly Reserved[];
}

/** The {@link ReservationIndex} of `reservations` (from {@link liveReservations}). */
export function indexReservations(reservations: readonly Reservation[]): ReservationIndex {
  const all: Reserved[] = [];
  const byFirst = new Map<string, Reserved[]>();
  const wild: Reserved[] = [];
  reservations.forEach((r, reservation) => {
    compilePatterns(r.paths).forEach((pattern, theirs) => {
      const entry = { reservation, theirs, pattern };
      all.push(entry);
      const first = pattern.segments[0]!;
      if (first.glob) wild.push(entry);
      else {
        const list = byFirst.get(first.text);
        if (list) list.push(entry);
        else byFirst.set(first.text, [entry]);
      }
    });
  });
  return { reservations, all, byFirst, wild };
}

const NONE: readonly Reserved[] = Object.freeze([]);

/**
 * The reservations that `paths` (normalised) overlap, in the index's order, each with its overlapping
 * pairs `[mine, theirs]` in the order of the two lists. With `first`, stops at the first overlapping
 * pair found (a yes or no is all a scan needs).
 */
export function conflictsWith(
  paths: readonly string[],
  index: ReservationIndex,
  options: { first?: boolean } = {},
): ReservationConflict[] {
  if (paths.length === 0 || index.all.length === 0) return [];
  return conflictsOf(compilePatterns(paths), index, options.first === true);
}

function conflictsOf(
  mine: readonly CompiledPattern[],
  index: ReservationIndex,
  first: boolean,
): ReservationConflict[] {
  const found = new Map<number, [number, number][]>();
  for (const [i, a] of mine.entries()) {
    const head = a.segments[0]!;
    const lists = head.glob ? [index.all] : [index.byFirst.get(head.text) ?? NONE, index.wild];
    for (const list of lists) {
      for (const entry of list) {
        if (overlapCompiled(a, entry.pattern) === undefined) continue;
        if (first) {
          return [{
            reservation: index.reservations[entry.reservation]!,
            pairs: [[a.source, entry.pattern.source]],
          }];
        }
        const pairs = found.get(entry.reservation);
        if (pairs) pairs.push([i, entry.theirs]);
        else found.set(entry.reservation, [[i, entry.theirs]]);
      }
    }
  }
  return [...found].sort(([a], [b]) => a - b).map(([r, pairs]) => {
    const reservation = index.reservations[r]!;
    const theirs = compilePatterns(reservation.paths);
    return {
      reservation,
      pairs: pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]).slice(0, PAIRS_SHOWN).map((
        [m, t],
      ) => [mine[m]!.source, theirs[t]!.source] as [string, string]),
    };
  });
}

/**
 * What a scan for ready leaves asks of each candidate (team.ts `scanReady`): the reservations of
 * other agents its paths collide with, or undefined when it is free. The reservations are read and
 * indexed once, on the first candidate that has paths.
 */
export function reservedFor(tree: TaskTree, actor: Actor): (leaf: Task) => ReservationConflict[] | undefined {
  let others: ReservationIndex | undefined;
  return (leaf) => {
    const paths = pathsOf(tree, leaf);
    if (paths.length === 0) return undefined;
    others ??= indexReservations(othersReservations(tree, actor));
    const conflicts = conflictsWith(paths, others);
    return conflicts.length > 0 ? conflicts : undefined;
  };
}

/** A leaf waiting on reservations as claimTask lists it (`reserved`). */
export function reservedLeaf(leaf: Task, conflicts: readonly ReservationConflict[]): ReservedLeaf {
  return {
    id: leaf.id,
    name: leaf.name,
    conflicts: conflicts.map(({ reservation: r, pairs }) => ({
      id: r.leaf.id,
      agent: r.agent,
      expires_at: r.expires_at,
      pairs,
    })),
  };
}

/** One line on a leaf waiting on reservations, for claimTask's text. */
export function reservedLine(leaf: Task, conflicts: readonly ReservationConflict[]): string {
  const holders = conflicts.map(({ reservation: r, pairs }) =>
    `${r.agent} (${r.leaf.id}, until ${r.expires_at}): ${pairs.map(([m, t]) => `${m} ~ ${t}`).join(", ")}`
  );
  return `- ${leaf.id} "${leaf.name}": paths reserved by ${holders.join("; ")}`;
}

/**
 * Refuses (`RESERVED`) to take `leaf` for `actor` (any agent, the anonymous one included) while its
 * paths overlap another agent's live reservation, naming the holder, its task, the end of its lease
 * and the overlapping pairs.
 */
export function guardReserved(tree: TaskTree, leaf: Task, actor: Actor, verb: string): void {
  const paths = pathsOf(tree, leaf);
  if (paths.length === 0) return;
  const others = indexReservations(othersReservations(tree, actor));
  if (conflictsWith(paths, others, { first: true }).length === 0) return;
  const conflicts = conflictsWith(paths, others);
  const blocker = conflicts[0]!.reservation.leaf.id;
  const advice =
    `Pick another task (claimTask passes over reserved ones), or wait until "${blocker}" is done or its lease expires.`;
  fail("RESERVED", reservedMessage(`${verb} "${leaf.name}" (${leaf.id})`, conflicts, advice));
}

/** The text of a `RESERVED` refusal: `Cannot start "x" (x): agent "a" reserves src/api/** (task …`, then `advice`. */
function reservedMessage(
  what: string,
  conflicts: readonly ReservationConflict[],
  advice: string,
  held?: Reservation,
): string {
  const { reservation: r, pairs } = conflicts[0]!;
  const [mine, theirs] = pairs[0]!;
  const more = pairs.length > 1 ? ` (also ${pairs.slice(1).map(([m, t]) => `${t} ~ ${m}`).join(", ")})` : "";
  const rest = conflicts.slice(1).map((c) => `"${c.reservation.agent}"`);
  const others = rest.length === 0
    ? ""
    : ` Agent${rest.length > 1 ? "s" : ""} ${rest.join(", ")} reserve${
      rest.length > 1 ? "" : "s"
    } some of it too.`;
  const whose = held ? ` of "${held.leaf.name}" (${held.leaf.id}), held by agent "${held.agent}"` : "";
  return `Cannot ${what}: agent "${r.agent}" reserves ${theirs} (task "${r.leaf.name}" (${r.leaf.id}), until ${r.expires_at}): overlaps ${mine}${whose}${more}.${others} ${advice}`;
}

/**
 * Refuses (`RESERVED`) a change after which two live claims of different agents reserve overlapping
 * paths where, before it (`before`, from {@link liveReservations}), they did not: a change of paths on
 * a held leaf or on an ancestor it inherits from, a restore, a move. Reservations the change left as
 * they were are not judged again (a store edited by hand may hold old overlaps; a change never adds
 * one). `what` completes "Cannot …" in the message.
 */
export function checkReservationsKept(
  tree: TaskTree,
  before: readonly Reservation[],
  options: { now: number; what: string },
): void {
  const after = liveReservations(tree, { now: options.now });
  const kept = (r: Reservation) =>
    before.some((b) => b.leaf.id === r.leaf.id && b.agent === r.agent && samePaths(b.paths, r.paths));
  for (const changed of after) {
    if (kept(changed)) continue;
    const others = indexReservations(after.filter((r) => r.agent !== changed.agent));
    const conflicts = conflictsWith(changed.paths, others);
    if (conflicts.length === 0) continue;
    const advice =
      "Two live claims never reserve one path: keep the paths apart, or change them once one of these tasks is done.";
    fail("RESERVED", reservedMessage(options.what, conflicts, advice, changed));
  }
}

/**
 * Sets `task`'s paths (normalised; `[]` clears them), keeping reservations apart: refused with
 * `RESERVED` when a leaf someone holds live, this task or one inheriting from it, would then overlap
 * another agent's live reservation. Any agent may change any task's paths otherwise (paths are a plan
 * edit, as the text is); a holder's reservation follows the change at once.
 */
export function setPaths(tree: TaskTree, task: Task, paths: readonly string[], actor: Actor): void {
  const normal = normalizePaths(paths, `"${task.id}"`);
  const before = liveReservations(tree, { now: actor.now });
  tree.setField(task, "paths", normal.length > 0 ? normal : undefined);
  checkReservationsKept(tree, before, {
    now: actor.now,
    what: `set the paths of "${task.name}" (${task.id})`,
  });
}

/**
 * checkPaths' answer (docs/tools.md): for each of `paths` (paths or patterns, as given; each checked
 * and normalised, an invalid one refused naming it), every live reservation not left out by `exclude`
 * that overlaps it, with the holder's first overlapping pattern. In the order of `paths`, then by
 * agent. The commit guard asks the same question of the paths it stages.
 */
export function pathConflicts(
  tree: TaskTree,
  paths: readonly string[],
  options: { now: number; exclude?: (reservation: Reservation) => boolean },
): PathConflict[] {
  const asked = paths.map((path) => ({
    path,
    pattern: compilePattern(normalizePattern(path, LIMITS.checkedPathLength)),
  }));
  const index = indexReservations(liveReservations(tree, options));
  const out: PathConflict[] = [];
  if (index.all.length === 0) return out;
  for (const { path, pattern } of asked) {
    for (const { reservation: r, pairs } of conflictsOf([pattern], index, false)) {
      out.push({
        path,
        agent: r.agent,
        task_id: r.leaf.id,
        task_name: r.leaf.name,
        pattern: pairs[0]![1],
        expires_at: r.expires_at,
      });
    }
  }
  return out;
}

function samePaths(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((p, i) => p === b[i]));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
