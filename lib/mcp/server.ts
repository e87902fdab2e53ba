/**
 * The one factory of our MCP server: for a store, a namespace, an access level and an era, a fresh
 * SDK `Server` with the tools of the configured groups, the instructions, and (resources.ts) the
 * resources, templates and the `resume` prompt. stdio (`serveStdio`), HTTP (`createMcpHandler` and
 * the sessionful handshake-era wiring) and the tests build every server here, so both eras get the
 * same tools, arguments, replies, instructions, resources and prompts; only the envelope differs,
 * and that is the SDK's.
 *
 * Features beside the tool groups (the plan view) meet the server at one seam (feature.ts): the
 * server is handed them and knows nothing else of them.
 *
 * Why the low-level `Server` and not `McpServer`: the tool list is computed per request (read access
 * lists only read-only tools; a feature's own tools are listed only to clients that show it), and
 * `tools/call` answers bad arguments with a coded tool result the agent can read (`INVALID_INPUT`,
 * docs/requirements.md "Hostile input" I2), where the SDK answers a JSON-RPC error carrying its
 * validator's dump; {@link ChecklistServer} (checklist_server.ts) is that one difference.
 */
import type { AccessLevel } from "../auth/credential.ts";
import { DEFAULTS, TOOL_GROUPS, type ToolGroup } from "../config.ts";
import { DEFAULT_NAMESPACE } from "../domain/schemas.ts";
import type { Logger } from "../log.ts";
import type { GitReader } from "../git/git_recorder.ts";
import type { Store } from "../store/store.ts";
import { Catalog, invalidParams } from "./catalog.ts";
import { ChecklistServer, type Era } from "./checklist_server.ts";
import type { ServerFeature } from "./feature.ts";
import { bridgeLogs } from "./log_bridge.ts";
import { registerHandoff } from "./resources.ts";
import { ResourceWatch, type ResourceWatchOptions } from "./resource_watch.ts";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type Server,
  type ServerCapabilities,
  type ServerContext,
  type Tool,
} from "./sdk.ts";
import { callTool, errorResult, type ToolContext, type ToolDef, toolListing } from "./tool.ts";
import { CHECKLIST_TOOLS } from "./tools_checklist.ts";
import { HISTORY_TOOLS } from "./tools_history.ts";
import { PROGRESS_TOOLS } from "./tools_progress.ts";
import { TASK_TOOLS } from "./tools_tasks.ts";
import { WORK_TOOLS } from "./tools_works.ts";
import { instructionsFor } from "./instructions.ts";

export { INSTRUCTIONS, instructionsFor } from "./instructions.ts";

/** Server name and version reported at initialize and on every 2026-07-28 result. */
export const SERVER_INFO = { name: "checklist-mcp", version: "0.1.0" } as const;

/** Every tool, in listing order. */
export const ALL_TOOLS: readonly ToolDef[] = [
  ...TASK_TOOLS,
  ...CHECKLIST_TOOLS,
  ...WORK_TOOLS,
  ...PROGRESS_TOOLS,
  ...HISTORY_TOOLS,
];

/**
 * What a server is made for: the namespace it works in and the caller's access (over HTTP, from the
 * request's credential; a stdio server's is the process's).
 */
export interface ServerScope {
  /** The namespace the server works in (docs/namespaces.md). */
  namespace: string;
  /**
   * The caller's access (docs/hosting.md "Hosting for a team"): `read` lists only the read-only tools,
   * and a call to a changing tool is refused with `FORBIDDEN` before it runs.
   */
  access: AccessLevel;
}

/** Which era a server serves (checklist_server.ts, where the server's class is). */
export type { Era } from "./checklist_server.ts";

/** Options of {@link createServer}; without a {@link ServerScope}: the `default` namespace, write access. */
export interface ServerOptions extends Partial<ServerScope> {
  store: Store;
  log: Logger;
  /** Tool groups to expose (`CHECKLIST_TOOLS`); all by default. */
  groups?: readonly ToolGroup[];
  /**
   * Features beside the tool groups (the plan view: lib/plan_view/server/plan_feature.ts); none by default.
   */
  features?: readonly ServerFeature[];
  /** Capacity of the work-info LRU (`WORK_CACHE_SIZE`). */
  workCacheSize?: number;
  /** The agent that calls without `agent` act as (`CHECKLIST_AGENT`); the anonymous agent when absent. */
  agent?: string | undefined;
  /** The clock leases are judged by, in milliseconds (tests pass their own). */
  now?: () => number;
  /** Reads where the work lives, for the `git` records of a stdio server; absent: none are recorded. */
  readGit?: GitReader;
  /** The era it serves (the serving entry says); `legacy` by default, as an SDK `Server` is. */
  era?: Era;
  /**
   * Handshake era only: the connection has no stream for notifications outside a request (HTTP
   * with `STATELESS=1`), so `resources/subscribe` is neither declared nor answered.
   */
  sessionless?: boolean;
}

