/**
 * The live MCP sessions of one HTTP app: at most `max` of them, each closed after `idleMs` without a
 * request. Full, the least recently used session is closed to admit a new one (a client that lost its
 * session gets 404 and initializes again, as the protocol says), so crashed clients that never sent
 * `DELETE` cannot lock everyone out. Expiry is checked on each request: no timers to leak.
 */
import type { Logger } from "../log.ts";
import type { McpServer, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";

/** One live session: its transport and the MCP server connected to it. */
export interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
}

/** Options of {@link SessionPool}. */
export interface SessionPoolOptions {
  /** Most live sessions (`MAX_SESSIONS`). */
  max: number;
  /** Idle time after which a session is closed (`SESSION_IDLE_MINUTES`), in milliseconds. */
  idleMs: number;
  log: Logger;
  /** The clock, in milliseconds; `Date.now` by default. */
  now?: () => number;
}

interface Entry extends Session {
  lastUsed: number;
}

/** See the module doc. Map order is use order: the first entry is the least recently used. */
export class SessionPool {
  #sessions = new Map<string, Entry>();
  #options: SessionPoolOptions;
  #now: () => number;

  constructor(options: SessionPoolOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** How many sessions are live. */
  get size(): number {
    return this.#sessions.size;
  }

  /** The live session with this id, marked as used now; undefined when unknown or expired. */
  use(id: string): Session | undefined {
    this.sweep();
    const entry = this.#sessions.get(id);
    if (!entry) return undefined;
    this.#sessions.delete(id);
    entry.lastUsed = this.#now();
    this.#sessions.set(id, entry);
    return entry;
  }

  /** Admits a new session, closing the least recently used one when the pool is full. */
  add(id: string, session: Session): void {
    this.sweep();
    while (this.#sessions.size >= this.#options.max) {
      const [oldest] = this.#sessions.keys();
      this.#options.log.warn("http session evicted: too many live sessions", {
        session: oldest,
        max: this.#options.max,
      });
      this.#close(oldest!);
    }
    this.#sessions.set(id, { ...session, lastUsed: this.#now() });
    this.#options.log.info("http session opened", { session: id, live: this.#sessions.size });
  }

  /** Forgets a session that ended by itself (DELETE, transport closed); does not close it again. */
  forget(id: string): void {
    if (this.#sessions.delete(id)) {
      this.#options.log.info("http session closed", { session: id, live: this.#sessions.size });
    }
  }

  /** Closes every session idle for longer than the limit. */
  sweep(): void {
    const cutoff = this.#now() - this.#options.idleMs;
    for (const [id, entry] of this.#sessions) {
      if (entry.lastUsed > cutoff) break; // in use order: the rest are younger
      this.#options.log.info("http session expired", { session: id, idleMs: this.#options.idleMs });
      this.#close(id);
    }
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(all.map((s) => s.server.close()));
  }

  #close(id: string): void {
    const entry = this.#sessions.get(id);
    this.#sessions.delete(id);
    entry?.server.close().catch((error) =>
      this.#options.log.warn("closing an http session failed", { session: id, error })
    );
  }
}
