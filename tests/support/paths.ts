/** Where the project is, for tests and benchmarks that start it as a child process. */
import { fileURLToPath } from "node:url";

/** The project root (holds `main.ts` and `deno.json`). */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
/** Absolute path of the entry. */
export const MAIN: string = `${ROOT}/main.ts`;
/** Absolute path of the project's config (children run with `--config` so any cwd works). */
export const CONFIG: string = `${ROOT}/deno.json`;
/**
 * A directory that does not exist, for a child server's `REPO_DIR` when a test is not about git records:
 * the server then runs no `git` at all for a named agent's change (in the project root it would run
 * `git status` and `git rev-parse` on this checkout at every claim, start and completion).
 */
export const NO_WORK_TREE: string = `${ROOT}/.no-work-tree`;
