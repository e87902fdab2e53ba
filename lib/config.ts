/**
 * Configuration from the environment, with CLI flags of the same meaning (`--stdio`, `--port`,
 * `--host`, `--file`, `--kv`, `--namespace`, `--agent`). Invalid values stop the start with a message naming the variable.
 */
import { z } from "zod";
import { DEFAULT_NAMESPACE } from "./domain/names.ts";
import { AgentSchema, NamespaceSchema } from "./domain/schemas.ts";
import { LOG_LEVELS } from "./log.ts";

/** The tool groups a server can expose (`CHECKLIST_TOOLS`). */
export const TOOL_GROUPS = ["tasks", "checklist", "works", "progress", "history"] as const;
/** One of {@link TOOL_GROUPS}. */
export type ToolGroup = typeof TOOL_GROUPS[number];

/**
 * Whether OAuth claim-made namespaces are a space of their own (`prefixed`: `oauth.NAME`) or the
 * claim's name alone (`shared`), the space a tokens-file namespace of that name is (`OAUTH_NAMESPACES`;
 * lib/auth/namespace.ts).
 */
export const OAUTH_NAMESPACE_MODES = ["prefixed", "shared"] as const;
/** One of {@link OAUTH_NAMESPACE_MODES}. */
export type OAuthNamespaceMode = typeof OAUTH_NAMESPACE_MODES[number];

/**
 * The defaults of the settings that have one (docs/configuration.md); every user reads them here.
 */
export const DEFAULTS = {
  port: 8585,
  host: "127.0.0.1",
  /** Capacity of the work-info cache (docs/requirements.md W4.1). */
  workCacheSize: 10,
  /** Most live HTTP MCP connections. */
  maxConnections: 100,
  /**
   * How long a stop waits for the store to close (a KV lease released, a file write finished) before
   * exiting anyway: the process must be gone within 2 s of its input closing, whatever the store does.
   */
  storeCloseMs: 1_000,
  /** Minutes before an idle HTTP MCP connection is closed. */
  connectionIdleMinutes: 30,
  /** Changes kept per session for `task_history` / `restore_tasks` (docs/history.md). */
  historySize: 100,
  /** The namespace a stdio server works in (docs/namespaces.md). */
  namespace: DEFAULT_NAMESPACE,
  /** The OAuth token claim whose value is the caller's namespace (`OAUTH_NAMESPACE_CLAIM`). */
  oauthNamespaceClaim: "sub",
  /**
   * Claim-made namespaces start with `oauth.`, a space no tokens-file namespace is unless an entry
   * names it (`OAUTH_NAMESPACES`; `shared`: the claim's name alone, as before).
   */
  oauthNamespaces: "prefixed" as OAuthNamespaceMode,
  /** Structured logs on stderr from this level up (`LOG_LEVEL`). */
  logLevel: "info",
  /** Most open dashboard event streams (`/events`). */
  maxEventStreams: 100,
  /** Milliseconds between event-stream heartbeats. */
  heartbeatMs: 15_000,
  /** How often a revocable credential list is checked while connections are open, in milliseconds. */
  revocationCheckMs: 250,
  /** Least milliseconds between two fetches of an OAuth issuer's key set (an unknown key id refetches). */
  jwksCooldownMs: 30_000,
  /** Leeway for an access token's `exp` and `nbf`, in seconds. */
  clockToleranceSec: 5,
} as const;

const list = z.string().transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean));
const flag = z.enum(["1", "0", "true", "false", "yes", "no", ""]).transform((s) =>
  ["1", "true", "yes"].includes(s)
);

const ConfigSchema = z.object({
  transport: z.enum(["http", "stdio"]),
  filePath: z.string().min(1).optional(),
  kvPath: z.string().min(1).optional(),
  port: z.coerce.number().int().min(0).max(65535).default(DEFAULTS.port),
  host: z.string().min(1).default(DEFAULTS.host),
  workCacheSize: z.coerce.number().int().min(1).max(1000).default(DEFAULTS.workCacheSize),
  authToken: z.string().trim().min(1, "is blank: set a token or unset the variable").optional(),
  authTokensFile: z.string().min(1).optional(),
  oauthIssuer: z.url().optional(),
  oauthAudience: z.string().trim().min(1).optional(),
  oauthNamespaceClaim: z.string().trim().min(1).default(DEFAULTS.oauthNamespaceClaim),
  oauthNamespaces: z.enum(OAUTH_NAMESPACE_MODES).default(DEFAULTS.oauthNamespaces),
  publicUrl: z.url().optional(),
  allowedHosts: list.optional(),
  allowedOrigins: list.optional(),
  groups: list.pipe(z.array(z.enum(TOOL_GROUPS)).min(1)).default([...TOOL_GROUPS]),
  logLevel: z.enum(LOG_LEVELS).default(DEFAULTS.logLevel),
  stateless: flag.default(false),
  allowUnauthenticatedRemote: flag.default(false),
  maxConnections: z.coerce.number().int().min(1).max(10_000).default(DEFAULTS.maxConnections),
  connectionIdleMinutes: z.coerce.number().min(1).max(24 * 60).default(DEFAULTS.connectionIdleMinutes),
  historySize: z.coerce.number().int().min(0).max(10_000).default(DEFAULTS.historySize),
  namespace: NamespaceSchema.default(DEFAULTS.namespace),
  /** The agent that calls without `agent` act as (docs/teams.md); unset: the anonymous agent. */
  agent: AgentSchema.optional(),
  /** The work tree whose git a stdio server records (docs/teams.md "Where the work lives"); unset: the working directory. */
  repoDir: z.string().min(1).optional(),
});

