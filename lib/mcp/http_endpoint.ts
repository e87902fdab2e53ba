/**
 * MCP over HTTP in both eras, on one `/mcp` (CONTRACT "Protocol eras"), behind every guard of
 * lib/http/app.ts (which hands each request here with its caller and its body already read):
 *
 * - 2026-07-28 requests go to the SDK's `createMcpHandler`, one per namespace (so a namespace's
 *   `subscriptions/listen` streams hear only that namespace: its event bus is fed by its own
 *   {@link ResourceWatch}). Stateless: any process sharing the store answers any request.
 * - Handshake-era requests, told apart by the SDK's `isLegacyRequest`, keep their sessions: a pool
 *   of the SDK's `WebStandardStreamableHTTPServerTransport` keyed by `Mcp-Session-Id`, bound to the
 *   credential, access and namespace that opened it (lib/mcp/connections.ts); with `STATELESS=1`
 *   the SDK's stateless fallback answers each request alone.
 *
 * A listen stream counts in the caller's fair share of event streams (it is refused, or the
 * caller's oldest stream closed, as the dashboard's are), and it ends when its credential is revoked
 * or its token expires.
 */
import type { Credential } from "../auth/credential.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import type { ConnectionPool } from "./connections.ts";
import { errorReply, SERVER_ERROR, SESSION_NOT_FOUND } from "./rpc_errors.ts";
import { listenInterest, type ResourceEvent, ResourceWatch } from "./resource_watch.ts";
import type { Era } from "./server.ts";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  legacyStatelessFallback,
  type McpHttpHandler,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "./sdk.ts";

/** Who calls and where: the credential and the namespace the request works in. */
export interface McpCaller {
  credential: Credential;
  namespace: string;
}

/**
 * Makes the server of one connection or request; `sessionless`: a handshake-era server that answers
 * one request alone (`STATELESS=1`).
 */
export type MakeServer = (
  options: { era: Era; namespace: string; access: "read" | "write"; sessionless?: boolean },
) => Server;

/** Where listen streams are counted against their caller's fair share (the dashboard's stream hub). */
export interface StreamQuota {
  /**
   * Admits one more stream of `caller` (closing the caller's own oldest first when it is at its
   * share); `end` is called when the stream must end (quota, revocation). Undefined: refused.
   * The returned function gives the place back.
   */
  admit(caller: McpCaller, end: () => void): (() => void) | undefined;
}

/** Options of {@link McpHttpEndpoint}. */
export interface McpHttpEndpointOptions {
  makeServer: MakeServer;
  store: Store;
  /** Capacity of the work-info LRU (what the listing shows). */
  workCacheSize: number;
  log: Logger;
  /** Handshake-era connections (`MAX_SESSIONS`, idle expiry, fair shares). */
  pool: ConnectionPool;
  /** Handshake era without sessions (`STATELESS=1`). */
  stateless?: boolean;
  /** Where listen streams count; without one they are not limited beyond the SDK's own cap. */
  quota?: StreamQuota;
  /** Called when something long-lived opened (a connection, a listen stream): revocation watches it. */
  onOpen?: () => void;
}

/** The caller's scope as the SDK carries it to the server factory (`authInfo` is pass-through). */
interface ScopeInfo {
  namespace: string;
  access: "read" | "write";
}

/** Namespaces whose modern handler is kept while it has no open listen stream. */
const IDLE_HANDLERS = 64;

/** See the module doc. */
export class McpHttpEndpoint {
  readonly #options: McpHttpEndpointOptions;
  readonly #modern = new Map<string, { handler: McpHttpHandler; watch: ResourceWatch }>();
  readonly #legacyStateless: ReturnType<typeof legacyStatelessFallback>;
  /** Open listen streams: the caller and how to end each. */
  readonly #streams = new Set<{ caller: McpCaller; end: () => void }>();

