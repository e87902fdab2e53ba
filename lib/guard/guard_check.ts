/**
 * The commit guard's decision (docs/guard.md "What it checks"), pure: which live reservations of other
 * agents the staged paths fall under, and which holders are the guard's own. The store, git and an
 * HTTP endpoint are edges (guard_main.ts) that hand it a tree, the staged paths and the self rule.
 *
 * A staged path is a file name, not a pattern: a reservation counts when one of its patterns matches
 * the name. A plain name (no `*`, `?` or `\`, within checkPaths' length) asks reservations.ts's
 * `pathConflicts`, where a name without wildcards overlaps exactly the patterns that match it; any
 * other name is matched pattern by pattern (`matchesPath`), where nothing in it is special.
 */
import { LIMITS } from "../domain/limits.ts";
import { GLOBSTAR, matchesPath, patternProblem } from "../domain/path_patterns.ts";
import { liveReservations, pathConflicts, type Reservation } from "../domain/reservations.ts";
import type { GitRecord, PathConflict } from "../domain/schemas.ts";
import type { TaskTree } from "../domain/task_tree.ts";

/** Who the guard is: its agent when named, else the work tree it runs in. */
export interface GuardSelf {
  /** `--agent` or `CHECKLIST_AGENT`: this agent's reservations are its own, nobody else's. */
  agent?: string;
  /**
   * Without an agent: whether a recorded work tree (a `git.worktree`) is the guard's own. A holder
   * whose record there is its own (`git.agent` is the holder) is the guard itself.
   */
  ownWorkTree?: (worktree: string) => boolean;
}

/**
 * Whether the reservation of `holder`, whose task carries `record`, is the guard's own: the named
 * agent's, or, with no agent named, one the holder recorded in the guard's own work tree. A record
 * another agent left (a takeover by a server that records nothing) says nothing about the holder.
 */
export function isOwnReservation(holder: string, record: GitRecord | undefined, self: GuardSelf): boolean {
  if (self.agent !== undefined) return holder === self.agent;
  if (!self.ownWorkTree || record?.worktree === undefined || record.agent !== holder) return false;
  return self.ownWorkTree(record.worktree);
}

/** The work trees the holders of live reservations recorded (for the edge to resolve before a check). */
export function recordedWorkTrees(tree: TaskTree, now: number): string[] {
  const out = new Set<string>();
  for (const r of liveReservations(tree, { now })) {
    const worktree = r.leaf.git?.worktree;
    if (worktree !== undefined && r.leaf.git?.agent === r.agent) out.add(worktree);
  }
  return [...out];
}

/** Whether a staged name can be asked of `pathConflicts` as it is: a valid pattern without wildcards. */
export function isPlainPath(path: string): boolean {
  return !/[*?\\]/.test(path) && path.length <= LIMITS.checkedPathLength &&
    patternProblem(path) === undefined &&
    !path.endsWith("/") && !path.startsWith("./");
}

/**
 * The live reservations of others that the staged `paths` fall under at `now`: for each path, in the
 * order given (a repeated one once), every holder but the guard's own ({@link isOwnReservation}), with the holder's first
 * pattern that matches it.
 */
export function stagedConflicts(
  tree: TaskTree,
  paths: readonly string[],
  options: { now: number; self: GuardSelf },
): PathConflict[] {
  const exclude = (r: Reservation) => isOwnReservation(r.agent, r.leaf.git, options.self);
  const unique = [...new Set(paths)];
  const plain = unique.filter(isPlainPath);
  const byPath = new Map<string, PathConflict[]>();
  for (const conflict of pathConflicts(tree, plain, { now: options.now, exclude })) {
    const list = byPath.get(conflict.path);
    if (list) list.push(conflict);
    else byPath.set(conflict.path, [conflict]);
  }
  const odd = unique.filter((path) => !isPlainPath(path));
  if (odd.length > 0) {
    const reservations = liveReservations(tree, { now: options.now, exclude });
    for (const path of odd) {
      const found: PathConflict[] = [];
      for (const r of reservations) {
        const pattern = r.paths.find((p) => matchesPath(path, p));
        if (pattern === undefined) continue;
        found.push({
          path,
          agent: r.agent,
          task_id: r.leaf.id,
          task_name: r.leaf.name,
          pattern,
          expires_at: r.expires_at,
        });
      }
      if (found.length > 0) byPath.set(path, found);
    }
  }
  return unique.flatMap((path) => byPath.get(path) ?? []);
}

/**
 * What to ask checkPaths (over `--url`) about a staged name: the name itself when it is a plain path,
 * else the narrowest valid pattern that matches it: each `\` becomes `?`, a run of `*` inside a longer
 * segment becomes one `*`, and a name past checkPaths' length is cut to a directory with `/**`. A
 * name holding `*` or `?` is asked as the pattern it reads as. Each asks about a superset of the name,
 * so a conflict is never missed; a few names may report one that a local store would not.
 */
export function queryPattern(path: string): string {
  if (isPlainPath(path)) return path;
  const segments = path.split("/").map((segment) =>
    segment === GLOBSTAR ? segment : segment.replaceAll("\\", "?").replace(/\*{2,}/g, "*")
  );
  const max = LIMITS.checkedPathLength;
  let out = segments.join("/");
  while (out.length > max && segments.length > 1) {
    segments.pop();
    out = `${segments.join("/")}/${GLOBSTAR}`;
  }
  return out.length > max ? GLOBSTAR : out;
}
