/**
 * Builds one MCP server over a store: the tools of the configured groups, the instructions, and
 * (from `resources.ts`) resources and prompts. Shared by the stdio and HTTP transports; one server
 * object serves one connection, all of them share the store.
 */
import type { ToolGroup } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, McpServer } from "./sdk.ts";
import { callTool, type ToolContext, type ToolDef, toolListing } from "./tool.ts";
import { CHECKLIST_TOOLS } from "./tools_checklist.ts";
import { TASK_TOOLS } from "./tools_tasks.ts";

/** Server name and version reported at initialize. */
export const SERVER_INFO = { name: "checklist-mcp", version: "0.1.0" } as const;

/** Every tool, in listing order. */
export const ALL_TOOLS: readonly ToolDef[] = [...TASK_TOOLS, ...CHECKLIST_TOOLS];

/** Sent at initialize: the workflow in a few lines (every client pays for it in context). */
export const INSTRUCTIONS = [
  "Task tree and handoff server for coding agents.",
  "Plan with createTask (nest subtasks in `tasks`; they inherit completion_criteria and constraints).",
  "Work one task at a time: startTask (on a parent it starts the first unfinished leaf), then completeTask with a resolution; it names the next task.",
  "Errors come back as isError with a code (NOT_FOUND, EXECUTION_ORDER_VIOLATION, …) and what to do next.",
].join("\n");

/** Options of {@link createServer}. */
export interface ServerOptions {
  store: Store;
  log: Logger;
  /** Tool groups to expose (`CHECKLIST_TOOLS`); all by default. */
  groups?: readonly ToolGroup[];
  /** Capacity of the work-info LRU (`WORK_CACHE_SIZE`). */
  workCacheSize?: number;
}

/** A new MCP server for one connection. */
export function createServer(options: ServerOptions): McpServer {
  const groups = new Set(options.groups ?? ["tasks", "checklist", "works", "progress"]);
  const tools = ALL_TOOLS.filter((t) => groups.has(t.group));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const mcp = new McpServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, logging: {} },
    instructions: INSTRUCTIONS,
  });
  const ctx: ToolContext = {
    store: options.store,
    log: options.log,
    workCacheSize: options.workCacheSize ?? 10,
  };
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(toolListing) }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const def = byName.get(request.params.name);
    if (!def) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}". Available: ${[...byName.keys()].join(", ")}`,
      );
    }
    const started = performance.now();
    const result = await callTool(def, request.params.arguments, ctx);
    options.log.debug("tool call", {
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
