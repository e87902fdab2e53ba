/**
 * The HTTP edge (Hono): the Streamable HTTP MCP endpoint at `/mcp` and `GET /healthz`.
 *
 * `/mcp/NAME` is the same endpoint working in namespace `NAME`. With OAuth on, the protected-resource
 * metadata (RFC 9728) is at `/.well-known/oauth-protected-resource` and `…/mcp`.
 * The dashboard (lib/dashboard) answers `/`, `/api/*`, `/events` and `/assets/*` behind the same Host/Origin
 * guard, and behind the same credentials when access control is on.
 *
 * Every `/mcp` request passes, in order: the Host/Origin guard (403), CORS for allowed origins, the
 * credential and namespace (require_credential.ts: 401, 403, 400), the body limit (413) and the body's
 * deadline (408); only then does MCP see it (lib/mcp/http_endpoint.ts: both eras, the handshake era's
 * sessions bound to the credential, access and namespace that opened them).
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
import { type MakeServer, McpHttpEndpoint } from "../mcp/http_endpoint.ts";
import type { Store } from "../store/store.ts";
import { createDashboard } from "../dashboard/server/routes.ts";
import { type McpScope, type McpScopeVariables, requireMcpCredential } from "./require_credential.ts";
import { readJsonRpcBody } from "./body.ts";
import { allowLists, hostOriginGuard, hostSyntaxGuard, originAllowed } from "./guards.ts";
import { ConnectionPool } from "../mcp/connections.ts";
import { errorReply, SERVER_ERROR } from "../mcp/rpc_errors.ts";
import { ProtocolErrorCode } from "../mcp/sdk.ts";

/** Largest request body accepted on `/mcp` (`LIMITS.bodyBytes`); a larger one is refused with 413 unread. */
export const MAX_BODY_BYTES = LIMITS.bodyBytes;

/** Request headers MCP clients send, allowed in CORS preflights. */
export const CORS_ALLOW_HEADERS: readonly string[] = [
  "Content-Type",
  "Accept",
  "Authorization",
  "Mcp-Session-Id",
  "Mcp-Protocol-Version",
  "Mcp-Method",
  "Mcp-Name",
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
    | "workCacheSize"
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
  /** Makes a new MCP server for one connection or request: of an era, in a namespace, for an access. */
  makeServer: MakeServer;
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
  const endpoint = new McpHttpEndpoint({
    makeServer,
    store: options.store,
    workCacheSize: config.workCacheSize ?? DEFAULTS.workCacheSize,
    log,
    pool,
    stateless: config.stateless,
    quota: { admit: (caller, end) => dashboard.hub.admit(caller, end) },
    revoked: auth && ((credential) => auth.revoked(credential)),
    onOpen: () => revocation?.poke(),
  });
  // A token removed from the tokens file ends its connections and event streams within 2 seconds,
  // listen streams still opening included: the watch runs while any of them is open or pending.
  const revocation = auth && new RevocationWatch({
    auth,
    log,
    active: () => pool.size > 0 || dashboard.hub.size > 0 || endpoint.streams > 0,
    end: (revoked) => endpoint.endWhere(revoked) + dashboard.hub.endWhere(revoked),
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
    let body: unknown;
    if (request.method === "POST") {
      const read = await readJsonRpcBody(request, options.bodyTimeoutMs);
      if (read.refused) return read.refused;
      body = read.body;
    }
    return await endpoint.answer(request, body, scope);
  }

  app.onError((error, c) => {
    // The client cut its body off or broke its framing (the listener aborted the request's signal
    // before the read failed): the client's mistake, not the server's, and under `deno run` the
    // listener has answered it already (lib/listener/client_mistakes.ts counts them).
    if (c.req.raw.signal.aborted) {
      log.debug("request body cut off or malformed", { path: c.req.path });
      return c.json(errorReply(SERVER_ERROR, "Bad Request: the body was cut off"), 400);
    }
    log.error("http request failed", { path: c.req.path, error });
    return c.json(errorReply(ProtocolErrorCode.InternalError, "Internal error"), 500);
  });

  return {
    app,
    close: () => {
      revocation?.stop();
      dashboard.close();
      return endpoint.close();
    },
  };
}
