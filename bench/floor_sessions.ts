/**
 * The handshake era with sessions on SDK v2, served as SDK v1's floor serves it (floor_v1_server.ts:
 * Hono, one web-standard transport per MCP session) around the v2 floor's server (floor_server.ts,
 * one no-op tool): what any server on SDK v2 pays per request of a session. Called in-process by
 * bench/request_profile.ts; a file of its own so that the v2 floor's cold start loads no Hono.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { createFloorServer } from "./floor_server.ts";

/** The floor's HTTP app (`/mcp`, `/healthz`), one MCP session per client. */
export function floorSessionsApp(): (request: Request) => Response | Promise<Response> {
  const connections = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.all("/mcp", async (c) => {
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      const transport = connections.get(sessionId);
      if (!transport) return c.json({ jsonrpc: "2.0", error: { code: -32001, message: "no session" } }, 404);
      return await transport.handleRequest(c.req.raw);
    }
    const server = createFloorServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id: string) => void connections.set(id, transport),
      onsessionclosed: (id: string) => void connections.delete(id),
    });
    await server.connect(transport);
    return await transport.handleRequest(c.req.raw);
  });
  return app.fetch;
}
