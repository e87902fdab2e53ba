/**
 * The HTTP edge (Hono): the Streamable HTTP MCP endpoint at `/mcp` and `GET /healthz`.
 *
 * The dashboard (lib/web) answers `/`, `/api/*`, `/events` and `/assets/*` behind the same Host/Origin
 * guard, and behind the credential check when `AUTH_TOKEN` is set.
 *
 * Every `/mcp` request passes, in order: the Host/Origin guard (403), CORS for allowed origins, the
 * bearer token when `AUTH_TOKEN` is set (401), the body limit (413); only then does MCP see it.
 * Stateful (default): a bounded pool of connections keyed by `Mcp-Session-Id`. Stateless (`STATELESS=1`,
 * and on Deno Deploy): one server per request, all state in the store, so instances are interchangeable.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { type Config, DEFAULTS } from "../config.ts";
import { LIMITS } from "../domain/limits.ts";
import type { Logger } from "../log.ts";
import { isInitializeRequest, type McpServer, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";
import type { Store } from "../store/store.ts";
import { authTokenCheck } from "../web/credential.ts";
import { createDashboard } from "../web/routes.ts";
import { bearerAuth } from "./auth.ts";
import { readJsonRpcBody } from "./body.ts";
import { jsonRpcError } from "./errors.ts";
import { allowLists, hostOriginGuard, hostSyntaxGuard, originAllowed } from "./guards.ts";
import { ConnectionPool } from "./connections.ts";

export { jsonRpcError } from "./errors.ts";

/** Largest request body accepted on `/mcp` (`LIMITS.bodyBytes`); a larger one is refused with 413 unread. */
export const MAX_BODY_BYTES = LIMITS.bodyBytes;

/** Request headers MCP clients send, allowed in CORS preflights. */
export const CORS_ALLOW_HEADERS: readonly string[] = [
  "Content-Type",
  "Accept",
  "Authorization",
  "Mcp-Session-Id",
  "Mcp-Protocol-Version",
  "Last-Event-ID",
];

/** The configuration the HTTP edge reads; every field optional (loopback only, no token, stateful). */
export type HttpConfig = Partial<
  Pick<
    Config,
    | "host"
    | "authToken"
    | "allowedHosts"
    | "allowedOrigins"
    | "stateless"
    | "maxConnections"
    | "connectionIdleMinutes"
  >
>;

/** Options of {@link createApp}. */
export interface AppOptions {
  store: Store;
  log: Logger;
  /** Makes a new MCP server for one connection (or, stateless, for one request) in a namespace (`default` when absent). */
  makeServer: (namespace?: string) => McpServer;
  config?: HttpConfig;
  /** The clock for connection expiry, in milliseconds; `Date.now` by default. */
  now?: () => number;
  /** Dashboard event streams: how many may be open at once, and the heartbeat interval. */
  events?: { maxStreams?: number; heartbeatMs?: number };
  /** How long a request body may take to arrive (`408` after); 30 s by default, shorter in tests. */
  bodyTimeoutMs?: number;
}

/** The Hono app; `close()` ends every live MCP connection. */
export function createApp(options: AppOptions): { app: Hono; close: () => Promise<void> } {
  const { log, makeServer } = options;
  const config = options.config ?? {};
  const lists = allowLists(config);
  const pool = new ConnectionPool({
    max: config.maxConnections ?? DEFAULTS.maxConnections,
    idleMs: (config.connectionIdleMinutes ?? DEFAULTS.connectionIdleMinutes) * 60_000,
    log,
    now: options.now,
  });
  const app = new Hono();
  app.use("*", hostSyntaxGuard(log));

  app.get("/healthz", (c) => c.json({ status: "ok", store: options.store.kind }));

  const dashboard = createDashboard({
    store: options.store,
    log,
    check: config.authToken ? authTokenCheck(config.authToken) : undefined,
    feed: (onChange) => options.store.watch(onChange),
    ...options.events,
  });
  for (const path of ["/", "/api/*", "/events", "/assets/*"]) app.use(path, hostOriginGuard(lists, log));
  app.route("/", dashboard.app);

  app.use("/mcp", hostOriginGuard(lists, log));
  app.use(
    "/mcp",
    cors({
      origin: (origin) => (origin && originAllowed(origin, lists.origins) ? origin : null),
      allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
      allowHeaders: [...CORS_ALLOW_HEADERS],
      exposeHeaders: ["Mcp-Session-Id", "WWW-Authenticate"],
      maxAge: 600,
    }),
  );
  if (config.authToken) app.use("/mcp", bearerAuth(config.authToken, log));
  app.use(
    "/mcp",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        c.json(
          jsonRpcError(-32000, `Payload Too Large: a request body is at most ${MAX_BODY_BYTES} bytes`),
          413,
        ),
    }),
  );

  app.all("/mcp", async (c) => {
    let body: unknown;
    if (c.req.method === "POST") {
      const read = await readJsonRpcBody(c.req.raw, options.bodyTimeoutMs);
      if (read.refused) return read.refused;
      body = read.body;
    }
    const request = c.req.raw;
    if (config.stateless) {
      if (request.method !== "POST") {
        c.header("Allow", "POST, OPTIONS");
        return c.json(jsonRpcError(-32000, "Method Not Allowed: this server is stateless; send POST"), 405);
      }
      return await answerAlone(makeServer(), request, body);
    }
    // Replies to the client keep the protocol's word: to it, a connection is its MCP session.
    const connectionId = request.headers.get("mcp-session-id");
    if (connectionId) {
      const connection = pool.use(connectionId);
      if (!connection) {
        return c.json(
          jsonRpcError(-32001, "Session not found: it expired or was closed. Initialize a new session."),
          404,
        );
      }
      return await connection.transport.handleRequest(request, { parsedBody: body });
    }
    if (request.method !== "POST") {
      return c.json(jsonRpcError(-32000, "Bad Request: Mcp-Session-Id header is required"), 400);
    }
    if (!isInitializeRequest(body)) {
      return c.json(jsonRpcError(-32000, "Bad Request: no valid session; send initialize first"), 400);
    }
    return await openConnection(request, body);
  });

  async function openConnection(request: Request, body: unknown): Promise<Response> {
    const server = makeServer();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      maxRequestBodySize: MAX_BODY_BYTES,
      onsessioninitialized: (id): void => pool.add(id, { transport, server, namespace: "default" }),
      onsessionclosed: (id) => pool.forget(id),
    });
    // Kept by connect(): the SDK chains its own close handling after ours.
    transport.onclose = () => {
      if (transport.sessionId) pool.forget(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (!transport.sessionId) await server.close();
    return response;
  }

  app.onError((error, c) => {
    log.error("http request failed", { path: c.req.path, error });
    return c.json(jsonRpcError(-32603, "Internal error"), 500);
  });

  return {
    app,
    close: () => {
      dashboard.close();
      return pool.closeAll();
    },
  };
}

/** Stateless: one server and transport for this request, closed once the reply has been sent. */
async function answerAlone(server: McpServer, request: Request, body: unknown): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  const response = await transport.handleRequest(request, { parsedBody: body });
  return closeWhenSent(response, () => server.close());
}

/** The same response, calling `close` once its body has been read to the end or cancelled. */
function closeWhenSent(response: Response, close: () => Promise<void>): Response {
  let closed = false;
  const closeOnce = () => {
    if (closed) return;
    closed = true;
    close().catch(() => {});
  };
  if (!response.body) {
    closeOnce();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          closeOnce();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        controller.error(error);
        closeOnce();
      }
    },
    async cancel(reason) {
      closeOnce();
      await reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
