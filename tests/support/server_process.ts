/**
 * The server as a child process: `main.ts` over HTTP on a free loopback port (`deno run` or `deno
 * serve`), any HTTP server command (the benchmarks' too) started and stopped the same way, and
 * commands run to their end.
 */
import { serverEnv } from "./env.ts";
import { CONFIG, MAIN, ROOT } from "./paths.ts";
import { type ChildCommand, freePort, spawnChild, terminate, waitForHealth } from "./processes.ts";

/**
 * The arguments of `deno run -A --config deno.json main.ts …args` (any working directory will do);
 * `permissions` replaces `-A`.
 */
export function mainArgs(args: readonly string[] = [], permissions: readonly string[] = ["-A"]): string[] {
  return ["run", ...permissions, "--config", CONFIG, MAIN, ...args];
}

/** The permission flags of a deno.json task (`deno run FLAGS main.ts …`), as the task runs it. */
export async function taskPermissions(name: string): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(CONFIG)) as { tasks: Record<string, string> };
  return tasks[name]!.split(/\s+/).filter((word) => word.startsWith("--allow-") || word === "-A");
}

/** The arguments of `deno serve -A --config deno.json --host HOST --port PORT main.ts`. */
export function serveArgs(host: string, port: number): string[] {
  return ["serve", "-A", "--config", CONFIG, "--host", host, "--port", String(port), MAIN];
}

/** `deno` with {@link mainArgs} in the project root, with the server environment plus `env`. */
export function mainCommand(args: readonly string[], env: Record<string, string> = {}): ChildCommand {
  return { command: Deno.execPath(), args: mainArgs(args), cwd: ROOT, env: serverEnv(env) };
}

/** A server process listening on a loopback port. */
export interface ServerProcess extends AsyncDisposable {
  child: Deno.ChildProcess;
  /** Base URL, e.g. `http://127.0.0.1:41234`; the MCP endpoint is `${url}/mcp`. */
  url: string;
  port: number;
  /** Stops the process (SIGTERM, then SIGKILL after the grace time) and returns its exit code and stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/** Options of {@link startHttpProcess}. */
export interface HttpProcessOptions {
  /** The port `cmd` listens on (on 127.0.0.1). */
  port: number;
  /** `piped` (default) keeps stderr for {@link ServerProcess.stop}; `null` discards it. */
  stderr?: "piped" | "null";
  /** How long a stop waits after SIGTERM before SIGKILL; 10 s by default. */
  graceMs?: number;
  /** Names the server in the error when it does not start. */
  label?: string;
}

/** Starts an HTTP server command and waits until `/healthz` answers; stops it again when it does not. */
export async function startHttpProcess(
  cmd: ChildCommand,
  options: HttpProcessOptions,
): Promise<ServerProcess> {
  const { port } = options;
  const child = spawnChild(cmd, { stderr: options.stderr ?? "piped" });
  const stderr = options.stderr === "null" ? Promise.resolve("") : new Response(child.stderr).text();
  let stopped: Promise<{ code: number; stderr: string }> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      const status = await terminate(child, options.graceMs);
      return { code: status.code, stderr: await stderr };
    })();
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, child);
  } catch (error) {
    const { stderr: text } = await stop();
    throw new Error(`${options.label ?? "server"} did not start: ${(error as Error).message}\n${text}`);
  }
  return { child, url, port, stop, [Symbol.asyncDispose]: async () => void await stop() };
}

/** Options of {@link spawnServer}. */
export interface SpawnServerOptions {
  /** `run` (default): `deno run -A main.ts`; `serve`: `deno serve -A --host 127.0.0.1 --port N main.ts`. */
  mode?: "run" | "serve";
  env?: Record<string, string>;
  /** Extra arguments after `main.ts`. */
  args?: string[];
  /**
   * Another checkout whose `main.ts` to start (with this checkout's `deno.json`), e.g. one of `main`
   * for a before/after benchmark; this one by default.
   */
  root?: string;
}

/** Starts `main.ts` on a free loopback port and waits until `/healthz` answers. */
export function spawnServer(options: SpawnServerOptions = {}): Promise<ServerProcess> {
  const port = freePort();
  const env = serverEnv({ PORT: String(port), HOST: "127.0.0.1", ...options.env });
  const cmd = options.mode === "serve"
    ? { command: Deno.execPath(), args: serveArgs("127.0.0.1", port), cwd: ROOT, env }
    : { command: Deno.execPath(), args: mainArgs(), cwd: ROOT, env };
  const main = options.root === undefined ? MAIN : `${options.root}/main.ts`;
  const args = [...cmd.args.map((arg) => (arg === MAIN ? main : arg)), ...(options.args ?? [])];
  return startHttpProcess({ ...cmd, args }, { port, label: options.root });
}

/** How a command run by {@link runToEnd} ended. */
export interface RunOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno …args` to its end (stdin closed, server environment plus `env`); returns its code and output. */
export async function runToEnd(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<RunOutput> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    env: serverEnv(options.env),
    clearEnv: true,
    cwd: options.cwd ?? ROOT,
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/**
 * Runs `main.ts --stdio` with stdin closed and waits for it to exit: a server that starts ends at
 * once (end of input), one that cannot start exits non-zero with its reason on stderr.
 */
export function runMain(
  options: { env?: Record<string, string>; args?: string[]; cwd?: string } = {},
): Promise<RunOutput> {
  return runToEnd(mainArgs(["--stdio", ...(options.args ?? [])]), {
    env: { LOG_LEVEL: "warn", ...options.env },
    cwd: options.cwd,
  });
}
