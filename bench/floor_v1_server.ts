/**
 * The handshake era's floor: a minimal server on the MCP SDK's v1 line (`@modelcontextprotocol/sdk`,
 * protocol 2025-11-25 and before) with one no-op tool and nothing else, over stdio (`--stdio`) or
 * Streamable HTTP at `127.0.0.1:$PORT/mcp` (Hono and the SDK's web-standard transport, stateful
 * connections, or one transport per request with `STATELESS=1`). What a 2025 server on the SDK
 * paid before doing real work; issue 28 keeps handshake-era HTTP within 0.9× of it. The floor of
 * 2026-07-28 (and of the stdio figures) is SDK v2's, `floor_server.ts`.
 */
import { z } from "zod";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import type { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** A server with the one tool `noop`, which answers `ok`. */
export function createFloorServer(): McpServer {
  const server = new McpServer({ name: "floor", version: "0.0.0" });
  server.registerTool("noop", {
    description: "Does nothing.",
    inputSchema: { id: z.string().optional().describe("Ignored") },
  }, () => ({ content: [{ type: "text", text: "ok" }] }));
  return server;
}

async function serveStdio(): Promise<void> {
  const sdk = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const server = createFloorServer();
  const transport: StdioServerTransport = new sdk.StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  const { default: process } = await import("node:process");
  process.stdin.once("end", () => void server.close());
  await closed;
}

/**
 * The floor's HTTP app (`/mcp`, `/healthz`): one MCP session per client, or with `stateless` one
 * server and transport per request. Served by `Deno.serve` below, and called in-process by
 * bench/request_profile.ts.
 */
export async function floorV1App(
  stateless: boolean,
): Promise<(request: Request) => Response | Promise<Response>> {
  const { Hono } = await import("hono");
  const sdk = await import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js");
  type Transport = WebStandardStreamableHTTPServerTransport;
  const connections = new Map<string, Transport>();
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.all("/mcp", async (c) => {
    if (stateless) {
      const server = createFloorServer();
      const transport: Transport = new sdk.WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
      });
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw);
    }
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      const transport = connections.get(sessionId);
      if (!transport) return c.json({ jsonrpc: "2.0", error: { code: -32001, message: "no session" } }, 404);
      return await transport.handleRequest(c.req.raw);
    }
    const server = createFloorServer();
    const transport: Transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id: string) => void connections.set(id, transport),
      onsessionclosed: (id: string) => void connections.delete(id),
    });
    await server.connect(transport);
    return await transport.handleRequest(c.req.raw);
  });
  return app.fetch;
}

async function serveHttp(): Promise<void> {
  const stateless = ["1", "true", "yes"].includes(Deno.env.get("STATELESS") ?? "");
  const fetch = await floorV1App(stateless);
  const port = Number(Deno.env.get("PORT") ?? "8586");
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, fetch);
  const stop = () => void server.shutdown();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await server.finished;
}

if (import.meta.main) {
  if (Deno.args.includes("--stdio")) await serveStdio();
  else await serveHttp();
}
