/**
 * `checklist-mcp guard --install` (docs/guard.md "The hook"): writes a `pre-commit` hook that runs the
 * guard the way it was started (the binary by its absolute path, else `deno task --config
 * ABS/deno.json guard`), with the flags given and the store's place baked in (never a secret:
 * `AUTH_TOKEN` is read at commit time), into the directory git runs hooks from (`git rev-parse
 * --git-path hooks`, which honours `core.hooksPath`). A hook already there is left as it is, and the
 * line that calls the guard from it is given, unless `--force` (the old one is then kept beside it as
 * `pre-commit.orig`). A hook this command wrote before is replaced: installing again updates it.
 *
 * Git keeps hooks per repository (its common directory), so one hook serves every linked work tree
 * (`git worktree add`): each commit is checked in its own work tree, against its own agents. Only a
 * relative `core.hooksPath` gives each work tree its own.
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { runGit } from "../git/run_git.ts";
import type { GuardFlags, GuardSettings } from "./guard_args.ts";

/** The permissions of the `guard` task (deno.json) and of a `deno run` of the guard: git, files, env, net. */
export const GUARD_PERMISSIONS: readonly string[] = [
  "--allow-run=git",
  "--allow-read",
  "--allow-env",
  "--allow-net",
  "--allow-write",
];

/** The marker on a hook's second line that says this command wrote it. */
const MARKER = "# checklist-mcp commit guard";

/** How to start the guard again, from a hook. */
export interface GuardInvocation {
  /** The command and its arguments up to and including `guard`. */
  argv: string[];
  /** Set `INIT_CWD` to the hook's directory first (a `deno task` runs in its config's directory). */
  initCwd: boolean;
}

/** This module's place when it runs from a checkout: the project's directory is two rooms up. */
const FROM_SOURCE = /\/lib\/guard\/hook_install\.ts$/;

/**
 * The directories a `deno task` of this project may run the guard in (its deno.json's): the entry's
 * (main.ts's, or a bundle's), and from a checkout the project's, two rooms above this module (`deno
 * task guard` starts lib/guard/guard_main.ts). Empty for the compiled binary and a remote entry.
 */
export function projectDirectories(): string[] {
  if (Deno.build.standalone) return [];
  const main = new URL(Deno.mainModule);
  if (main.protocol !== "file:") return [];
  const dirs = [dirname(filePath(main))];
  const here = new URL(import.meta.url);
  if (here.protocol === "file:" && FROM_SOURCE.test(here.pathname)) {
    const root = dirname(dirname(dirname(filePath(here))));
    if (!dirs.includes(root)) dirs.push(root);
  }
  return dirs;
}

/**
 * How this process was started, as a command a hook can run anywhere: the compiled binary, else `deno
 * task --config DIR/deno.json guard` when a deno.json of {@link projectDirectories} has a `guard` task
 * (quiet: no "Task" line), else `deno run` of the entry (a bundle) with {@link GUARD_PERMISSIONS}.
 * Absolute paths throughout.
 */
export async function guardInvocation(): Promise<GuardInvocation> {
  const deno = Deno.execPath();
  if (Deno.build.standalone) return { argv: [deno, "guard"], initCwd: false };
  const main = new URL(Deno.mainModule);
  if (main.protocol !== "file:") {
    return { argv: [deno, "run", ...GUARD_PERMISSIONS, main.href, "guard"], initCwd: false };
  }
  for (const dir of projectDirectories()) {
    const config = join(dir, "deno.json");
    try {
      const { tasks } = JSON.parse(await Deno.readTextFile(config)) as { tasks?: Record<string, unknown> };
      if (typeof tasks?.guard === "string") {
        return { argv: [deno, "task", "-q", "--config", config, "guard"], initCwd: true };
      }
    } catch {
      // No deno.json there (a bundle): look on, else run the entry directly.
    }
  }
  return {
    argv: [deno, "run", "--no-config", "--unstable-kv", ...GUARD_PERMISSIONS, filePath(main), "guard"],
    initCwd: false,
  };
}

/** A `file:` URL's path on this system (a drive letter without its leading slash on Windows). */
function filePath(url: URL): string {
  return decodeURIComponent(url.pathname.replace(/^\/([A-Za-z]:)/, "$1"));
}

/**
 * The flags a hook passes: those given at install (`--session`, `--agent`, `--url`, `--warn`,
 * `--strict`) and the store in effect (`--file` or `--kv` with an absolute path, `--namespace` when not
 * the default), so the hook checks the same place whatever the environment of a commit.
 */