/**
 * A new MCP server for one connection (or one request), in one namespace; an invalid name throws
 * `INVALID_INPUT`. What it declares follows the era: the handshake era's `initialize` answers as
 * it always did; 2026-07-28's `server/discover` declares only notifications it sends
 * (`resources.listChanged` and `subscribe`, through `subscriptions/listen`) and the extension of each
 * feature that is on (the plan view's: MCP Apps).
 */
export function createServer(options: ServerOptions): Server {
  const era = options.era ?? "legacy";
  const readOnly = options.access === "read";
  const { groups, tools, features, featureTools, byName } = toolSets(
    options.groups,
    readOnly,
    options.features,
  );
  const space = options.store.space(options.namespace ?? DEFAULT_NAMESPACE);
  // Every line this server logs names its namespace.
  const serverLog = options.log.child({ namespace: space.namespace });
  const server = new ChecklistServer(SERVER_INFO, {
    log: serverLog,
    era,
    capabilities: era === "legacy"
      // As the SDK's McpServer declared them in the handshake era; 2025 clients see no difference.
      ? { tools: { listChanged: true }, logging: {} }
      : { tools: {}, logging: {}, ...extensionsOf(features) },
    instructions: instructionsFor(groups),
  });
  const logs = bridgeLogs(server, serverLog, era);
  const ctx: ToolContext = {
    space,
    log: serverLog,
    workCacheSize: options.workCacheSize ?? DEFAULTS.workCacheSize,
    agent: options.agent,
    now: options.now ?? Date.now,
    readGit: options.readGit,
  };
  const catalog = new Catalog();
  const fixed = features.flatMap((feature) => feature.register(catalog));
  const listResources = registerHandoff(catalog, {
    space: ctx.space,
    groups,
    workCacheSize: ctx.workCacheSize,
    fixed,
    root: options.store,
    log: serverLog,
  });
  // Declared only where sent: 2026-07-28 listen streams and handshake-era subscriptions hear
  // resource updates (resource_watch.ts); the prompts and tools never change, but the handshake
  // era keeps declaring what it always declared.
  const subscribe = era === "modern" || !options.sessionless;
  catalog.install(server, { listChanged: true, subscribe, promptsListChanged: era === "legacy" });
  if (era === "legacy" && subscribe && catalog.hasResources) {
    answerSubscriptions(server, {
      store: options.store,
      namespace: space.namespace,
      workCacheSize: ctx.workCacheSize,
      log: serverLog,
    });
  }
  if (listResources) {
    server.setRequestHandler("resources/list", ({ params }) => listResources(params?.cursor));
  }

  const listing = (def: ToolDef) =>
    features.reduce<Tool | undefined>((t, f) => t ?? f.listing(def), undefined) ??
      toolListing(def);
  server.setRequestHandler("tools/list", (_request, context) => {
    const capabilities = clientCapabilities(server, context);
    const shown = features.filter((feature) => feature.shows(capabilities));
    return { tools: [...tools, ...shown.flatMap((feature) => featureTools.get(feature)!)].map(listing) };
  });
  server.answerCall = async (name, args, context) => {
    const def = byName.get(name);
    if (!def) {
      throw invalidParams(`Unknown tool "${name}". Available: ${[...byName.keys()].join(", ")}`);
    }
    // Logs of this call also reach its client as notifications (log_bridge.ts).
    const log = logs.forRequest(context);
    if (readOnly && !def.annotations.readOnlyHint) {
      log.warn("tool call refused: read-only access", { tool: def.name });
      return errorResult(
        "FORBIDDEN",
        `"${def.name}" changes data and this credential has read access only; ask for a write token`,
      );
    }
    const started = performance.now();
    const result = await callTool(def, args, { ...ctx, log });
    log[result.isError ? "warn" : "debug"](result.isError ? "tool call failed" : "tool call", {
      tool: def.name,
      ms: Math.round((performance.now() - started) * 100) / 100,
      error: result.isError
        ? (result.structuredContent as { error?: { code: string } } | undefined)?.error?.code ?? "internal"
        : undefined,
    });
    return result;
  };
  server.setRequestHandler(
    "tools/call",
    ({ params }, context) =>
      server.answerCall(params.name, server.argumentsOf(context, params.arguments), context),
  );
  return server;
}

