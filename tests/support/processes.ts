/**
 * Child processes: starting one with exactly the environment given, finding a free port, waiting
 * for `/healthz`, and stopping one (SIGTERM, then SIGKILL), so no test or benchmark can hang on a
 * process that does not stop.
 */
import { sleep } from "./time.ts";

/** How to start a process: the program, its arguments, its working directory, its whole environment. */
export interface ChildCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Which standard streams a child gets; each is `null` unless asked for. */
export interface ChildIo {
  stdin?: "piped" | "null";
  stdout?: "piped" | "null";
  stderr?: "piped" | "null";
}

/** Starts `cmd` with its environment alone (nothing inherited); piped streams must be read or closed. */
export function spawnChild(cmd: ChildCommand, io: ChildIo = {}): Deno.ChildProcess {
  return new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd: cmd.cwd,
    env: cmd.env,
    clearEnv: true,
    stdin: io.stdin ?? "null",
    stdout: io.stdout ?? "null",
    stderr: io.stderr ?? "null",
  }).spawn();
}

/** A free TCP port on 127.0.0.1 (listen on 0, read the port, close). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Sends SIGTERM and waits for the exit; a process still alive after `graceMs` is killed (status
 * 137), so a server that ignores SIGTERM fails its test instead of hanging the suite.
 */
export async function terminate(child: Deno.ChildProcess, graceMs = 10_000): Promise<Deno.CommandStatus> {
  const killer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Exited meanwhile.
    }
  }, graceMs);
  try {
    child.kill("SIGTERM");
  } catch {
    // Already exited.
  }
  try {
    return await child.status;
  } finally {
    clearTimeout(killer);
  }
}

/** Polls `${url}/healthz` until it answers 200 with JSON; fails when the child exits first or after `timeoutMs`. */
export async function waitForHealth(
  url: string,
  child: Deno.ChildProcess,
  timeoutMs = 30_000,
): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (exited) throw new Error("the process exited");
    try {
      const response = await fetch(`${url}/healthz`);
      const body = await response.text();
      if (response.ok) return void JSON.parse(body);
    } catch {
      // Not listening yet.
    }
    await sleep(50);
  }
  throw new Error(`no answer on /healthz after ${timeoutMs / 1000} s`);
}