export function bakedFlags(flags: GuardFlags, settings: GuardSettings): string[] {
  const out: string[] = [];
  if (flags.session !== "default") out.push("--session", flags.session);
  if (flags.agent !== undefined) out.push("--agent", flags.agent);
  const store = settings.store;
  if (store.kind === "url") out.push("--url", store.url);
  if (store.kind === "file") out.push("--file", store.path);
  if (store.kind === "kv") out.push("--kv", store.path);
  if ((store.kind === "file" || store.kind === "kv") && settings.namespace !== "default") {
    out.push("--namespace", settings.namespace);
  }
  if (flags.warn) out.push("--warn");
  if (flags.strict) out.push("--strict");
  return out;
}

/** `argv` as one line of POSIX shell: each word as it is when that is safe, else single-quoted. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((word) =>
    /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
  )
    .join(" ");
}

/** The shell command that runs the guard from a hook. */
export function guardCommand(invocation: GuardInvocation, flags: readonly string[]): string {
  const line = shellLine([...invocation.argv, ...flags]);
  return invocation.initCwd ? `INIT_CWD="$PWD" ${line}` : line;
}

/** The hook's text: a shell script whose last command, and so its exit code, is the guard's. */
export function hookScript(command: string): string {
  return [
    "#!/bin/sh",
    `${MARKER}: refuses a commit of paths that another agent's live claim reserves.`,
    "# Written by `checklist-mcp guard --install` (docs/guard.md); `git commit --no-verify` skips it.",
    command,
    "",
  ].join("\n");
}

/** Whether `text` is a hook {@link hookScript} wrote, unchanged in shape (so installing again may replace it). */
export function isOurHook(text: string): boolean {
  const lines = text.split("\n");
  return lines.length === 5 && lines[0] === "#!/bin/sh" && lines[1]!.startsWith(`${MARKER}:`) &&
    lines[2]!.startsWith("# ") && lines[3]!.length > 0 && !lines[3]!.startsWith("#") && lines[4] === "";
}

/** What an install did. */
export type InstallResult =
  | {
    kind: "installed";
    /** The hook's path. */
    hook: string;
    /** What was there: nothing, a hook of ours (updated), or another hook (`--force`, kept as `orig`). */
    replaced: "none" | "ours" | "other";
    orig?: string;
    /** Work trees of the repository that run this hook (1 when only this one does). */
    sharedBy: number;
  }
  | { kind: "left"; hook: string };

/** Options of {@link installHook}. */
export interface InstallOptions {
  /** A directory inside the work tree. */
  dir: string;
  /** The hook's command ({@link guardCommand}). */
  command: string;
  /** Replace a hook that is not ours. */
  force: boolean;
  /** Milliseconds each git run may take. */
  timeoutMs?: number;
}

/**
 * Writes the hook (see the module doc) and says what it did. Throws a `GitError` (run_git.ts) when
 * `dir` is not in a work tree or git cannot be run, and a Deno error when the file cannot be written.
 */
export async function installHook(options: InstallOptions): Promise<InstallResult> {
  const git = async (...args: string[]) =>
    new TextDecoder().decode(await runGit(args, { cwd: options.dir, timeoutMs: options.timeoutMs })).replace(
      /\n$/,
      "",
    );
  const [hooksOut, commonOut, top, list] = await Promise.all([
    git("rev-parse", "--git-path", "hooks"),
    git("rev-parse", "--git-common-dir"),
    git("rev-parse", "--show-toplevel"),
    git("worktree", "list", "--porcelain"),
  ]);
  const here = (path: string) => isAbsolute(path) ? path : resolve(options.dir, path);
  const hooks = here(hooksOut);
  const hook = join(hooks, "pre-commit");
  let replaced: "none" | "ours" | "other" = "none";
  const existing = await readIfThere(hook);
  if (existing !== undefined) {
    replaced = isOurHook(existing) ? "ours" : "other";
    if (replaced === "other" && !options.force) return { kind: "left", hook };
  }
  await Deno.mkdir(hooks, { recursive: true });
  let orig: string | undefined;
  if (replaced === "other") {
    orig = `${hook}.orig`;
    await Deno.rename(hook, orig);
  }
  const temp = `${hook}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    await Deno.writeTextFile(temp, hookScript(options.command), { mode: 0o755 });
    if (Deno.build.os !== "windows") await Deno.chmod(temp, 0o755);
    await Deno.rename(temp, hook);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  const worktrees = list.split("\n").filter((line) => line.startsWith("worktree ")).length;
  // A relative core.hooksPath is a directory of each work tree; anything else is one for all of them.
  const [realHooks, realCommon, realTop] = await Promise.all([hooks, here(commonOut), top].map(realPath));
  const perWorkTree = isInside(realHooks!, realTop!) && !isInside(realHooks!, realCommon!);
  return {
    kind: "installed",
    hook,
    replaced,
    ...(orig === undefined ? {} : { orig }),
    sharedBy: perWorkTree ? 1 : Math.max(1, worktrees),
  };
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      // A dangling symbolic link is a hook someone set up, too.
      try {
        await Deno.lstat(path);
        return "";
      } catch {
        return undefined;
      }
    }
    throw error;
  }
}

async function realPath(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}
