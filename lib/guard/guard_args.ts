/**
 * The commit guard's flags and what they make of the environment (docs/guard.md "Flags"): which
 * session, which agent is "itself", and which store to read (`--url`, `--file`, `--kv`, else
 * `FILE_PATH` or `KV_PATH`). Names are checked by the same schemas as the server's settings.
 */
import { isAbsolute, resolve } from "node:path";
import { ENV_NAMES, loadConfig } from "../config.ts";
import { DEFAULT_NAMESPACE, DEFAULT_SESSION } from "../domain/names.ts";
import { AgentSchema, NamespaceSchema, SessionIdSchema } from "../domain/schemas.ts";
import { GuardError } from "./guard_error.ts";

/** The flags as given. */
export interface GuardFlags {
  /** `--session`: the plan whose reservations count; {@link DEFAULT_SESSION} by default. */
  session: string;
  /** `--agent`: whose reservations are the guard's own. */
  agent?: string;
  /** `--url`: an MCP endpoint (its namespace in the path, `/mcp/NAME`). */
  url?: string;
  /** `--file`: a JSON file store, as `FILE_PATH`. */
  file?: string;
  /** `--kv`: a Deno KV store, as `KV_PATH`. */
  kv?: string;
  /** `--namespace`: the namespace of a file or KV store, as `CHECKLIST_NAMESPACE`. */
  namespace?: string;
  /** `--warn`: list conflicts, but let the commit go ahead. */
  warn: boolean;
  /** `--strict`: refuse the commit (exit 2) when the guard cannot check. */
  strict: boolean;
  /** `--install`: write the `pre-commit` hook instead of checking. */
  install: boolean;
  /** `--force`: with `--install`, replace a hook that is already there. */
  force: boolean;
  /** `--help` or `-h`. */
  help: boolean;
}

/** The one usage line, printed with every flag mistake. */
export const GUARD_USAGE =
  "usage: checklist-mcp guard [--session NAME] [--agent NAME] [--url URL | --file PATH | --kv PATH] " +
  "[--namespace NAME] [--warn] [--strict] [--install [--force]] [--help]";

/** What `--help` prints. */
export const GUARD_HELP = `${GUARD_USAGE}

Checks the paths staged in the git repository it runs in against the live reservations of other
agents (docs/guard.md). Exit 0: nothing reserved; 1: conflicts (listed on stderr); 2: bad flags, or
with --strict a store or repository it cannot reach (without --strict that is one line and exit 0).

  --session NAME    the plan (sessionId) whose reservations count; default "default"
  --agent NAME      your agent: its reservations don't count (default CHECKLIST_AGENT; without
                    either, reservations recorded in this work tree don't count)
  --url URL         ask a server over HTTP (AUTH_TOKEN from the environment), e.g.
                    http://127.0.0.1:8585/mcp/team-a
  --file PATH       read a JSON file store (default FILE_PATH)
  --kv PATH         read a Deno KV store (default KV_PATH)
  --namespace NAME  the namespace in a file or KV store (default CHECKLIST_NAMESPACE, else "default")
  --warn            list conflicts but exit 0
  --strict          exit 2 when the store or the repository cannot be reached
  --install         write a pre-commit hook that runs the guard with these flags
  --force           with --install: replace a pre-commit hook that is already there
`;

const VALUED = {
  "--session": "session",
  "--agent": "agent",
  "--url": "url",
  "--file": "file",
  "--kv": "kv",
  "--namespace": "namespace",
} as const;

const SWITCHES = {
  "--warn": "warn",
  "--strict": "strict",
  "--install": "install",
  "--force": "force",
  "--help": "help",
  "-h": "help",
} as const;

/** Reads the guard's arguments (after `guard`); throws a `usage` {@link GuardError} on any mistake. */
export function parseGuardFlags(args: readonly string[]): GuardFlags {
  const flags: GuardFlags = {
    session: DEFAULT_SESSION,
    warn: false,
    strict: false,
    install: false,
    force: false,
    help: false,
  };
  const given = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (Object.hasOwn(SWITCHES, name)) {
      if (eq !== -1) throw usage(`${name} takes no value`);
      flags[SWITCHES[name as keyof typeof SWITCHES]] = true;
      continue;
    }
    if (!Object.hasOwn(VALUED, name)) {
      throw usage(arg.startsWith("-") ? `unknown flag ${arg}` : `unexpected argument ${JSON.stringify(arg)}`);
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw usage(`${name} needs a value`);
    if (given.has(name)) throw usage(`${name} is given twice`);
    given.add(name);
    flags[VALUED[name as keyof typeof VALUED]] = value;
  }
  check(flags);
  return flags;
}

