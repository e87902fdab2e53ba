/**
 * What a packaged server tells its users, written once for the bundle's `manifest.json` (mcpb
 * `user_config`) and the MCP Registry's `server.json` (`environmentVariables`): the settings a user of
 * the binary over stdio may set, each with its variable, and the names the release files carry.
 */
import { DEFAULTS, ENV_NAMES, TOOL_GROUPS } from "../../lib/config.ts";
import { LOG_LEVELS } from "../../lib/log.ts";

/** The binary's name (`deno task compile` writes `dist/checklist-mcp`). */
export const BINARY_NAME = "checklist-mcp";
/** The server's one-line description (the registry allows at most 100 characters). */
export const DESCRIPTION =
  "Task trees, handoff notes and progress docs for agents; MCP 2026-07-28 and 2025, over stdio or HTTP.";

/** One setting a packaged server's user may set. */
export interface UserSetting {
  /** The `user_config` key in manifest.json (snake_case, as mcpb examples write them). */
  key: string;
  /** The environment variable the server reads. */
  env: string;
  kind: "string" | "number";
  title: string;
  description: string;
  /** What the server uses when the variable is unset or empty; `""` when it has no default. */
  default: string | number;
  min?: number;
  max?: number;
}

/**
 * The settings of a stdio server, in the order a user meets them. HTTP-only settings (port, tokens,
 * OAuth) are left out: a bundle or registry package runs over stdio. An optional text setting defaults
 * to `""`, which the server reads as unset (lib/config.ts), so a client that fills in every default
 * starts the server with its own defaults.
 */
export const USER_SETTINGS: readonly UserSetting[] = [
  {
    key: "file_path",
    env: ENV_NAMES.filePath!,
    kind: "string",
    title: "Task file",
    description:
      "Absolute path of a JSON file that keeps tasks, works and progress (created when missing). " +
      "Empty: memory only, unless a KV path is set.",
    default: "",
  },
  {
    key: "kv_path",
    env: ENV_NAMES.kvPath!,
    kind: "string",
    title: "Deno KV path",
    description:
      "Keep everything in Deno KV at this path or KV Connect URL instead of a file. Empty: not used.",
    default: "",
  },
  {
    key: "namespace",
    env: ENV_NAMES.namespace!,
    kind: "string",
    title: "Namespace",
    description:
      "The namespace this server works in; servers in different namespaces never see each other's data.",
    default: DEFAULTS.namespace,
  },
  {
    key: "agent",
    env: "CHECKLIST_AGENT",
    kind: "string",
    title: "Agent name",
    description:
      "The agent that calls without an `agent` argument act as, when several agents share one plan.",
    default: "",
  },
  {
    key: "repo_dir",
    env: ENV_NAMES.repoDir!,
    kind: "string",
    title: "Repository directory",
    description:
      "The git work tree whose branch, HEAD and uncommitted files are recorded on the tasks an agent works on. " +
      "Empty: the directory the client starts the server in.",
    default: "",
  },
  {
    key: "history_size",
    env: ENV_NAMES.historySize!,
    kind: "number",
    title: "History size",
    description: "Changes kept per session for task_history and restore_tasks; 0 keeps none.",
    default: DEFAULTS.historySize,
    min: 0,
    max: 10_000,
  },
  {
    key: "work_cache_size",
    env: ENV_NAMES.workCacheSize!,
    kind: "number",
    title: "Work cache size",
    description: "How many saved work summaries are kept (least recently used first out).",
    default: DEFAULTS.workCacheSize,
    min: 1,
    max: 1000,
  },
  {
    key: "tools",
    env: ENV_NAMES.groups!,
    kind: "string",
    title: "Tool groups",
    description: `Comma list of the tool groups to expose: ${TOOL_GROUPS.join(",")}.`,
    default: TOOL_GROUPS.join(","),
  },
  {
    key: "log_level",
    env: ENV_NAMES.logLevel!,
    kind: "string",
    title: "Log level",
    description: `Level of the JSON logs on stderr: ${LOG_LEVELS.join(", ")}.`,
    default: "info",
  },
];

/** deno.json's `version`, the one version of a release. */
export async function projectVersion(config = new URL("../../deno.json", import.meta.url)): Promise<string> {
  const { version } = JSON.parse(await Deno.readTextFile(config));
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new Error(`deno.json: "version" must be an exact semantic version, not ${JSON.stringify(version)}`);
  }
  return version;
}
