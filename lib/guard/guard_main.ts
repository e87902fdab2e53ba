/**
 * `checklist-mcp guard` (docs/guard.md): what main.ts hands `guard …` to, loaded only then, and what
 * `deno task guard` runs directly, so that the hook of every commit loads the guard alone and not the
 * server's modules main.ts imports (about 70 ms a commit, BENCHMARKS.md "The commit guard").
 * It runs the edges in order — git for the work tree and the staged paths, then the store (a file, Deno
 * KV, or an endpoint over HTTP) within {@link LIMITS}.guardMs — and hands what they read to the pure
 * decision (guard_check.ts) and its words (guard_report.ts). `--install` writes the hook instead.
 */
import { LIMITS } from "../domain/limits.ts";
import type { PathConflict } from "../domain/schemas.ts";
import { GitError } from "../git/run_git.ts";
import {
  GUARD_HELP,
  type GuardFlags,
  type GuardSettings,
  guardSettings,
  parseGuardFlags,
} from "./guard_args.ts";
import { recordedWorkTrees, stagedConflicts } from "./guard_check.ts";
import { GuardError } from "./guard_error.ts";
import { GUARD_EXIT, type GuardOutcome, guardVerdict } from "./guard_report.ts";
import {
  bakedFlags,
  guardCommand,
  guardInvocation,
  installHook,
  projectDirectories,
} from "./hook_install.ts";
import { readStaged, type StagedCommit } from "./staged_paths.ts";

/** Where a run reads its environment and writes its words; the process's own by default. */
export interface GuardIo {
  env: Record<string, string | undefined>;
  /** The process's working directory. */
  cwd: string;
  /** Writes one line on stderr (conflicts, problems). */
  warn: (line: string) => void;
  /** Writes one line on stdout (`--help`, what `--install` did). */
  say: (line: string) => void;
  /** The clock leases are judged by. */
  now: () => number;
}

function processIo(): GuardIo {
  return {
    env: Deno.env.toObject(),
    cwd: workingDirectory(),
    warn: (line) => console.error(line),
    say: (line) => console.log(line),
    now: () => Date.now(),
  };
}

/** The working directory, or `.` where Deno may not read it (git then runs there all the same). */
function workingDirectory(): string {
  try {
    return Deno.cwd();
  } catch {
    return ".";
  }
}

/** Runs the guard with `args` (what follows `guard`); returns the exit code (docs/guard.md "Exit codes"). */
export async function runGuard(args: readonly string[], io: GuardIo = processIo()): Promise<number> {
  let flags: GuardFlags;
  try {
    flags = parseGuardFlags(args);
  } catch (error) {
    if (!(error instanceof GuardError)) throw error;
    io.warn(error.message);
    return GUARD_EXIT.notChecked;
  }
  if (flags.help) {
    io.say(GUARD_HELP.trimEnd());
    return GUARD_EXIT.ok;
  }
  const startDir = startDirectory(io.env, io.cwd);
  const outcome = await settled(() => {
    const settings = guardSettings(flags, io.env, startDir);
    return flags.install ? install(flags, settings, startDir, io) : check(settings, startDir, io.now);
  });
  if (typeof outcome === "number") return outcome;
  if (flags.install && outcome.kind === "unreachable") {
    io.warn(`checklist-mcp guard: cannot install (${outcome.reason}).`);
    return GUARD_EXIT.notChecked;
  }
  const verdict = guardVerdict(outcome, {
    warn: flags.warn,
    strict: flags.strict,
    session: flags.session,
    now: io.now(),
  });
  for (const line of verdict.lines) io.warn(line);
  return verdict.code;
}

/**
 * Runs `step`; what it throws becomes an outcome. Anything but a usage error means the guard could not
 * check (a permission Deno refused, a failure of ours): one line, and exit 0 or 2 as `--strict` says,
 * never the 1 that would read as a conflict.
 */
async function settled(step: () => Promise<GuardOutcome | number>): Promise<GuardOutcome | number> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof GuardError && error.kind === "usage") {
      return { kind: "usage", message: error.message };
    }
    if (error instanceof GuardError || error instanceof GitError) {
      return { kind: "unreachable", reason: error.message };
    }
    return { kind: "unreachable", reason: `it failed: ${(error as Error)?.message ?? error}` };
  }
}

/**
 * Where the guard was started: `INIT_CWD` when it runs as a `deno task` (Deno then runs it in the
 * directory of the config, the project's, and names the directory the task was started in), else the
 * working directory (hook_install.ts's {@link projectDirectories} says which directories are the project's). A compiled binary, or a process started elsewhere, ignores a stray `INIT_CWD`
 * (npm sets one for every script it runs).
 */
export function startDirectory(env: Record<string, string | undefined>, cwd: string): string {
  const init = env.INIT_CWD;
  if (!init) return cwd;
  const here = realPath(cwd);
  return projectDirectories().some((dir) => cwd === dir || here === realPath(dir)) ? init : cwd;
}

