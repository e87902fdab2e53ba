/**
 * MCP over HTTP in both eras, on one `/mcp` (docs/protocol.md "Protocol eras"), behind every guard of
 * lib/http/app.ts (which hands each request here with its caller and its body already read):
 *
 * - 2026-07-28 requests go to the SDK's `createMcpHandler`: one handler answers every request of
 *   every namespace (the caller's namespace and access reach the server factory through `authInfo`),
 *   and is closed only at shutdown, so no request in flight is ever cut off by another tenant's
 *   load. `subscriptions/listen` streams are the exception: they are served per namespace, so a
 *   namespace's streams hear only that namespace (lib/mcp/listen_streams.ts). Stateless: any
 *   process sharing the store answers any request.
 * - Handshake-era requests, told apart by the SDK's `isLegacyRequest`, keep their sessions: a pool
 *   of the SDK's `WebStandardStreamableHTTPServerTransport` keyed by `Mcp-Session-Id`, bound to the
 *   credential, access and namespace that opened it (lib/mcp/connections.ts); with `STATELESS=1`
 *   the SDK's stateless fallback answers each request alone.
 *
 * A listen stream counts in the caller's fair share of event streams (it is refused, or the
 * caller's oldest stream closed, as the dashboard's are), and it ends when its credential is revoked
 * or its token expires. The endpoint builds what is MCP's: its pool of connections and its listen streams.
 */
import type { Caller, Credential } from "../auth/credential.ts";
import { tenantShare } from "../auth/fair_share.ts";
import type { StreamShares } from "../auth/stream_shares.ts";
import { type Config, DEFAULTS } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import { ConnectionPool } from "./connections.ts";
import { ListenStreams } from "./listen_streams.ts";
import { errorReply, SERVER_ERROR, SESSION_NOT_FOUND } from "./rpc_errors.ts";
import type { Era, ServerScope } from "./server.ts";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  legacyStatelessFallback,
  type McpHttpHandler,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "./sdk.ts";
import { whenDone } from "./stream_relay.ts";

/**
 * Makes the server of one connection or request; `sessionless`: a handshake-era server that answers
 * one request alone (`STATELESS=1`).
 */
export type MakeServer = (options: ServerScope & { era: Era; sessionless?: boolean }) => Server;

/** The settings the endpoint reads; each absent one is its {@link DEFAULTS} value (stateful). */
export type EndpointConfig = Partial<
  Pick<Config, "stateless" | "maxConnections" | "connectionIdleMinutes" | "workCacheSize">
>;

/** Options of {@link McpHttpEndpoint}. */
export interface McpHttpEndpointOptions {
  makeServer: MakeServer;
  store: Store;
  log: Logger;
  /**
   * Handshake-era connections (`MAX_CONNECTIONS`, `CONNECTION_IDLE_MINUTES`), sessions or not
   * (`STATELESS=1`), and the capacity of the work-info LRU (what the listing shows).
   */
  config?: EndpointConfig;
  /**
   * Whether callers are told apart (access control on): each credential holds its fair share of connections.
   */
  tenants?: boolean;
  /** The clock for connection expiry, in milliseconds; `Date.now` by default. */
  now?: () => number;
  /** Where listen streams take their places, beside the dashboard's event streams. */
  shares?: StreamShares;
  /** Whether a credential has been revoked since its request was checked (what it opens then is ended). */
  revoked?: (credential: Credential) => boolean;
  /**
   * Called when something long-lived opened or is opening (a connection, a listen stream, pending
   * ones included): revocation watches it.
   */
  onOpen?: () => void;
}

/** See the module doc. */
export class McpHttpEndpoint {
  readonly #options: McpHttpEndpointOptions;
  readonly #pool: ConnectionPool;
  readonly #stateless: boolean;
  /** Every 2026-07-28 request but `subscriptions/listen`, of every namespace. */
  readonly #modern: McpHttpHandler;
  readonly #listens: ListenStreams;
  readonly #legacyStateless: ReturnType<typeof legacyStatelessFallback>;