function check(flags: GuardFlags): void {
  const session = SessionIdSchema.safeParse(flags.session);
  if (!session.success) throw usage(`--session must be 1–100 characters`);
  if (flags.agent !== undefined && !AgentSchema.safeParse(flags.agent).success) {
    throw usage(
      `--agent ${JSON.stringify(flags.agent)}: an agent name is 1–64 characters of A–Z a–z 0–9 . _ -`,
    );
  }
  if (flags.namespace !== undefined && !NamespaceSchema.safeParse(flags.namespace).success) {
    throw usage(
      `--namespace ${JSON.stringify(flags.namespace)}: a namespace is 1–64 characters of A–Z a–z 0–9 . _ -`,
    );
  }
  if (flags.url !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(flags.url);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw usage(`--url ${JSON.stringify(flags.url)} is not an http:// or https:// URL`);
    }
  }
  const places = (["url", "file", "kv"] as const).filter((key) => flags[key] !== undefined);
  if (places.length > 1) throw usage(`give one store: ${places.map((p) => `--${p}`).join(" or ")}`);
  if (flags.url !== undefined && flags.namespace !== undefined) {
    throw usage("--namespace is for --file and --kv; with --url the namespace is in the URL (/mcp/NAME)");
  }
  if (flags.force && !flags.install) throw usage("--force goes with --install");
}

function usage(problem: string): GuardError {
  return new GuardError("usage", `checklist-mcp guard: ${problem}\n${GUARD_USAGE}`);
}

/** Where the guard reads reservations. */
export type GuardStore =
  | { kind: "file"; path: string }
  | { kind: "kv"; path: string }
  | { kind: "url"; url: string; token?: string }
  | { kind: "none" };

/** The flags with the environment filled in: what a check or an install works with. */
export interface GuardSettings {
  store: GuardStore;
  /** The namespace of a file or KV store. */
  namespace: string;
  session: string;
  /** The agent whose reservations are the guard's own (flag, else `CHECKLIST_AGENT`); none: by work tree. */
  agent?: string;
}

/** The settings of lib/config.ts the guard reads from the environment; every other one is ignored. */
const READ = ["filePath", "kvPath", "namespace", "agent"] as const;

/**
 * Fills the flags in from `env` (`FILE_PATH`, `KV_PATH`, `CHECKLIST_NAMESPACE`, `CHECKLIST_AGENT`, and
 * `AUTH_TOKEN` for `--url`), a flag winning over its variable, a store flag over both store variables.
 * A relative store path is taken from `startDir` (where the guard was started). An invalid variable is
 * an `unreachable` {@link GuardError} naming it.
 */
export function guardSettings(
  flags: GuardFlags,
  env: Record<string, string | undefined>,
  startDir: string,
): GuardSettings {
  const byFlag = flags.url !== undefined || flags.file !== undefined || flags.kv !== undefined;
  const picked: Record<string, string | undefined> = {};
  for (const key of READ) {
    if (byFlag && (key === "filePath" || key === "kvPath")) continue;
    if (
      (key === "agent" && flags.agent !== undefined) || (key === "namespace" && flags.namespace !== undefined)
    ) {
      continue; // the flag wins: its variable is not even read
    }
    const name = ENV_NAMES[key]!;
    picked[name] = env[name];
  }
  let config;
  try {
    config = loadConfig(picked);
  } catch (error) {
    throw new GuardError("unreachable", (error as Error).message);
  }
  const local = (path: string) => isAbsolute(path) ? path : resolve(startDir, path);
  const file = flags.file ?? config.filePath;
  const kv = flags.kv ?? config.kvPath;
  const token = env.AUTH_TOKEN?.trim();
  const store: GuardStore = flags.url !== undefined
    ? { kind: "url", url: flags.url, ...(token ? { token } : {}) }
    : file !== undefined
    ? { kind: "file", path: local(file) }
    : kv !== undefined
    ? { kind: "kv", path: kv === ":memory:" || /^https?:\/\//i.test(kv) ? kv : local(kv) }
    : { kind: "none" };
  const agent = flags.agent ?? config.agent;
  return {
    store,
    namespace: flags.namespace ?? config.namespace ?? DEFAULT_NAMESPACE,
    session: flags.session,
    ...(agent === undefined ? {} : { agent }),
  };
}
