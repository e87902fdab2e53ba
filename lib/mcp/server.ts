/**
 * Builds one MCP server over a store: the tools of the configured groups, the instructions, and
 * (from `resources.ts`) resources and prompts. Shared by the stdio and HTTP transports; one server
 * object serves one connection, all of them share the store.
 */
import { DEFAULTS, TOOL_GROUPS, type ToolGroup } from "../config.ts";
import { DEFAULT_NAMESPACE } from "../domain/schemas.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import { ListToolsRequestSchema } from "./request_schemas.ts";
import { INVALID_PARAMS, mcpError } from "./rpc_errors.ts";
import { ProtocolServer } from "./protocol_server.ts";
import { guardErrorReplies } from "./jsonrpc.ts";
import { bridgeLogs } from "./log_bridge.ts";
import {
  clientShowsViews,
  planViewListing,
  registerPlanView,
  viewEnabled,
  viewListing,
} from "../plan_view/server/plan_resource.ts";
import { callTool, errorResult, onToolCall, type ToolContext, type ToolDef } from "./tool.ts";
import { registerHandoff } from "./resources.ts";
import { CHECKLIST_TOOLS } from "./tools_checklist.ts";
import { HISTORY_TOOLS } from "./tools_history.ts";
import { PROGRESS_TOOLS } from "./tools_progress.ts";
import { TASK_TOOLS } from "./tools_tasks.ts";
import { VIEW_TOOLS } from "../plan_view/server/plan_tools.ts";
import { WORK_TOOLS } from "./tools_works.ts";

/** Server name and version reported at initialize. */
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
 * The `instructions` sent at initialize: the workflow in a few lines, naming only tools of the
 * enabled groups (every client pays for this text in context).
 */
export function instructionsFor(groups: Iterable<ToolGroup>): string {
  const on = new Set(groups);
  const lines = ["Task tree and handoff server for coding agents."];
  const start = [
    ...(on.has("progress") ? ["your progress (mem_progress(project))"] : []),
    ...(on.has("works") ? ["the recent handovers (get_recent_works_info)"] : []),
  ];
  if (start.length > 0) lines.push(`First read ${start.join(" and ")}.`);
  if (on.has("tasks")) {
    lines.push(
      "Plan with createTask (nested `tasks`; teams: parallel parts, blocked_by dependencies).",
      "Work one task at a time: startTask, then completeTask with a resolution.",
      "Team workers loop claimTask(agent) → work → completeTask, re-call claimTask as a heartbeat on long work, save work info before stopping.",
      "Leave findings (decisions, files, gotchas) with updateTask(note); a start returns `context`: what blockers and earlier agents left.",
    );
  } else if (on.has("checklist")) {
    lines.push(
      "Keep the plan with update_tasks and get_all_tasks; mark finished tasks with mark_task_as_done.",
    );
  }
  if (on.has("history")) {
    lines.push(
      "Undo a damaged plan with restore_tasks (revisions: task_history).",
    );
  }
  if (on.has("progress")) {
    lines.push(
      "After significant work, rewrite mem_progress(project, content) as {goal, completed, next_steps, blockers}: your memory, not a report.",
    );
  }
  if (on.has("works")) {
    lines.push(
      "Before handing over, call save_current_work_info (with the sessionId) and pass on the workId.",
    );
  }
  lines.push(
    on.has("tasks")
      ? "Errors are isError with a code (NOT_FOUND, CLAIMED, …) and what to do next."
      : "Errors come back as isError with a code (INVALID_INPUT, NOT_FOUND, …) and what to do next.",
  );
  return lines.join("\n");
}

/** The instructions with every group enabled. */
export const INSTRUCTIONS: string = instructionsFor(TOOL_GROUPS);