  constructor(options: McpHttpEndpointOptions) {
    this.#options = options;
    this.#legacyStateless = legacyStatelessFallback(
      ({ authInfo }) => options.makeServer({ era: "legacy", ...scopeOf(authInfo), sessionless: true }),
      (error) => options.log.debug("mcp request refused", { error: error.message }),
    );
  }

  /** Open listen streams now. */
  get streams(): number {
    return this.#streams.size;
  }

  /**
   * Answers one request to `/mcp` of `caller`; `body` is the parsed JSON of a POST (undefined for
   * GET and DELETE).
   */
  async answer(request: Request, body: unknown, caller: McpCaller): Promise<Response> {
    const authInfo = authInfoOf(caller);
    if (request.method === "POST" && !(await isLegacyRequest(request, body))) {
      return await this.#answerModern(request, body, caller, authInfo);
    }
    if (this.#options.stateless) {
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

  /** Ends every listen stream and connection of a credential that `refused` names; returns how many. */
  endWhere(refused: (credential: Credential) => boolean): number {
    let ended = this.#options.pool.closeWhere(refused);
    for (const stream of [...this.#streams]) {
      if (!refused(stream.caller.credential)) continue;
      this.#options.log.warn("listen stream ended: its credential was revoked", {
        credential: stream.caller.credential.name,
      });
      stream.end();
      ended++;
    }
    return ended;
  }

  /** Ends every stream, connection and handler (at shutdown). */
  async close(): Promise<void> {
    for (const stream of [...this.#streams]) stream.end();
    await Promise.all([...this.#modern.values()].map(({ handler, watch }) => {
      watch.close();
      return handler.close().catch(() => {});
    }));
    this.#modern.clear();
    await this.#options.pool.closeAll();
  }

  async #answerModern(
    request: Request,
    body: unknown,
    caller: McpCaller,
    authInfo: AuthInfo,
  ): Promise<Response> {
    const { handler, watch } = this.#namespace(caller.namespace);
    const listen = (body as { method?: unknown } | null)?.method === "subscriptions/listen";
    if (!listen) return await handler.fetch(request, { parsedBody: body, authInfo });
    return await this.#listen(request, body, caller, authInfo, handler, watch);
  }

  /** A `subscriptions/listen` stream: admitted against the caller's share, fed by the namespace's watch. */
  async #listen(
    request: Request,
    body: unknown,
    caller: McpCaller,
    authInfo: AuthInfo,
    handler: McpHttpHandler,
    watch: ResourceWatch,
  ): Promise<Response> {
    const { log, quota } = this.#options;
    // Ended by the quota, a revocation or the token's expiry; a no-op until the stream is open.
    const stream = { caller, end: () => {} };
    const release = quota ? quota.admit(caller, () => stream.end()) : () => {};
    if (!release) {
      return json(
        errorReply(SERVER_ERROR, "Service Unavailable: too many open event streams; try again shortly"),
        503,
        { "Retry-After": "5" },
      );
    }
    const unwant = await watch.want(listenInterest((body as { params?: unknown }).params));
    const done = () => {
      unwant();
      release();
      this.#streams.delete(stream);
      this.#prune();
    };
    let response: Response;
    try {
      response = await handler.fetch(request, { parsedBody: body, authInfo });
    } catch (error) {
      done();
      throw error;
    }
    if (!response.body || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      done();
      return response;
    }
    this.#streams.add(stream);
    this.#options.onOpen?.();
    log.debug("listen stream opened", { credential: caller.credential.name, namespace: caller.namespace });
    const expiresAt = caller.credential.expiresAt;
    const { body: wrapped, end } = endable(response.body, () => {
      clearTimeout(expiry);
      done();
    });
    stream.end = end;
    const expiry = expiresAt === undefined ? undefined : setTimeout(() => {
      log.info("listen stream ended: its token expired", { credential: caller.credential.name });
      end();
    }, Math.max(0, expiresAt - Date.now()));
    return new Response(wrapped, { status: response.status, headers: response.headers });
  }

  /** The namespace's modern handler and resource watch, made on first use. */
  #namespace(namespace: string): { handler: McpHttpHandler; watch: ResourceWatch } {
    let entry = this.#modern.get(namespace);
    if (entry) {
      // Map order is use order: the least recently used idle handlers are the ones dropped.
      this.#modern.delete(namespace);
      this.#modern.set(namespace, entry);
      return entry;
    }
    const { makeServer, store, log, workCacheSize } = this.#options;
    const handler = createMcpHandler(
      ({ authInfo }) => makeServer({ era: "modern", ...scopeOf(authInfo) }),
      {
        legacy: "reject",
        onerror: (error) => log.debug("mcp request refused", { error: error.message }),
      },
    );
    const watch = new ResourceWatch({
      space: store.space(namespace),
      watch: (onChange) => store.watch(onChange),
      emit: (event: ResourceEvent) => handler.bus.publish(event),
      workCacheSize,
      log,
    });
    entry = { handler, watch };
    this.#modern.set(namespace, entry);
    this.#prune();
    return entry;
  }

  /** Drops the least recently used handlers past {@link IDLE_HANDLERS} that have no open stream. */
  #prune(): void {
    let excess = this.#modern.size - IDLE_HANDLERS;
    for (const [namespace, { handler, watch }] of this.#modern) {
      if (excess <= 0) break;
      if (watch.size > 0) continue;
      this.#modern.delete(namespace);
      handler.close().catch(() => {});
      excess--;
    }
  }

  /** The handshake era with sessions: as the 2025 specification has them. */
  async #answerSession(request: Request, body: unknown, caller: McpCaller): Promise<Response> {
    const { pool, log } = this.#options;
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
      return await connection.transport.handleRequest(request, { parsedBody: body });
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
    else this.#options.onOpen?.();
    return response;
  }
}

/**
 * Who a connection belongs to: the credential, its access and the namespace. A request with another
 * credential, or to another namespace, does not find it (404), so a connection id alone is no key.
 */
function ownerOf(caller: McpCaller): string {
  return JSON.stringify([caller.credential.name, caller.credential.access, caller.namespace]);
}

/** The caller as the SDK passes it through to the factory (never read from headers by the SDK). */
function authInfoOf(caller: McpCaller): AuthInfo {
  const extra: ScopeInfo = { namespace: caller.namespace, access: caller.credential.access };
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

function scopeOf(authInfo: AuthInfo | undefined): ScopeInfo {
  const extra = authInfo?.extra as Partial<ScopeInfo> | undefined;
  if (extra?.namespace === undefined) throw new Error("an MCP request reached the server without its caller");
  return { namespace: extra.namespace, access: extra.access === "read" ? "read" : "write" };
}

function json(body: unknown, status: number, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers });
}

/**
 * The same body, with `end()` to close it from our side (the inner stream is cancelled, so the SDK
 * tears its stream down); `onDone` runs once, however it ends.
 */
function endable(
  inner: ReadableStream<Uint8Array>,
  onDone: () => void,
): { body: ReadableStream<Uint8Array>; end: () => void } {
  const reader = inner.getReader();
  let finished = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const finish = () => {
    if (finished) return;
    finished = true;
    onDone();
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          finish();
          c.close();
        } else c.enqueue(value);
      } catch (error) {
        finish();
        c.error(error);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason).catch(() => {});
    },
  });
  const end = () => {
    if (finished) return;
    finish();
    reader.cancel("ended by the server").catch(() => {});
    try {
      controller.close();
    } catch {
      // Already closed.
    }
  };
  return { body, end };
}
