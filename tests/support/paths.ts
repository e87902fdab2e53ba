/** Where the project is, for tests and benchmarks that start it as a child process. */
import { fileURLToPath } from "node:url";

/** The project root (holds `main.ts` and `deno.json`). */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
/** Absolute path of the entry. */
export const MAIN: string = `${ROOT}/main.ts`;
/** Absolute path of the project's config (children run with `--config` so any cwd works). */
export const CONFIG: string = `${ROOT}/deno.json`;
