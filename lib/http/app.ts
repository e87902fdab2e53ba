/**
 * The HTTP app (Hono): `GET /healthz`, and each surface mounted as a sub-app that builds its own parts:
 * MCP at `/mcp` and `/mcp/NAME` (mcp_routes.ts), the dashboard at `/`, `/api/*`, `/events` and
 * `/assets/*` (lib/dashboard). With OAuth on, the protected-resource metadata (RFC 9728) is at
 * `/.well-known/oauth-protected-resource` and `…/mcp`.
 *
 * What the surfaces share is built here once: the access control, the Host/Origin allow-lists, the fair
 * shares of event streams (lib/auth/stream_shares.ts: a page's stream and an MCP listen stream count
 * alike), and the revocation watch, which ends what a revoked credential holds open on either. Every
 * request first passes the Host syntax check; each surface then guards its own routes.
 */
import { type ErrorHandler, Hono } from "hono";
import { cors } from "hono/cors";
import { Authenticator } from "../auth/authenticator.ts";
import type { Credential } from "../auth/credential.ts";
import { tenantShare } from "../auth/fair_share.ts";
import type { OAuthResource } from "../auth/oauth.ts";
import { RevocationWatch } from "../auth/revocation.ts";
import { StreamShares } from "../auth/stream_shares.ts";
import { type Config, DEFAULTS } from "../config.ts";
import { createDashboard } from "../dashboard/server/routes.ts";
import type { Logger } from "../log.ts";
import type { MakeServer } from "../mcp/http_endpoint.ts";
import { errorReply, SERVER_ERROR } from "../mcp/rpc_errors.ts";
import { ProtocolErrorCode } from "../mcp/sdk.ts";
import type { Store } from "../store/store.ts";
import { allowLists, hostOriginGuard, hostSyntaxGuard } from "./guards.ts";
import { createMcpRoutes } from "./mcp_routes.ts";

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
  /**
   * Event streams, the dashboard's and MCP's listen streams: how many may be open at once, and the
   * heartbeat.
   */
  events?: { maxStreams?: number; heartbeatMs?: number };
  /** How long a request body may take to arrive (`408` after); 30 s by default, shorter in tests. */
  bodyTimeoutMs?: number;
}

/** What the app mounts and what revocation watches: a surface. */
interface Surface {
  active(): boolean;
  endWhere(refused: (credential: Credential) => boolean): number;
  close(): void | Promise<void>;
}

/** The Hono app; `close()` ends every live MCP connection and event stream. */
export function createApp(options: AppOptions): { app: Hono; close: () => Promise<void> } {
  const { store, log } = options;
  const config = options.config ?? {};
  const auth = options.access ??
    (config.authToken ? new Authenticator({ log, authToken: config.authToken }) : undefined);
  const lists = allowLists(config);
  // A token removed from the tokens file ends its connections and event streams within 2 seconds,
  // listen streams still opening included: the watch runs while any of them is open or pending.
  const revocation = auth && new RevocationWatch({
    auth,
    log,
    active: () => surfaces.some((surface) => surface.active()),
    end: (revoked) => surfaces.reduce((ended, surface) => ended + surface.endWhere(revoked), 0),
  });
  const onOpen = () => revocation?.poke();
  const maxStreams = options.events?.maxStreams ?? DEFAULTS.maxEventStreams;
  const shares = new StreamShares({
    max: maxStreams,
    share: tenantShare(maxStreams, auth !== undefined),
    log,
  });
  const mcp = createMcpRoutes({ ...options, config, auth, lists, shares, onOpen });
  const dashboard = createDashboard({
    store,
    log,
    access: auth,
    shares,
    live: true,
    heartbeatMs: options.events?.heartbeatMs,
    onOpen,
    guard: hostOriginGuard(lists, log),
  });
  const surfaces: Surface[] = [mcp, dashboard];

  const app = new Hono();
  app.use("*", hostSyntaxGuard(log));
  app.get("/healthz", (c) => c.json({ status: "ok", store: store.kind }));
  app.route("/", dashboard.app);
  if (auth?.oauth) app.route("/", oauthMetadata(auth.oauth));
  app.route("/", mcp.app);
  app.onError(answerError(log));
  const close = async () => {
    revocation?.stop();
    await Promise.all(surfaces.map((surface) => surface.close()));
  };
  return { app, close };
}

/**
 * What a request that threw is answered: a body the client cut off or whose framing broke (the
 * listener aborted the request's signal before the read failed) is the client's mistake, `400` and a
 * `debug` line (under `deno run` the listener has answered it already, and lib/listener/client_mistakes.ts
 * counts it); anything else is the server's, `500` with its text in the log only.
 */
function answerError(log: Logger): ErrorHandler {
  return (error, c) => {
    if (c.req.raw.signal.aborted) {
      log.debug("request body cut off or malformed", { path: c.req.path });
      return c.json(errorReply(SERVER_ERROR, "Bad Request: the body was cut off"), 400);
    }
    log.error("http request failed", { path: c.req.path, error });
    return c.json(errorReply(ProtocolErrorCode.InternalError, "Internal error"), 500);
  };
}

/**
 * The OAuth protected-resource metadata (RFC 9728): public, like /healthz, so unguarded, and any web client
 * may read it.
 */
function oauthMetadata(oauth: OAuthResource): Hono {
  const app = new Hono();
  for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
    app.use(path, cors({ origin: "*", allowMethods: ["GET", "OPTIONS"], maxAge: 600 }));
    app.get(path, (c) => {
      c.header("Cache-Control", "public, max-age=3600");
      return c.json(oauth.metadata(c.req.raw));
    });
  }
  return app;
}