function realPath(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** The check: git first (the work tree, the staged paths), then the store, within the time allowed. */
async function check(settings: GuardSettings, startDir: string, now: () => number): Promise<GuardOutcome> {
  const timeoutMs = LIMITS.guardMs;
  let commit: StagedCommit;
  try {
    commit = await readStaged(startDir, { timeoutMs });
  } catch (error) {
    if (error instanceof GitError && error.reason === "not-a-work-tree") {
      throw new GuardError("unreachable", `${startDir} is not in a git work tree`);
    }
    throw error;
  }
  const { top, staged } = commit;
  if (staged.length === 0) return { kind: "checked", conflicts: [], staged };
  const paths = staged.map((s) => s.path);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new GuardError("unreachable", `the store did not answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  try {
    const conflicts = await Promise.race([reservedFor(settings, paths, top, now), late]);
    return { kind: "checked", conflicts, staged };
  } finally {
    clearTimeout(timer);
  }
}

/** The conflicts of `paths` in the configured store, the guard's own reservations left out. */
async function reservedFor(
  settings: GuardSettings,
  paths: readonly string[],
  top: string,
  now: () => number,
): Promise<PathConflict[]> {
  const { store, session, agent } = settings;
  const ownWorkTrees = (worktrees: readonly string[]) => sameDirectories(worktrees, top);
  if (store.kind === "none") {
    throw new GuardError("unreachable", "no store: set FILE_PATH or KV_PATH, or pass --url");
  }
  if (store.kind === "url") {
    const { remoteConflicts } = await import("./remote_check.ts");
    return await remoteConflicts({
      url: store.url,
      ...(store.token === undefined ? {} : { token: store.token }),
      session,
      paths,
      ...(agent === undefined ? { ownWorkTrees } : { agent }),
    });
  }
  const { readFileTree, readKvTree } = await import("./store_read.ts");
  const read = store.kind === "file" ? readFileTree : readKvTree;
  const tree = await read(store.path, { namespace: settings.namespace, session, timeoutMs: LIMITS.guardMs });
  if (!tree) return [];
  const at = now();
  const self = agent !== undefined
    ? { agent }
    : { ownWorkTree: await ownWorkTrees(recordedWorkTrees(tree, at)) };
  return stagedConflicts(tree, paths, { now: at, self });
}

/** Which of `dirs` are the directory `top`, compared as real paths (a directory gone stays as written). */
async function sameDirectories(dirs: readonly string[], top: string): Promise<(dir: string) => boolean> {
  const real = (path: string) => Deno.realPath(path).catch(() => path);
  const own = await real(top);
  const same = new Set<string>();
  await Promise.all(dirs.map(async (dir) => {
    if (dir === top || (await real(dir)) === own) same.add(dir);
  }));
  return (dir) => same.has(dir);
}

/** `--install`: writes the hook and says what it did; 0 installed, 1 a hook left as it was, 2 a failure. */
async function install(
  flags: GuardFlags,
  settings: GuardSettings,
  startDir: string,
  io: GuardIo,
): Promise<number> {
  const command = guardCommand(await guardInvocation(), bakedFlags(flags, settings));
  let result;
  try {
    result = await installHook({ dir: startDir, command, force: flags.force, timeoutMs: LIMITS.guardMs });
  } catch (error) {
    const reason = error instanceof GitError && error.reason === "not-a-work-tree"
      ? `${startDir} is not in a git work tree`
      : (error as Error).message;
    io.warn(`checklist-mcp guard: cannot install (${reason}).`);
    return GUARD_EXIT.notChecked;
  }
  if (result.kind === "left") {
    io.say(
      `A pre-commit hook is already at ${result.hook}; it was left as it is. To run the guard from it, add:`,
    );
    io.say(`  ${command} || exit $?`);
    io.say("or run again with --force to replace it (the old one is then kept as pre-commit.orig).");
    return 1;
  }
  const what = result.replaced === "ours"
    ? "Updated the commit guard"
    : result.replaced === "other"
    ? `Replaced the pre-commit hook (the old one is kept as ${result.orig})`
    : "Installed the commit guard";
  io.say(`${what}: ${result.hook} runs, before each commit (git commit --no-verify skips it):`);
  io.say(`  ${command}`);
  if (result.sharedBy > 1) {
    io.say(
      `Git runs this hook in all ${result.sharedBy} work trees of this repository; in each one, the ` +
        "reservations of agents whose work is recorded there are its own and don't count.",
    );
    if (flags.agent !== undefined) {
      io.say(
        `Note: --agent ${flags.agent} is baked in, so in every work tree only ${flags.agent}'s reservations ` +
          "are left out; install without --agent to tell agents apart by work tree.",
      );
    }
  }
  if (settings.store.kind === "none") {
    io.say("No store was given: the hook reads FILE_PATH or KV_PATH from the environment of each commit.");
  }
  return GUARD_EXIT.ok;
}

if (import.meta.main) Deno.exit(await runGuard(Deno.args));
