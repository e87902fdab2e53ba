/**
 * Where the work in a directory lives, read from git (docs/teams.md "Where the work lives"): one
 * `git status --porcelain=v2 --branch -z` and one `git rev-parse --show-toplevel`, run at once, made
 * into a {@link GitState} that always fits its schema (texts past their limit are left out, never cut).
 */
import { LIMITS } from "../domain/limits.ts";
import type { GitState } from "../domain/schemas.ts";
import { runGit } from "./run_git.ts";
import { type GitStatus, parseStatus } from "./status_parse.ts";

/** Options of {@link readWorkTree}. */
export interface ReadWorkTreeOptions {
  /** Milliseconds each git run may take; {@link LIMITS}.gitMs by default. */
  timeoutMs?: number;
  /** The top of the work tree when already known ({@link readTopLevel}): then only `git status` runs. */
  toplevel?: string;
}

/** The arguments of the one status run: untracked directories shown as one entry each, as git's default. */
export const STATUS_ARGS: readonly string[] = [
  "status",
  "--porcelain=v2",
  "--branch",
  "-z",
  "--untracked-files=normal",
];

/**
 * Reads where the work in `dir` lives; throws a {@link GitError} (run_git.ts) when git gives nothing.
 * Both runs start at once, so a record costs about one `git status` (only that one with `toplevel`).
 */
export async function readWorkTree(dir: string, options: ReadWorkTreeOptions = {}): Promise<GitState> {
  const [status, toplevel] = await Promise.all([
    runGit(STATUS_ARGS, { cwd: dir, timeoutMs: options.timeoutMs }),
    options.toplevel ?? readTopLevel(dir, options),
  ]);
  return workTreeState(parseStatus(new TextDecoder().decode(status)), toplevel);
}

/**
 * The top directory of the work tree `dir` is in (`git rev-parse --show-toplevel`), as git writes it
 * (the real path; forward slashes on Windows too). Throws a {@link GitError} (run_git.ts) as runGit does.
 */
export async function readTopLevel(dir: string, options: ReadWorkTreeOptions = {}): Promise<string> {
  const top = await runGit(["rev-parse", "--show-toplevel"], { cwd: dir, timeoutMs: options.timeoutMs });
  // rev-parse ends the path with one newline (the path itself may hold more).
  return new TextDecoder().decode(top).replace(/\n$/, "");
}

/**
 * The record of a parsed status in the work tree `toplevel`: `dirty` lists the first
 * {@link LIMITS}.gitDirty paths (changed, renamed under their new name, unmerged, untracked; never
 * ignored) in path order, `dirty_count` counts them all; ahead and behind only with an upstream.
 */
export function workTreeState(status: GitStatus, toplevel: string): GitState {
  const state: GitState = {};
  const worktree = bounded(toplevel);
  if (worktree !== undefined) state.worktree = worktree;
  const branch = bounded(status.branch);
  if (branch !== undefined) state.branch = branch;
  if (status.head !== undefined && /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(status.head)) {
    state.head = status.head;
  }
  const upstream = bounded(status.upstream);
  if (upstream !== undefined) {
    state.upstream = upstream;
    if (status.ahead !== undefined) state.ahead = status.ahead;
    if (status.behind !== undefined) state.behind = status.behind;
  }
  const paths = status.entries.filter((entry) => entry.kind !== "ignored").map((entry) => entry.path);
  const listed = paths.filter((path) => bounded(path) !== undefined).sort(byCodePoint).slice(
    0,
    LIMITS.gitDirty,
  );
  if (listed.length > 0) state.dirty = listed;
  state.dirty_count = paths.length;
  return state;
}

/** `text` when it is 1–{@link LIMITS}.gitTextLength characters, else undefined (decoding made it well-formed). */
function bounded(text: string | undefined): string | undefined {
  return text !== undefined && text.length > 0 && text.length <= LIMITS.gitTextLength ? text : undefined;
}

/**
 * Compares by code point, as git orders paths (by bytes of UTF-8): JavaScript's own order compares
 * UTF-16 units, which puts characters past U+FFFF before U+E000–U+FFFF.
 */
export function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const surrogateX = x >= 0xd800 && x <= 0xdfff;
    const surrogateY = y >= 0xd800 && y <= 0xdfff;
    if (surrogateX !== surrogateY) return surrogateX ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
