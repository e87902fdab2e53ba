/**
 * MCP's routes, mounted by the app as the dashboard's are: `/mcp` and `/mcp/NAME` (the same endpoint
 * working in namespace `NAME`), with the endpoint behind them (lib/mcp/http_endpoint.ts), which builds
 * its own connections and listen streams.
 *
 * Every request passes, in order: the Host/Origin guard (403), CORS for allowed origins, the
 * credential and namespace (require_credential.ts: 401, 403, 400), the body limit (413) and the body's
 * deadline (408, body.ts); only then does MCP see it (both eras, the handshake era's sessions bound to
 * the credential, access and namespace that opened them).
 */
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors as corsMiddleware } from "hono/cors";
import type { Authenticator } from "../auth/authenticator.ts";
import type { Credential } from "../auth/credential.ts";
import type { StreamShares } from "../auth/stream_shares.ts";
import { LIMITS } from "../domain/limits.ts";
import type { Logger } from "../log.ts";
import { type EndpointConfig, type MakeServer, McpHttpEndpoint } from "../mcp/http_endpoint.ts";
import { errorReply, SERVER_ERROR } from "../mcp/rpc_errors.ts";
import type { Store } from "../store/store.ts";
import { readJsonRpcBody } from "./body.ts";
import { type AllowLists, hostOriginGuard, originAllowed } from "./guards.ts";
import { type CallerVariables, requireMcpCredential } from "./require_credential.ts";

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

/** Options of {@link createMcpRoutes}. */
export interface McpRoutesOptions {
  store: Store;
  log: Logger;
  /** Makes a new MCP server for one connection or request: of an era, in a namespace, for an access. */
  makeServer: MakeServer;
  config: EndpointConfig;
  /** Access control; undefined: off, every caller the local one. */
  auth: Authenticator | undefined;
  /** The Host and Origin allow-lists. */
  lists: AllowLists;
  /** Where listen streams take their places, beside the dashboard's event streams. */
  shares: StreamShares;
  /** Called when a connection or listen stream opens or is opening (the revocation watch starts looking). */
  onOpen: () => void;
  /** The clock for connection expiry, in milliseconds; `Date.now` by default. */
  now?: () => number;
  /** How long a request body may take to arrive (`408` after); 30 s by default. */
  bodyTimeoutMs?: number;
}

/** MCP as the app mounts it (at `/`). */
export interface McpRoutes {
  app: Hono<{ Variables: CallerVariables }>;
  /** Whether a connection or a listen stream is open or opening (what revocation watches). */
  active(): boolean;
  /** Ends the connections and listen streams of every credential `refused` names; returns how many. */
  endWhere(refused: (credential: Credential) => boolean): number;
  /** Ends every connection, stream and handler. */
  close(): Promise<void>;
}

/** See the module doc. */
export function createMcpRoutes(options: McpRoutesOptions): McpRoutes {
  const { auth, log, lists } = options;
  const endpoint = new McpHttpEndpoint({
    makeServer: options.makeServer,
    store: options.store,
    log,
    config: options.config,
    tenants: auth !== undefined,
    now: options.now,
    shares: options.shares,
    revoked: auth && ((credential) => auth.revoked(credential)),
    onOpen: options.onOpen,
  });
  const app = new Hono<{ Variables: CallerVariables }>();
  const bodyLimited = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) =>
      c.json(
        errorReply(SERVER_ERROR, `Payload Too Large: a request body is at most ${MAX_BODY_BYTES} bytes`),
        413,
      ),
  });
  const cors = browserCors(lists);
  for (const path of ["/mcp", "/mcp/:namespace"]) {
    app.use(path, hostOriginGuard(lists, log));
    app.use(path, cors);
    app.use(path, requireMcpCredential(auth, log));
    app.use(path, bodyLimited);
    app.all(path, async (c) => {
      const request = c.req.raw;
      let body: unknown;
      if (request.method === "POST") {
        const read = await readJsonRpcBody(request, options.bodyTimeoutMs);
        if (read.refused) return read.refused;
        body = read.body;
      }
      return await endpoint.answer(request, body, c.get("caller"));
    });
  }
  return {
    app,
    active: () => endpoint.active(),
    endWhere: (refused) => endpoint.endWhere(refused),
    close: () => endpoint.close(),
  };
}

/**
 * CORS for allowed origins. CORS is for browsers, which always send Origin on these requests.
 * Agents' clients send none, and for them the middleware's work (a placeholder response whose headers
 * are merged into the real one, ~15 µs a request) would add only headers no one reads; `Vary: Origin`
 * stays.
 */
function browserCors(lists: AllowLists): MiddlewareHandler {
  const cors = corsMiddleware({
    origin: (origin) => (origin && originAllowed(origin, lists.origins) ? origin : null),
    allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
    allowHeaders: [...CORS_ALLOW_HEADERS],
    exposeHeaders: ["Mcp-Session-Id", "WWW-Authenticate"],
    maxAge: 600,
  });
  return async (c, next) => {
    if (c.req.header("origin") !== undefined) return await cors(c, next);
    await next();
    c.header("Vary", "Origin", { append: true });
  };
}