/** The tools a server has, for its groups, access and features (see {@link toolSets}). */
interface ToolSets {
  groups: ReadonlySet<ToolGroup>;
  /** The tools listed (read access: the read-only ones). */
  tools: readonly ToolDef[];
  /** The features the groups turn on. */
  features: readonly ServerFeature[];
  /** Each feature's own tools: callable whenever the feature is on, listed only to clients that show it. */
  featureTools: ReadonlyMap<ServerFeature, readonly ToolDef[]>;
  /** Every tool known by name: read access still knows the changing ones, to answer FORBIDDEN. */
  byName: ReadonlyMap<string, ToolDef>;
}

const NO_FEATURES: readonly ServerFeature[] = [];

/** Tool sets by features (the serving entry's one list), then by groups and access: built once per process. */
const BUILT_TOOL_SETS = new WeakMap<readonly ServerFeature[], Map<string, ToolSets>>();

/**
 * The tools of a server with these groups, access and features, built once per process and shared by
 * every server made for them (one per 2026-07-28 HTTP request): none of it is ever changed.
 */
function toolSets(
  wanted: readonly ToolGroup[] | undefined,
  readOnly: boolean,
  allFeatures: readonly ServerFeature[] = NO_FEATURES,
): ToolSets {
  const groups = new Set<ToolGroup>(wanted ?? TOOL_GROUPS);
  const key = `${TOOL_GROUPS.filter((group) => groups.has(group)).join(",")} ${readOnly ? "read" : "write"}`;
  let byKey = BUILT_TOOL_SETS.get(allFeatures);
  if (!byKey) BUILT_TOOL_SETS.set(allFeatures, byKey = new Map());
  let sets = byKey.get(key);
  if (!sets) {
    const enabled = ALL_TOOLS.filter((t) => groups.has(t.group as ToolGroup));
    // Read access lists only the read-only tools; the others stay known, to answer FORBIDDEN.
    const tools = readOnly ? enabled.filter((t) => t.annotations.readOnlyHint) : enabled;
    // The features the groups turn on, and their own tools: callable whenever the feature is on, listed
    // only to clients that show it (a model never sees the plan view's).
    const features = allFeatures.filter((feature) => feature.enabled(groups));
    const featureTools = new Map(features.map((feature) => [
      feature,
      feature.tools.filter((t) => !readOnly || t.annotations.readOnlyHint),
    ]));
    const byName = new Map([...enabled, ...[...featureTools.values()].flat()].map((t) => [t.name, t]));
    sets = { groups, tools, features, featureTools, byName };
    byKey.set(key, sets);
  }
  return sets;
}

/**
 * The handshake era's `resources/subscribe` and `resources/unsubscribe`: a subscribed resource that
 * changes (by any process on the store) is announced to this connection with
 * `notifications/resources/updated` (on HTTP, on its standalone stream). Subscriptions live as long
 * as the connection; the store is watched only while one is held.
 */
function answerSubscriptions(server: Server, options: Omit<ResourceWatchOptions, "emit">): void {
  const watch = new ResourceWatch({
    ...options,
    emit: (event) => {
      if (event.kind !== "resource_updated") return;
      server.sendResourceUpdated({ uri: event.uri }).catch((error) =>
        options.log.debug("subscription: a notification was not sent", { error })
      );
    },
  });
  const held = new Map<string, Promise<() => void>>();
  server.setRequestHandler("resources/subscribe", async ({ params }) => {
    if (!held.has(params.uri)) held.set(params.uri, watch.want({ uris: [params.uri] }));
    await held.get(params.uri);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", async ({ params }) => {
    const release = held.get(params.uri);
    held.delete(params.uri);
    (await release)?.();
    return {};
  });
  const closed = server.onclose;
  server.onclose = () => {
    closed?.();
    watch.close();
  };
}

/** The capabilities of this request's client: per request (2026-07-28) or per connection. */
function clientCapabilities(server: Server, context: ServerContext): ClientCapabilities | undefined {
  const perRequest = (context.mcpReq.envelope as Record<string, unknown> | undefined)?.[
    CLIENT_CAPABILITIES_META_KEY
  ];
  return (perRequest ?? server.getClientCapabilities()) as ClientCapabilities | undefined;
}

/** The extensions a 2026-07-28 server declares: one for each feature that is on; none, no field. */
function extensionsOf(features: readonly ServerFeature[]): Pick<ServerCapabilities, "extensions"> {
  if (features.length === 0) return {};
  return { extensions: Object.fromEntries(features.map((feature) => [feature.extension, {}])) };
}
