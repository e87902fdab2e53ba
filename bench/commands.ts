/**
 * How the benchmarks start each server: this one exactly as its `deno.json` tasks do (`stdio`,
 * `start`), and the floors (SDK v2's `floor_server.ts`, SDK v1's `floor_v1_server.ts`) with the same
 * permissions. Every child gets the environment of `tests/support/env.ts`: ours without any server
 * setting.
 */
import { serverEnv } from "../tests/support/env.ts";
import { ROOT } from "../tests/support/paths.ts";
import type { ChildCommand } from "../tests/support/processes.ts";
import { type ServerProcess, startHttpProcess } from "../tests/support/server_process.ts";

/** Which SDK line a floor is built on: v2 (`@modelcontextprotocol/server`) or v1 (`@modelcontextprotocol/sdk`). */
export type FloorSdk = "v2" | "v1";

/** The floor servers (one no-op tool), by SDK line. */
export const FLOORS: Readonly<Record<FloorSdk, string>> = {
  v2: `${ROOT}/bench/floor_server.ts`,
  v1: `${ROOT}/bench/floor_v1_server.ts`,
};
/** SDK v2's floor as a `deno serve` module. */
export const FLOOR_SERVE: string = `${ROOT}/bench/floor_serve.ts`;
/** Deno alone: answers one line by hand, importing nothing. */
export const HELLO: string = `${ROOT}/bench/cold/hello.ts`;
/** SDK v2's `McpServer` and `serveStdio` alone, no tool: what any server on SDK v2's server classes pays. */
export const SDK_ONLY: string = `${ROOT}/bench/cold/sdk_import.ts`;

/** A floor's name in the tables. */
export function floorLabel(sdk: FloorSdk): string {
  return `${sdk} floor`;
}

/** How to start one server, and its name in the tables. */
export interface ServerCommand extends ChildCommand {
  label: string;
}

/** A `deno.json` task `deno run FLAGS ENTRY ARGS` (of the checkout at `root`) split into its parts. */
async function taskParts(
  task: string,
  root = ROOT,
): Promise<{ flags: string[]; entry: string; args: string[] }> {
  const config = JSON.parse(await Deno.readTextFile(`${root}/deno.json`)) as {
    tasks: Record<string, string>;
  };
  const words = (config.tasks[task] ?? "").split(/\s+/).filter(Boolean);
  const entry = words.findIndex((w, i) => i >= 2 && !w.startsWith("-"));
  if (words[0] !== "deno" || words[1] !== "run" || entry < 0) {
    throw new Error(`task ${task} is not "deno run … FILE"`);
  }
  return { flags: words.slice(2, entry), entry: words[entry]!, args: words.slice(entry + 1) };
}

/** `run` and the words of a task after `deno run`. */
async function taskArgs(task: string, root = ROOT): Promise<string[]> {
  const { flags, entry, args } = await taskParts(task, root);
  return ["run", ...flags, entry, ...args];
}

/**
 * This server over stdio, exactly as the `stdio` task starts it; with `root`, the server of another
 * checkout (e.g. a worktree of `main` to compare against), started by that checkout's own task.
 */
export async function serverStdio(env: Record<string, string> = {}, root = ROOT): Promise<ServerCommand> {
  return {
    label: root === ROOT ? "checklist-mcp" : `checklist-mcp at ${root}`,
    command: Deno.execPath(),
    args: await taskArgs("stdio", root),
    cwd: root,
    env: serverEnv(env),
  };
}

/** A floor over stdio (SDK v2's unless `sdk` says otherwise), with the permissions of the `stdio` task. */
export async function floorStdio(sdk: FloorSdk = "v2"): Promise<ServerCommand> {
  return {
    label: floorLabel(sdk),
    command: Deno.execPath(),
    args: ["run", ...(await taskParts("stdio")).flags, FLOORS[sdk], "--stdio"],
    cwd: ROOT,
    env: serverEnv(),
  };
}

/** A cold-start baseline (`HELLO`, `SDK_ONLY`) over stdio, with the permissions of the `stdio` task. */
export async function baselineStdio(label: string, file: string): Promise<ServerCommand> {
  return {
    label,
    command: Deno.execPath(),
    args: ["run", ...(await taskParts("stdio")).flags, file],
    cwd: ROOT,
    env: serverEnv(),
  };
}

/**
 * This server as the `bundle` task builds it (one `.mjs`, written to `output` here), run the way the
 * README says: `deno run --no-config` with the permissions of the `stdio` task.
 */
