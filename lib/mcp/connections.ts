/**
 * The live MCP connections of one HTTP endpoint (http_endpoint.ts builds the pool; what the protocol
 * calls a session, keyed by its `Mcp-Session-Id`; "session" in this code base is a task tree): at most
 * `max` of them, each closed after `idleMs` without a request. Full, the least recently used connection
 * is closed to admit a new one (a client that lost its connection gets 404 and initializes again, as
 * the protocol says), so crashed clients that never sent `DELETE` cannot lock everyone out. Expiry is
 * checked on each request: no timers to leak.
 *
 * A connection with a request in flight ({@link ConnectionPool.hold}: a POST whose reply is not yet
 * written) is never closed to make room or for idleness: closing it would cut off a reply whose
 * change is already made, and a client that retried would make it twice. When every candidate is
 * busy, the new connection is refused (503) instead. Only a revocation closes a busy connection.
 *
 * With `share` below `max` (access control on), the cap is shared fairly among credentials
 * (lib/auth/fair_share.ts): the connection closed to make room is always one of the opening
 * credential's own, so one credential can never close another's connections.
 */
import { admission } from "../auth/fair_share.ts";
import type { Credential } from "../auth/credential.ts";
import type { Logger } from "../log.ts";
import type { Server, WebStandardStreamableHTTPServerTransport } from "./sdk.ts";

/**
 * One live MCP connection: its transport, the MCP server connected to it, and the namespace it works
 * in. (The listener's TCP connection is another thing: lib/listener/http1_connection.ts.)
 */
export interface McpConnection {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** The namespace the connection was opened in (docs/namespaces.md); it never changes. */
  namespace: string;
  /**
   * Who opened it (credential, access and namespace, as lib/mcp/http_endpoint.ts writes them): when
   * given, only requests of the same owner may use it.
   */
  owner?: string;
  /** The credential that opened it: its name is the tenant its share counts against. */
  credential?: Credential;
}

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  /** Most live connections (`MAX_CONNECTIONS`). */
  max: number;
  /** Most live connections one credential may hold (`fairShare(max)` with access control on); `max` by default. */
  share?: number;
  /** Idle time after which a connection is closed (`CONNECTION_IDLE_MINUTES`), in milliseconds. */
  idleMs: number;
  log: Logger;
  /** The clock, in milliseconds; `Date.now` by default. */
  now?: () => number;
}

interface Entry extends McpConnection {
  lastUsed: number;
  /** Requests in flight on it: while any is, it is not closed to make room or for idleness. */
  busy: number;
}

/** See the module doc. Map order is use order: the first entry is the least recently used. */
export class ConnectionPool {
  #connections = new Map<string, Entry>();
  /** Live connections per tenant (credential name). */
  #held = new Map<string, number>();
  #options: ConnectionPoolOptions;
  #share: number;
  #now: () => number;

  constructor(options: ConnectionPoolOptions) {
    this.#options = options;
    this.#share = Math.min(options.share ?? options.max, options.max);
    this.#now = options.now ?? Date.now;
  }

  /** How many connections are live. */
  get size(): number {
    return this.#connections.size;
  }

  /**
   * The live connection with this id, marked as used now; undefined when unknown, expired, or opened
   * in another namespace than `namespace` (when given): a connection id is no way into another namespace;
   * nor, with `owner`, a way to another credential's connection (the caller cannot tell which).
   */
  use(id: string, namespace?: string, owner?: string): McpConnection | undefined {
    this.sweep();
    const entry = this.#connections.get(id);
    if (!entry) return undefined;
    if (namespace !== undefined && entry.namespace !== namespace) return undefined;
    if (owner !== undefined && entry.owner !== owner) {
      this.#options.log.warn("http connection refused: opened by another credential", { connection: id });
      return undefined;
    }
    this.#connections.delete(id);
    entry.lastUsed = this.#now();
    this.#connections.set(id, entry);
    return entry;
  }

  /** How many live connections `credential` holds. */
  heldBy(credential: Credential): number {
    return this.#held.get(credential.name) ?? 0;
  }

