/**
 * The HTTP edge (Hono): the Streamable HTTP MCP endpoint at `/mcp` and `GET /healthz`.
 *
 * `/mcp/NAME` is the same endpoint working in namespace `NAME`. With OAuth on, the protected-resource
 * metadata (RFC 9728) is at `/.well-known/oauth-protected-resource` and `…/mcp`.
 * The dashboard (lib/dashboard) answers `/`, `/api/*`, `/events` and `/assets/*` behind the same Host/Origin
 * guard, and behind the same credentials when access control is on.
 *
 * Every `/mcp` request passes, in order: the Host/Origin guard (403), CORS for allowed origins, the
 * credential and namespace (access.ts: 401, 403, 400), the body limit (413); only then does MCP see it.
 * A connection is bound to the credential, access and namespace that opened it.
 * Stateful (default): a bounded pool of connections keyed by `Mcp-Session-Id`. Stateless (`STATELESS=1`,
 * and on Deno Deploy): one server per request, all state in the store, so instances are interchangeable.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors as corsMiddleware } from "hono/cors";
import { Authenticator } from "../auth/authenticator.ts";
import type { AccessLevel } from "../auth/credential.ts";
import { fairShare } from "../auth/fair_share.ts";
import { RevocationWatch } from "../auth/revocation.ts";
import { type Config, DEFAULTS } from "../config.ts";
import { LIMITS } from "../domain/limits.ts";
import type { Logger } from "../log.ts";
import { isInitializeRequest } from "../mcp/request_schemas.ts";
import type { ProtocolServer } from "../mcp/protocol_server.ts";
import type { Store } from "../store/store.ts";
import { createDashboard } from "../dashboard/server/routes.ts";
import { type McpScope, type McpScopeVariables, requireMcpCredential } from "./require_credential.ts";
import { readJsonRpcBody } from "./body.ts";
import { allowLists, hostOriginGuard, hostSyntaxGuard, originAllowed } from "./guards.ts";
import { ConnectionPool } from "./connections.ts";
import { McpHttpTransport } from "./mcp_transport.ts";
import { errorReply, INTERNAL_ERROR, SERVER_ERROR, SESSION_NOT_FOUND } from "../mcp/rpc_errors.ts";

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

/** What a new MCP server is made for: the namespace it works in and the caller's access. */
export interface ServerScope {
  namespace: string;
  access: AccessLevel;
}

/** Options of {@link createApp}. */
export interface AppOptions {
  store: Store;
  log: Logger;
  /**
   * Makes a new MCP server for one connection (or, stateless, for one request) in a namespace
   * (`default` when absent), for a caller with this access (`write` when absent).
   */
  makeServer: (namespace?: string, access?: AccessLevel) => ProtocolServer;
  config?: HttpConfig;
  /**
   * Access control (lib/auth); undefined: off, loopback only. Without it, `config.authToken`
   * alone still turns it on (tests and embedders that build no authenticator).
   */
  access?: Authenticator;
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
  const auth = options.access ??
    (config.authToken ? new Authenticator({ log, authToken: config.authToken }) : undefined);
  const lists = allowLists(config);
  const maxConnections = config.maxConnections ?? DEFAULTS.maxConnections;
  const pool = new ConnectionPool({
    max: maxConnections,
    // Without access control every caller is the one local credential: its share is the whole cap.
    share: auth ? fairShare(maxConnections) : maxConnections,
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
    access: auth,
    onStreamOpen: () => revocation?.poke(),
    live: true,
    ...options.events,
  });
  // A token removed from the tokens file ends its connections and event streams within 2 seconds.
  const revocation = auth && new RevocationWatch({
    auth,
    log,
    active: () => pool.size > 0 || dashboard.hub.size > 0,
    end: (revoked) => pool.closeWhere(revoked) + dashboard.hub.endWhere(revoked),
  });
  for (const path of ["/", "/api/*", "/events", "/assets/*"]) app.use(path, hostOriginGuard(lists, log));
  app.route("/", dashboard.app);

  if (auth?.oauth) {
    const oauth = auth.oauth;
    for (
      const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
    ) {
      // Public metadata, like /healthz: no guard, and any web client may read it.
      app.use(path, corsMiddleware({ origin: "*", allowMethods: ["GET", "OPTIONS"], maxAge: 600 }));
      app.get(path, (c) => {
        c.header("Cache-Control", "public, max-age=3600");
        return c.json(oauth.metadata(c.req.raw));
      });
    }
  }