/** The parsed configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** The environment variable of each setting. */
export const ENV_NAMES: Readonly<Record<string, string>> = {
  filePath: "FILE_PATH",
  kvPath: "KV_PATH",
  port: "PORT",
  host: "HOST",
  workCacheSize: "WORK_CACHE_SIZE",
  authToken: "AUTH_TOKEN",
  authTokensFile: "AUTH_TOKENS_FILE",
  oauthIssuer: "OAUTH_ISSUER",
  oauthAudience: "OAUTH_AUDIENCE",
  oauthNamespaceClaim: "OAUTH_NAMESPACE_CLAIM",
  oauthNamespaces: "OAUTH_NAMESPACES",
  publicUrl: "PUBLIC_URL",
  allowedHosts: "ALLOWED_HOSTS",
  allowedOrigins: "ALLOWED_ORIGINS",
  groups: "CHECKLIST_TOOLS",
  logLevel: "LOG_LEVEL",
  stateless: "STATELESS",
  allowUnauthenticatedRemote: "ALLOW_UNAUTHENTICATED_REMOTE",
  maxConnections: "MAX_CONNECTIONS",
  connectionIdleMinutes: "CONNECTION_IDLE_MINUTES",
  historySize: "HISTORY_SIZE",
  namespace: "CHECKLIST_NAMESPACE",
  agent: "CHECKLIST_AGENT",
  repoDir: "REPO_DIR",
};

/**
 * Settings that had another name before, by old name: the new one. "Session" means a task tree here,
 * so the settings that count MCP connections were renamed; the old names are still read (the new name
 * wins when both are set), and {@link renamedSettings} says which a start was given.
 */
export const RENAMED_SETTINGS: Readonly<Record<string, string>> = {
  MAX_SESSIONS: ENV_NAMES.maxConnections!,
  SESSION_IDLE_MINUTES: ENV_NAMES.connectionIdleMinutes!,
};

/**
 * The old names set in `env` (not empty), each with its new name and whether it was read (the new one
 * unset).
 */
export function renamedSettings(
  env: Record<string, string | undefined>,
): { old: string; name: string; read: boolean }[] {
  return Object.entries(RENAMED_SETTINGS)
    .filter(([old]) => env[old] !== undefined && env[old] !== "")
    .map(([old, name]) => ({ old, name, read: env[name] === undefined || env[name] === "" }));
}

const FLAGS: Record<string, string> = {
  "--port": "port",
  "--host": "host",
  "--file": "filePath",
  "--kv": "kvPath",
  "--namespace": "namespace",
  "--agent": "agent",
};

/** Reads the configuration; throws an Error whose message names each bad variable. */
export function loadConfig(env: Record<string, string | undefined>, args: readonly string[] = []): Config {
  const raw: Record<string, unknown> = { transport: args.includes("--stdio") ? "stdio" : "http" };
  // On Deno Deploy several isolates answer one URL: no in-memory sessions unless STATELESS=0 says so.
  if (env.DENO_DEPLOYMENT_ID) raw.stateless = "1";
  // The name each value was read under, for the messages: an old name when only it was set.
  const names: Record<string, string> = { ...ENV_NAMES };
  for (const { old, name, read } of renamedSettings(env)) {
    const key = Object.keys(ENV_NAMES).find((k) => ENV_NAMES[k] === name)!;
    if (read) [raw[key], names[key]] = [env[old], old];
  }
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    const value = env[name];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  // A blank token is a mistake, never "no token": it would turn access control off unnoticed.
  if (env.AUTH_TOKEN !== undefined && env.AUTH_TOKEN.trim() === "") raw.authToken = "";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const key = FLAGS[eq === -1 ? arg : arg.slice(0, eq)];
    if (!key) continue;
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value.startsWith("--")) {
      throw new Error(`Invalid configuration: ${arg} needs a value`);
    }
    raw[key] = value;
  }
  // Parsed once: zod's compiled fast path would cost more to build (~1.5 ms of every start) than it saves.
  const parsed = ConfigSchema.safeParse(raw, { jitless: true });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      return `${names[key] ?? key}: ${issue.message}`;
    });
    throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  }
  if (parsed.data.filePath && parsed.data.kvPath) {
    throw new Error("Invalid configuration: set FILE_PATH or KV_PATH, not both");
  }
  return parsed.data;
}