  /**
   * Makes room for one more connection of `credential` (call before opening it): closes its own
   * least recently used connection when it is at its share, or when the pool is full; without a share
   * (one tenant) the pool's least recently used. False when the pool is full of other credentials'
   * connections: then the caller refuses (503) and nothing is closed.
   */
  admit(credential?: Credential): boolean {
    this.sweep();
    if (this.#share >= this.#options.max || !credential) {
      while (this.#connections.size >= this.#options.max) {
        const oldest = this.#idleOldest();
        if (oldest === undefined) {
          this.#options.log.warn("refused http connection: every live connection has a request in flight", {
            max: this.#options.max,
          });
          return false;
        }
        this.#options.log.warn("http connection evicted: too many live connections", {
          connection: oldest,
          max: this.#options.max,
        });
        this.#close(oldest);
      }
      return true;
    }
    for (;;) {
      const verdict = admission({
        held: this.heldBy(credential),
        total: this.#connections.size,
        share: this.#share,
        cap: this.#options.max,
      });
      if (verdict === "admit") return true;
      if (verdict === "refuse") {
        this.#options.log.warn("refused http connection: the cap is held by other credentials", {
          credential: credential.name,
          max: this.#options.max,
          share: this.#share,
        });
        return false;
      }
      if (!this.#closeOwnOldest(credential)) {
        this.#options.log.warn(
          "refused http connection: the credential's connections all have a request in flight",
          {
            credential: credential.name,
            share: this.#share,
          },
        );
        return false;
      }
    }
  }

  /**
   * Adds a connection just opened ({@link admit} made room before). Connections opened at the same
   * time can overshoot a credential's share; its own oldest are closed then, never another's.
   */
  add(id: string, connection: McpConnection): void {
    this.sweep();
    if (!connection.credential || this.#share >= this.#options.max) this.admit();
    this.#connections.set(id, { ...connection, lastUsed: this.#now(), busy: 0 });
    const tenant = connection.credential?.name;
    if (tenant !== undefined) this.#held.set(tenant, (this.#held.get(tenant) ?? 0) + 1);
    this.#options.log.info("http connection opened", {
      connection: id,
      namespace: connection.namespace,
      live: this.#connections.size,
    });
    if (connection.credential && this.#share < this.#options.max) {
      while (this.heldBy(connection.credential) > this.#share) {
        if (!this.#closeOwnOldest(connection.credential)) break;
      }
    }
  }

  /** Closes every connection whose credential `refused` names (a revoked token); returns how many. */
  closeWhere(refused: (credential: Credential) => boolean): number {
    let closed = 0;
    for (const [id, entry] of [...this.#connections]) {
      if (entry.credential && refused(entry.credential)) {
        this.#options.log.warn("http connection closed: its credential was revoked", {
          connection: id,
          credential: entry.credential.name,
        });
        this.#close(id);
        closed++;
      }
    }
    return closed;
  }

  /**
   * Marks a request in flight on connection `id` (a POST until its reply is written); the returned
   * function (idempotent) marks it done, which counts as a use of the connection.
   */
  hold(id: string): () => void {
    const entry = this.#connections.get(id);
    if (!entry) return () => {};
    entry.busy++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      entry.busy--;
      entry.lastUsed = this.#now();
      if (this.#connections.get(id) === entry) {
        this.#connections.delete(id);
        this.#connections.set(id, entry);
      }
    };
  }

  /** The least recently used connection without a request in flight. */
  #idleOldest(): string | undefined {
    for (const [id, entry] of this.#connections) if (entry.busy === 0) return id;
    return undefined;
  }

  /**
   * Closes the least recently used connection of `credential` that has no request in flight; false
   * when it holds none such.
   */
  #closeOwnOldest(credential: Credential): boolean {
    for (const [id, entry] of this.#connections) {
      if (entry.credential?.name !== credential.name || entry.busy > 0) continue;
      this.#options.log.warn(
        "http connection quota: closed the credential's least recently used connection",
        {
          connection: id,
          credential: credential.name,
          share: this.#share,
          max: this.#options.max,
        },
      );
      this.#close(id);
      return true;
    }
    return false;
  }

  /** Forgets a connection that ended by itself (DELETE, transport closed); does not close it again. */
  forget(id: string): void {
    const entry = this.#connections.get(id);
    if (entry && this.#connections.delete(id)) {
      this.#release(entry);
      this.#options.log.info("http connection closed", { connection: id, live: this.#connections.size });
    }
  }

  /** Closes every connection idle for longer than the limit (one with a request in flight is not idle). */
  sweep(): void {
    const cutoff = this.#now() - this.#options.idleMs;
    for (const [id, entry] of this.#connections) {
      if (entry.lastUsed > cutoff) break; // in use order: the rest are younger
      if (entry.busy > 0) continue;
      this.#options.log.info("http connection expired", { connection: id, idleMs: this.#options.idleMs });
      this.#close(id);
    }
  }

  /** Closes every connection. */
  async closeAll(): Promise<void> {
    const all = [...this.#connections.values()];
    this.#connections.clear();
    this.#held.clear();
    await Promise.all(all.map((c) => c.server.close()));
  }

  #release(entry: Entry): void {
    const tenant = entry.credential?.name;
    if (tenant === undefined) return;
    const held = (this.#held.get(tenant) ?? 1) - 1;
    if (held > 0) this.#held.set(tenant, held);
    else this.#held.delete(tenant);
  }

  #close(id: string): void {
    const entry = this.#connections.get(id);
    if (!entry) return;
    this.#connections.delete(id);
    this.#release(entry);
    entry.server.close().catch((error) =>
      this.#options.log.warn("closing an http connection failed", { connection: id, error })
    );
  }
}