  constructor(options: McpHttpEndpointOptions) {
    this.#options = options;
    const { makeServer, log } = options;
    const config = options.config ?? {};
    const max = config.maxConnections ?? DEFAULTS.maxConnections;
    this.#pool = new ConnectionPool({
      max,
      share: tenantShare(max, options.tenants ?? false),
      idleMs: (config.connectionIdleMinutes ?? DEFAULTS.connectionIdleMinutes) * 60_000,
      log,
      now: options.now,
    });
    this.#stateless = config.stateless ?? false;
    const modern = (authInfo: AuthInfo | undefined) => makeServer({ era: "modern", ...scopeOf(authInfo) });
    this.#modern = createMcpHandler(({ authInfo }) => modern(authInfo), {
      legacy: "reject",
      onerror: (error) => log.debug("mcp request refused", { error: error.message }),
    });
    this.#listens = new ListenStreams({
      makeServer: modern,
      store: options.store,
      workCacheSize: config.workCacheSize ?? DEFAULTS.workCacheSize,
      log,
      shares: options.shares,
      revoked: options.revoked,
      onAdmit: options.onOpen,
    });
    this.#legacyStateless = legacyStatelessFallback(
      ({ authInfo }) => makeServer({ era: "legacy", ...scopeOf(authInfo), sessionless: true }),
      (error) => log.debug("mcp request refused", { error: error.message }),
    );
  }

  /** Whether a connection or a listen stream (pending ones included) is open: what revocation watches. */
  active(): boolean {
    return this.#pool.size > 0 || this.#listens.size > 0;
  }

  /**
   * Answers one request to `/mcp` of `caller`; `body` is the parsed JSON of a POST (undefined for
   * GET and DELETE).
   */
  async answer(request: Request, body: unknown, caller: Caller): Promise<Response> {
    const authInfo = authInfoOf(caller);
    if (request.method === "POST" && !(await isLegacyRequest(request, body))) {
      if ((body as { method?: unknown } | null)?.method === "subscriptions/listen") {
        return await this.#listens.answer(request, body, caller, authInfo);
      }
      return await this.#modern.fetch(request, { parsedBody: body, authInfo });
    }
    if (this.#stateless) {
      if (request.method !== "POST") {
        return json(
          errorReply(SERVER_ERROR, "Method Not Allowed: this server is stateless; send POST"),
          405,
          {
            Allow: "POST, OPTIONS",
          },
        );
      }
      return await this.#legacyStateless(request, { parsedBody: body, authInfo });
    }
    return await this.#answerSession(request, body, caller);
  }

  /**
   * Ends every listen stream (pending ones included) and connection of a credential that `refused`
   * names; returns how many.
   */
  endWhere(refused: (credential: Credential) => boolean): number {
    return this.#pool.closeWhere(refused) + this.#listens.endWhere(refused);
  }

  /** Ends every stream, connection and handler (at shutdown). */
  async close(): Promise<void> {
    await Promise.all([
      this.#listens.close(),
      this.#modern.close().catch(() => {}),
      this.#pool.closeAll(),
    ]);
  }

  /** The handshake era with sessions: as the 2025 specification has them. */
  async #answerSession(request: Request, body: unknown, caller: Caller): Promise<Response> {
    const pool = this.#pool;
    const { log } = this.#options;
    // Replies to the client keep the protocol's word: to it, a connection is its MCP session.
    const connectionId = request.headers.get("mcp-session-id");
    if (connectionId) {
      const connection = pool.use(connectionId, caller.namespace, ownerOf(caller));
      if (!connection) {
        return json(
          errorReply(
            SESSION_NOT_FOUND,
            "Session not found: it expired or was closed. Initialize a new session.",
          ),
          404,
        );
      }
      if (request.method !== "POST") {
        return await connection.transport.handleRequest(request, { parsedBody: body });
      }
      // The connection is busy until the reply is written: nothing closes it to make room meanwhile.
      const done = pool.hold(connectionId);
      let response: Response;
      try {
        response = await connection.transport.handleRequest(request, { parsedBody: body });
      } catch (error) {
        done();
        throw error;
      }
      if (!response.body) {
        done();
        return response;
      }
      return new Response(whenDone(response.body, done), {
        status: response.status,
        headers: response.headers,
      });
    }
    if (request.method !== "POST") {
      return json(errorReply(SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required"), 400);
    }
    if ((body as { method?: unknown } | null)?.method !== "initialize") {
      return json(errorReply(SERVER_ERROR, "Bad Request: no valid session; send initialize first"), 400);
    }
    log.debug("mcp connection for", { credential: caller.credential.name, namespace: caller.namespace });
    if (!pool.admit(caller.credential)) {
      return json(
        errorReply(SERVER_ERROR, "Service Unavailable: too many live connections; try again shortly"),
        503,
        { "Retry-After": "5" },
      );
    }
    const server = this.#options.makeServer({
      era: "legacy",
      namespace: caller.namespace,
      access: caller.credential.access,
    });
    const owner = ownerOf(caller);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id: string): void =>
        pool.add(id, {
          transport,
          server,
          namespace: caller.namespace,
          owner,
          credential: caller.credential,
        }),
      onsessionclosed: (id: string) => pool.forget(id),
    });
    await server.connect(transport);
    // Set after connect(), which takes the transport's callbacks: the pool forgets a closed one.
    const closed = transport.onclose;
    transport.onclose = () => {
      closed?.();
      if (transport.sessionId) pool.forget(transport.sessionId);
    };
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (!transport.sessionId) await server.close();
    else {
      this.#options.onOpen?.();
      // Revoked between its check and now: a revocation already acted on would never end it.
      if (this.#options.revoked?.(caller.credential)) pool.closeWhere((c) => c === caller.credential);
    }
    return response;
  }
}

/**
 * Who a connection belongs to: the credential, its access and the namespace. A request with another
 * credential, or to another namespace, does not find it (404), so a connection id alone is no key.
 */
function ownerOf(caller: Caller): string {
  return JSON.stringify([caller.credential.name, caller.credential.access, caller.namespace]);
}

/**
 * The caller as the SDK passes it through to the server factory (`authInfo` is pass-through, never
 * read from headers by the SDK): its {@link ServerScope} in `extra`.
 */
function authInfoOf(caller: Caller): AuthInfo {
  const extra: ServerScope = { namespace: caller.namespace, access: caller.credential.access };
  return {
    token: "",
    clientId: caller.credential.name,
    scopes: [caller.credential.access],
    ...(caller.credential.expiresAt === undefined
      ? {}
      : { expiresAt: Math.floor(caller.credential.expiresAt / 1000) }),
    extra: { ...extra },
  };
}

function scopeOf(authInfo: AuthInfo | undefined): ServerScope {
  const extra = authInfo?.extra as Partial<ServerScope> | undefined;
  if (extra?.namespace === undefined) throw new Error("an MCP request reached the server without its caller");
  return { namespace: extra.namespace, access: extra.access === "read" ? "read" : "write" };
}

function json(body: unknown, status: number, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers });
}
