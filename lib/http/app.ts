/**
 * The HTTP edge (Hono): the Streamable HTTP MCP endpoint at `/mcp` with stateful sessions
 * (`Mcp-Session-Id`), and `GET /healthz`. It translates; the MCP server and the store decide.
 */
import { Hono } from "hono";
import type { Logger } from "../log.ts";
import { isInitializeRequest, type McpServer, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";
import type { Store } from "../store/store.ts";

/** Options of {@link createApp}. */
export interface AppOptions {
  store: Store;
  log: Logger;
  /** Makes a new MCP server for one session. */
  makeServer: () => McpServer;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
}

/** A JSON-RPC error body, for failures before the MCP server sees the request. */
export function jsonRpcError(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}

/** The Hono app; `close()` ends every live MCP session. */
export function createApp(options: AppOptions): { app: Hono; close: () => Promise<void> } {
  const sessions = new Map<string, Session>();
  const app = new Hono();

  app.get("/healthz", (c) => c.json({ status: "ok", store: options.store.kind }));

  app.all("/mcp", async (c) => {
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) {
        return c.json(
          jsonRpcError(-32001, "Session not found: it expired or was closed. Initialize a new session."),
          404,
        );
      }
      return await session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST") {
      return c.json(jsonRpcError(-32000, "Bad Request: Mcp-Session-Id header is required"), 400);
    }
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json(jsonRpcError(-32700, "Parse error: the body is not valid JSON"), 400);
    }
    if (!isInitializeRequest(body)) {
      return c.json(jsonRpcError(-32000, "Bad Request: no valid session; send initialize first"), 400);
    }
    const server = options.makeServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
        options.log.info("http session opened", { session: id, live: sessions.size });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
        options.log.info("http session closed", { session: id, live: sessions.size });
      },
    });
    await server.connect(transport);
    return await transport.handleRequest(c.req.raw, { parsedBody: body });
  });

  app.onError((error, c) => {
    options.log.error("http request failed", { path: c.req.path, error });
    return c.json(jsonRpcError(-32603, "Internal error"), 500);
  });

  return {
    app,
    close: async () => {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((s) => s.server.close()));
    },
  };
}
