/**
 * Running `git`: the one place the server starts it (an edge, like the store). Every run is read-only
 * toward the repository's locks and configuration: `GIT_OPTIONAL_LOCKS=0`, so git never takes the index
 * lock from under an agent's own git command (status would otherwise refresh the index), and
 * `-c core.fsmonitor=false`, so a repository's configuration runs no hook program. A run that takes
 * longer than its time is killed; every way it can fail is a {@link GitError} with a reason.
 */
import { LIMITS } from "../domain/limits.ts";

/** Why git gave nothing: no permission to run it, not installed, not in a work tree, it failed, it hung. */
export type GitFailure = "no-permission" | "missing" | "not-a-work-tree" | "failed" | "timeout";

/** A run of git that gave nothing; `reason` says why, the message says it in words. */
export class GitError extends Error {
  /** Why. */
  readonly reason: GitFailure;

  constructor(reason: GitFailure, message: string) {
    super(message);
    this.name = "GitError";
    this.reason = reason;
  }
}

/** Options of {@link runGit}. */
export interface RunGitOptions {
  /** The directory git runs in. */
  cwd: string;
  /** Milliseconds before the run is killed and fails with `timeout`; {@link LIMITS}.gitMs by default. */
  timeoutMs?: number;
  /** More environment for the child (added to this process's). */
  env?: Record<string, string>;
}

/** What every run gets in its environment (messages in English, so a failure can be told apart). */
const GIT_ENV = { GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", LANGUAGE: "C" };

/**
 * Runs `git -c core.fsmonitor=false …args` in `cwd` and returns what it wrote on stdout. Throws a
 * {@link GitError}: `no-permission` (Deno may not run `git`: checked without prompting), `missing`
 * (no `git` on PATH), `not-a-work-tree` (the directory is not inside one, or does not exist),
 * `timeout` (killed after `timeoutMs`), `failed` (any other non-zero exit, with git's first line).
 */
export async function runGit(args: readonly string[], options: RunGitOptions): Promise<Uint8Array> {
  const timeoutMs = options.timeoutMs ?? LIMITS.gitMs;
  checkPermission();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("git", {
      args: ["-c", "core.fsmonitor=false", ...args],
      cwd: options.cwd,
      env: { ...options.env, ...GIT_ENV },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    throw spawnFailure(error, options.cwd);
  }
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const done = Promise.all([child.status, stdout.bytes, stderr.bytes]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
  const outcome = await Promise.race([done, late]);
  clearTimeout(timer);
  if (outcome === "late") {
    try {
      child.kill("SIGKILL");
    } catch {
      // It ended in the meantime.
    }
    // A child of git's may hold the pipes open: stop reading them rather than wait for it.
    stdout.cancel();
    stderr.cancel();
    done.catch(() => {});
    throw new GitError("timeout", `git ${args[0]} took longer than ${timeoutMs / 1000} s and was stopped`);
  }
  const [status, out, err] = outcome;
  if (status.success) return out;
  const message = new TextDecoder().decode(err).trim().split("\n")[0] || `exit code ${status.code}`;
  if (/not a git repository|must be run in a work tree/i.test(message)) {
    throw new GitError("not-a-work-tree", `${options.cwd} is not inside a git work tree`);
  }
  throw new GitError("failed", `git ${args[0]} failed: ${message}`);
}

/** Refuses before spawning when Deno may not run `git`: a query never prompts (stdin is the protocol). */
function checkPermission(): void {
  let state: Deno.PermissionState;
  try {
    state = Deno.permissions.querySync({ name: "run", command: "git" }).state;
  } catch {
    state = "denied";
  }
  if (state !== "granted") {
    throw new GitError("no-permission", "Deno may not run git (start the server with --allow-run=git)");
  }
}

function spawnFailure(error: unknown, cwd: string): GitError {
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return new GitError("no-permission", `git could not be run: ${(error as Error).message}`);
  }
  if (error instanceof Deno.errors.NotFound) {
    if (!directoryExists(cwd)) return new GitError("not-a-work-tree", `${cwd} does not exist`);
    return new GitError("missing", "git was not found on PATH");
  }
  return new GitError("failed", `git could not be run: ${(error as Error).message}`);
}

function directoryExists(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch (error) {
    // Not allowed to look: assume it exists, so the failure is put on git.
    return !(error instanceof Deno.errors.NotFound);
  }
}

/** Reads a stream to its end into one buffer; `cancel` stops reading (the buffer then holds what came). */
function collect(stream: ReadableStream<Uint8Array>): { bytes: Promise<Uint8Array>; cancel(): void } {
  const reader = stream.getReader();
  const bytes = (async () => {
    const chunks: Uint8Array[] = [];
    let length = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
    const all = new Uint8Array(length);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return all;
  })();
  return { bytes, cancel: () => void reader.cancel().catch(() => {}) };
}
