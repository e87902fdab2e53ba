/**
 * The git recorder a stdio server is given (docs/teams.md "Where the work lives"): before a change that
 * may record where an agent's work lives, it reads the work tree; when git gives nothing (no permission,
 * not installed, not in a work tree, a failure, past its time) it answers undefined, the change goes ahead
 * unrecorded, and the first such time in the recorder's life is one `info` log line saying why.
 *
 * Cheap under a team's load (issue 35): the work tree's top is read once, with the first record, and
 * then only `git status` runs; changes that ask while a read is running share the one read that starts
 * after it ({@link sharedAfter}), so each still gets what git saw after it asked, and a burst of
 * changes costs two reads, not one each. Where git cannot answer for a while (the directory is not
 * in a work tree, git is missing or not permitted), it is not asked again for {@link RETRY_MS}: a
 * server started outside a project spawns git once a minute, not once per change.
 */
import type { GitState } from "../domain/schemas.ts";
import type { Logger } from "../log.ts";
import { GitError } from "./run_git.ts";
import { readTopLevel, readWorkTree } from "./work_tree.ts";

/** Reads where the work lives now; undefined when nothing can be recorded. Never throws. */
export type GitReader = () => Promise<GitState | undefined>;

/** How long a recorder rests after git said it cannot answer here (not a work tree, missing, no permission). */
export const RETRY_MS = 60_000;

/** Failures that stay until something outside the server changes: asked again only after a rest. */
const LASTING = new Set(["not-a-work-tree", "missing", "no-permission"]);

/** Options of {@link createGitRecorder}. */
export interface GitRecorderOptions {
  /** The directory whose work tree is recorded (`REPO_DIR`, else the server's working directory). */
  dir: string;
  log: Logger;
  /** Milliseconds git may take per record; `LIMITS.gitMs` by default. */
  timeoutMs?: number;
  /** Milliseconds of rest after a lasting failure; {@link RETRY_MS} by default. */
  retryMs?: number;
}

/** A {@link GitReader} over `options.dir` that logs why it records nothing, once (one recorder per process). */
export function createGitRecorder(options: GitRecorderOptions): GitReader {
  const { dir, timeoutMs, retryMs = RETRY_MS } = options;
  let told = false;
  let toplevel: Promise<string> | undefined;
  let restUntil = 0;
  const read = sharedAfter(async () => {
    try {
      // A failed read of the top is read again next time (git may be installed, or the directory made one).
      toplevel ??= readTopLevel(dir, { timeoutMs }).catch((error) => {
        toplevel = undefined;
        throw error;
      });
      return await readWorkTree(dir, { timeoutMs, toplevel: await toplevel });
    } catch (error) {
      if (error instanceof GitError && LASTING.has(error.reason)) restUntil = Date.now() + retryMs;
      if (!told) {
        told = true;
        const reason = error instanceof GitError ? error.reason : "failed";
        options.log.info("where work lives is not recorded", { reason, why: (error as Error).message, dir });
      }
      return undefined;
    }
  });
  return () => (Date.now() < restUntil ? Promise.resolve(undefined) : read());
}

/**
 * `read`, shared: a call while no read runs starts one; calls while one runs share the next read,
 * which starts when the running one ends. So every caller gets the result of a read that started
 * after it called, and any number of calls during one read cost one more read.
 */
export function sharedAfter<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const current: Promise<T> = read().finally(() => {
      if (running === current) running = undefined;
    });
    running = current;
    return current;
  };
  return () => {
    if (!running) return start();
    next ??= running.then(noop, noop).then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}

function noop(): void {}
