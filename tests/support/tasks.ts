/**
 * Runs a `deno.json` task as a user would (`deno task --quiet NAME ARGS…`, from the project root),
 * for the tests of the release tooling (tests/release/).
 */
import { serverEnv } from "./env.ts";
import { CONFIG, ROOT } from "./paths.ts";

/** What a finished task printed, and how it ended. */
export interface TaskRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs task `name` with `args`; `env` is added to a child environment free of server settings. */
export async function runTask(
  name: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<TaskRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", CONFIG, name, ...args],
    cwd: ROOT,
    env: serverEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}