export async function bundleStdio(output: string): Promise<ServerCommand> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`)) as {
    tasks: Record<string, string>;
  };
  const words = (config.tasks.bundle ?? "").split(/\s+/).filter(Boolean);
  if (words[0] !== "deno" || words[1] !== "bundle") throw new Error('task bundle is not "deno bundle …"');
  await denoBundle(words.slice(1).map((w) => (w.endsWith(".mjs") ? output : w)), "deno task bundle");
  return {
    label: "checklist-mcp bundle",
    command: Deno.execPath(),
    args: ["run", "--no-config", ...(await taskParts("stdio")).flags, output, "--stdio"],
    cwd: ROOT,
    env: serverEnv(),
  };
}

/**
 * This server's own modules bundled into a few chunks (`deno bundle --code-splitting --packages
 * external` into `outdir`), npm packages still loaded from the import map: the same code as
 * {@link serverStdio} runs, in about a fifth of the files. Part 1 runs it to show what loading each
 * of our modules as its own file costs a `deno run` start.
 */
export async function splitBundleStdio(outdir: string): Promise<ServerCommand> {
  await Deno.remove(outdir, { recursive: true }).catch(() => {});
  const split = ["--code-splitting", "--packages", "external", "--platform", "deno", "--outdir", outdir];
  await denoBundle(["bundle", ...split, "main.ts"], "deno bundle --code-splitting");
  return {
    label: "checklist-mcp, split bundle",
    command: Deno.execPath(),
    args: [
      "run",
      "--config",
      `${ROOT}/deno.json`,
      ...(await taskParts("stdio")).flags,
      `${outdir}/main.js`,
      "--stdio",
    ],
    cwd: ROOT,
    env: serverEnv(),
  };
}

/** Runs `deno ARGS` (a `bundle` command) in the project root; throws with its stderr, as `what`, when it fails. */
async function denoBundle(args: string[], what: string): Promise<void> {
  const built = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "null", stderr: "piped" })
    .output();
  if (!built.success) throw new Error(`${what} failed: ${new TextDecoder().decode(built.stderr)}`);
}

/** This server over HTTP on `port`, exactly as the `start` task starts it. */
export async function serverHttp(port: number, env: Record<string, string> = {}): Promise<ServerCommand> {
  return {
    label: "checklist-mcp",
    command: Deno.execPath(),
    args: await taskArgs("start"),
    cwd: ROOT,
    env: serverEnv({ PORT: String(port), HOST: "127.0.0.1", ...env }),
  };
}

/** This server under `deno serve` on 127.0.0.1:`port`, with the permissions of the `start` task. */
export async function serverServe(port: number, env: Record<string, string> = {}): Promise<ServerCommand> {
  const { flags, entry } = await taskParts("start");
  return {
    label: "checklist-mcp (deno serve)",
    command: Deno.execPath(),
    args: ["serve", ...flags, "--host", "127.0.0.1", "--port", String(port), entry],
    cwd: ROOT,
    env: serverEnv(env),
  };
}

/** SDK v2's floor under `deno serve` on 127.0.0.1:`port` (bench/floor_serve.ts), with the `start` task's permissions. */
export async function floorServe(port: number): Promise<ServerCommand> {
  return {
    label: "v2 floor (deno serve)",
    command: Deno.execPath(),
    args: [
      "serve",
      ...(await taskParts("start")).flags,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      FLOOR_SERVE,
    ],
    cwd: ROOT,
    env: serverEnv(),
  };
}

/**
 * A floor over HTTP on `port` (SDK v2's unless `sdk` says otherwise), with the permissions of the
 * `start` task.
 */
export async function floorHttp(
  port: number,
  env: Record<string, string> = {},
  sdk: FloorSdk = "v2",
): Promise<ServerCommand> {
  return {
    label: floorLabel(sdk),
    command: Deno.execPath(),
    args: ["run", ...(await taskParts("start")).flags, FLOORS[sdk]],
    cwd: ROOT,
    env: serverEnv({ PORT: String(port), ...env }),
  };
}

/**
 * Starts an HTTP server command on `port` and waits for `/healthz` (at most 30 s); stderr is
 * discarded and a stop waits 2 s after SIGTERM before SIGKILL.
 */
export function startHttpServer(cmd: ServerCommand, port: number): Promise<ServerProcess> {
  return startHttpProcess(cmd, { port, stderr: "null", graceMs: 2000, label: cmd.label });
}