/** Options of {@link createServer}. */
export interface ServerOptions {
  store: Store;
  /** The namespace the server works in (README "Namespaces"); `default` when absent. */
  namespace?: string;
  log: Logger;
  /** Tool groups to expose (`CHECKLIST_TOOLS`); all by default. */
  groups?: readonly ToolGroup[];
  /** Capacity of the work-info LRU (`WORK_CACHE_SIZE`). */
  workCacheSize?: number;
  /**
   * The caller's access (README "Hosting for a team"): `read` lists only the read-only tools, and a
   * call to a changing tool is refused with `FORBIDDEN` before it runs. `write` by default.
   */
  access?: "read" | "write";
  /** The agent that calls without `agent` act as (`CHECKLIST_AGENT`); the anonymous agent when absent. */
  agent?: string | undefined;
  /** The clock leases are judged by, in milliseconds (tests pass their own). */
  now?: () => number;
}

/** A new MCP server for one connection, in one namespace; an invalid name throws `INVALID_INPUT`. */
export function createServer(options: ServerOptions): ProtocolServer {
  const groups = new Set<ToolGroup>(options.groups ?? TOOL_GROUPS);
  const readOnly = options.access === "read";
  const enabled = ALL_TOOLS.filter((t) => groups.has(t.group as ToolGroup));
  // Read access lists only the read-only tools; the others stay known, to answer FORBIDDEN.
  const tools = readOnly ? enabled.filter((t) => t.annotations.readOnlyHint) : enabled;
  // The plan view's own tools: callable whenever a group shows the view, listed only to clients
  // that show MCP Apps (lib/plan_view/server/plan_resource.ts), so a model never sees them.
  const viewTools = (viewEnabled(groups) ? VIEW_TOOLS : []).filter((t) =>
    !readOnly || t.annotations.readOnlyHint
  );
  const byName = new Map([...enabled, ...viewTools].map((t) => [t.name, t]));
  const mcp = new ProtocolServer(SERVER_INFO, {
    // `listChanged: true` as the SDK's McpServer declared it; the lists never change while connected.
    capabilities: { tools: { listChanged: true }, logging: {} },
    instructions: instructionsFor(groups),
  });
  const space = options.store.space(options.namespace ?? DEFAULT_NAMESPACE);
  // Every line this server logs names its namespace.
  const serverLog = options.log.child({ namespace: space.namespace });
  const logs = bridgeLogs(mcp, serverLog);
  const ctx: ToolContext = {
    space,
    log: serverLog,
    workCacheSize: options.workCacheSize ?? DEFAULTS.workCacheSize,
    agent: options.agent,
    now: options.now ?? Date.now,
  };
  if (viewTools.length > 0) registerPlanView(mcp);
  registerHandoff(mcp, {
    space: ctx.space,
    groups,
    workCacheSize: ctx.workCacheSize,
    fixed: viewTools.length > 0 ? [planViewListing()] : [],
    root: options.store,
    log: serverLog,
  });
  // Error replies in one plain line, on every transport (lib/mcp/jsonrpc.ts).
  const connect = mcp.connect.bind(mcp);
  mcp.connect = (transport) => {
    guardErrorReplies(transport, options.log);
    return connect(transport);
  };
  mcp.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      ...tools,
      ...(clientShowsViews(mcp.getClientCapabilities()) ? viewTools : []),
    ].map(viewListing),
  }));
  onToolCall(mcp, async (request, extra) => {
    const def = byName.get(request.name);
    if (!def) {
      throw mcpError(
        INVALID_PARAMS,
        `Unknown tool "${request.name}". Available: ${[...byName.keys()].join(", ")}`,
      );
    }
    // Logs of this call also reach its client as notifications (log_bridge.ts).
    const log = logs.forRequest(extra);
    if (readOnly && !def.annotations.readOnlyHint) {
      log.warn("tool call refused: read-only access", { tool: def.name });
      return errorResult(
        "FORBIDDEN",
        `"${def.name}" changes data and this credential has read access only; ask for a write token`,
      );
    }
    const started = performance.now();
    const result = await callTool(def, request.arguments, { ...ctx, log });
    log[result.isError ? "warn" : "debug"](result.isError ? "tool call failed" : "tool call", {
      tool: def.name,
      ms: Math.round((performance.now() - started) * 100) / 100,
      error: result.isError
        ? (result.structuredContent as { error?: { code: string } } | undefined)?.error?.code ?? "internal"
        : undefined,
    });
    return result;
  });
  return mcp;
}