  const mcp = new Hono<{ Variables: McpScopeVariables }>();
  const cors = corsMiddleware({
    origin: (origin) => (origin && originAllowed(origin, lists.origins) ? origin : null),
    allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
    allowHeaders: [...CORS_ALLOW_HEADERS],
    exposeHeaders: ["Mcp-Session-Id", "WWW-Authenticate"],
    maxAge: 600,
  });
  // CORS is for browsers, which always send Origin on these requests. Agents' clients send none,
  // and for them the middleware's work (a placeholder response whose headers are merged into the
  // real one, ~15 µs a request) would add only headers no one reads; `Vary: Origin` stays.
  const browserCors: MiddlewareHandler = async (c, next) => {
    if (c.req.header("origin") !== undefined) return await cors(c, next);
    await next();
    c.header("Vary", "Origin", { append: true });
  };
  for (const path of ["/mcp", "/mcp/:namespace"]) {
    mcp.use(path, hostOriginGuard(lists, log));
    mcp.use(path, browserCors);
    mcp.use(path, requireMcpCredential(auth, log));
    mcp.use(
      path,
      bodyLimit({
        maxSize: MAX_BODY_BYTES,
        onError: (c) =>
          c.json(
            errorReply(SERVER_ERROR, `Payload Too Large: a request body is at most ${MAX_BODY_BYTES} bytes`),
            413,
          ),
      }),
    );
    mcp.all(path, (c) => answer(c.req.raw, c.get("scope")));
  }
  app.route("/", mcp);

  async function answer(request: Request, scope: McpScope): Promise<Response> {
    const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
      Response.json(body, { status, headers });
    let body: unknown;
    if (request.method === "POST") {
      const read = await readJsonRpcBody(request, options.bodyTimeoutMs);
      if (read.refused) return read.refused;
      body = read.body;
    }
    if (config.stateless) {
      if (request.method !== "POST") {
        return json(
          errorReply(SERVER_ERROR, "Method Not Allowed: this server is stateless; send POST"),
          405,
          { Allow: "POST, OPTIONS" },
        );
      }
      return await answerAlone(makeServer(scope.namespace, scope.credential.access), request, body);
    }
    // Replies to the client keep the protocol's word: to it, a connection is its MCP session.
    const connectionId = request.headers.get("mcp-session-id");
    if (connectionId) {
      const connection = pool.use(connectionId, scope.namespace, ownerOf(scope));
      if (!connection) {
        return json(
          errorReply(
            SESSION_NOT_FOUND,
            "Session not found: it expired or was closed. Initialize a new session.",
          ),
          404,
        );
      }
      return await connection.transport.handleRequest(request, { parsedBody: body });
    }
    if (request.method !== "POST") {
      return json(errorReply(SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required"), 400);
    }
    if (!isInitializeRequest(body)) {
      return json(errorReply(SERVER_ERROR, "Bad Request: no valid session; send initialize first"), 400);
    }
    log.debug("mcp connection for", { credential: scope.credential.name, namespace: scope.namespace });
    if (!pool.admit(scope.credential)) {
      return json(
        errorReply(SERVER_ERROR, "Service Unavailable: too many live connections; try again shortly"),
        503,
        { "Retry-After": "5" },
      );
    }
    return await openConnection(request, body, scope);
  }

  async function openConnection(request: Request, body: unknown, scope: McpScope): Promise<Response> {
    const server = makeServer(scope.namespace, scope.credential.access);
    const owner = ownerOf(scope);
    const transport: McpHttpTransport = new McpHttpTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id): void =>
        pool.add(id, { transport, server, namespace: scope.namespace, owner, credential: scope.credential }),
      onsessionclosed: (id) => pool.forget(id),
    });
    // Kept by connect(): the server chains its own close handling after ours.
    transport.onclose = () => {
      if (transport.sessionId) pool.forget(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (!transport.sessionId) await server.close();
    else revocation?.poke();
    return response;
  }

  app.onError((error, c) => {
    log.error("http request failed", { path: c.req.path, error });
    return c.json(errorReply(INTERNAL_ERROR, "Internal error"), 500);
  });

  return {
    app,
    close: () => {
      revocation?.stop();
      dashboard.close();
      return pool.closeAll();
    },
  };
}

/**
 * Who a connection belongs to: the credential, its access and the namespace. A request with another
 * credential, or to another namespace, does not find it (404), so a connection id alone is no key.
 */
function ownerOf(scope: McpScope): string {
  return JSON.stringify([scope.credential.name, scope.credential.access, scope.namespace]);
}

/** Stateless: one server and transport for this request, closed once the reply has been sent. */
async function answerAlone(server: ProtocolServer, request: Request, body: unknown): Promise<Response> {
  const transport = new McpHttpTransport();
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
