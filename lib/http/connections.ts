/**
 * The live MCP connections of one HTTP app (what the protocol calls a session, keyed by its
 * `Mcp-Session-Id`; "session" in this code base is a task tree): at most `max` of them, each closed
 * after `idleMs` without a request. Full, the least recently used connection is closed to admit a new
 * one (a client that lost its connection gets 404 and initializes again, as the protocol says), so
 * crashed clients that never sent `DELETE` cannot lock everyone out. Expiry is checked on each
 * request: no timers to leak.
 */
import type { Logger } from "../log.ts";
import type { McpServer, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";

/** One live connection: its transport, the MCP server connected to it, and the namespace it works in. */
export interface Connection {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  /** The namespace the connection was opened in (README "Namespaces"); it never changes. */
  namespace: string;
  /**
   * Who opened it (credential, access and namespace; lib/http/app.ts): when given, only requests
   * of the same owner may use it.
   */
  owner?: string;
}

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  /** Most live connections (`MAX_SESSIONS`). */
  max: number;
  /** Idle time after which a connection is closed (`SESSION_IDLE_MINUTES`), in milliseconds. */
  idleMs: number;
  log: Logger;
  /** The clock, in milliseconds; `Date.now` by default. */
  now?: () => number;
}

interface Entry extends Connection {
  lastUsed: number;
}

/** See the module doc. Map order is use order: the first entry is the least recently used. */
export class ConnectionPool {
  #connections = new Map<string, Entry>();
  #options: ConnectionPoolOptions;
  #now: () => number;

  constructor(options: ConnectionPoolOptions) {
    this.#options = options;
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
  use(id: string, namespace?: string, owner?: string): Connection | undefined {
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

  /** Admits a new connection, closing the least recently used one when the pool is full. */
  add(id: string, connection: Connection): void {
    this.sweep();
    while (this.#connections.size >= this.#options.max) {
      const [oldest] = this.#connections.keys();
      this.#options.log.warn("http connection evicted: too many live connections", {
        connection: oldest,
        max: this.#options.max,
      });
      this.#close(oldest!);
    }
    this.#connections.set(id, { ...connection, lastUsed: this.#now() });
    this.#options.log.info("http connection opened", {
      connection: id,
      namespace: connection.namespace,
      live: this.#connections.size,
    });
  }

  /** Forgets a connection that ended by itself (DELETE, transport closed); does not close it again. */
  forget(id: string): void {
    if (this.#connections.delete(id)) {
      this.#options.log.info("http connection closed", { connection: id, live: this.#connections.size });
    }
  }

  /** Closes every connection idle for longer than the limit. */
  sweep(): void {
    const cutoff = this.#now() - this.#options.idleMs;
    for (const [id, entry] of this.#connections) {
      if (entry.lastUsed > cutoff) break; // in use order: the rest are younger
      this.#options.log.info("http connection expired", { connection: id, idleMs: this.#options.idleMs });
      this.#close(id);
    }
  }

  /** Closes every connection. */
  async closeAll(): Promise<void> {
    const all = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(all.map((c) => c.server.close()));
  }

  #close(id: string): void {
    const entry = this.#connections.get(id);
    this.#connections.delete(id);
    entry?.server.close().catch((error) =>
      this.#options.log.warn("closing an http connection failed", { connection: id, error })
    );
  }
}
