/**
 * The git recorder a stdio server is given (docs/teams.md "Where the work lives"): before a change that
 * may record where an agent's work lives, it reads the work tree; when git gives nothing (no permission,
 * not installed, not in a work tree, a failure, past its time) it answers undefined, the change goes ahead
 * unrecorded, and the first such time in the recorder's life is one `info` log line saying why.
 */
import type { GitState } from "../domain/schemas.ts";
import type { Logger } from "../log.ts";
import { GitError } from "./run_git.ts";
import { readWorkTree } from "./work_tree.ts";

/** Reads where the work lives now; undefined when nothing can be recorded. Never throws. */
export type GitReader = () => Promise<GitState | undefined>;

/** Options of {@link createGitRecorder}. */
export interface GitRecorderOptions {
  /** The directory whose work tree is recorded (`REPO_DIR`, else the server's working directory). */
  dir: string;
  log: Logger;
  /** Milliseconds git may take per record; `LIMITS.gitMs` by default. */
  timeoutMs?: number;
}

/** A {@link GitReader} over `options.dir` that logs why it records nothing, once (one recorder per process). */
export function createGitRecorder(options: GitRecorderOptions): GitReader {
  let told = false;
  return async () => {
    try {
      return await readWorkTree(options.dir, { timeoutMs: options.timeoutMs });
    } catch (error) {
      if (!told) {
        told = true;
        const reason = error instanceof GitError ? error.reason : "failed";
        options.log.info("where work lives is not recorded", {
          reason,
          why: (error as Error).message,
          dir: options.dir,
        });
      }
      return undefined;
    }
  };
}
