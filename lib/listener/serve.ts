/**
 * The HTTP listener of `deno run main.ts`: HTTP/1.1 over `Deno.listen`, handing each request to a
 * web `fetch` handler (the Hono app), with deadlines on request heads, bodies and idle connections.
 *
 * Why not `Deno.serve`: it cannot close a connection from a handler, and once a handler has asked
 * for a body that never comes, the pending read keeps the connection open whatever the handler
 * answers. A client that sends its headers and then stalls would hold a connection forever. Here a
 * request whose body has not arrived within the deadline gets `408` and its connection is closed.
 * (`deno serve main.ts` and Deno Deploy use their own listener; there the app still answers `408`
 * but the platform decides when the connection closes.) It replaced a `node:http` server, whose
 * parser, events and two conversions (web ⇄ node) cost a third of a request (BENCHMARKS.md, issue 22).
 *
 * Framing is parsed strictly by lib/listener/http1.ts; anything it refuses is answered (`400`, `414`,
 * `431`, `501`, `505`) and the connection closed. The app gets the method and target exactly as sent,
 * or the request is refused (`400`, `501`) before it reaches the app: a web `Request` would resolve
 * dot segments and upper-case `delete` (lib/listener/http1_target.ts). Deadlines: a request head must
 * arrive within `headersTimeoutMs` of its first byte and a body within `bodyTimeoutMs` of its head, and
 * a keep-alive connection with no request for {@link IDLE_TIMEOUT_MS} is closed. Clients' mistakes are
 * logged at `debug` and counted (lib/listener/client_mistakes.ts). `tests/listener/differential_test.ts`
 * holds this listener against Deno's own, difference by difference.
 *
 * A room of its own that leans on nothing but the log: it knows nothing of MCP or of the app. The app
 * hands it its deadlines and the body its own answers carry (lib/http/listener_options.ts: a JSON-RPC
 * error, so clients see one kind of refusal whoever answers); without one it answers in plain text.
 */
import type { Logger } from "../log.ts";
import { MistakeTally } from "./client_mistakes.ts";
import { Http1Connection, type ListenerSettings } from "./http1_connection.ts";
import { plainRefusal, type RefusalBody } from "./http1_refusal.ts";

/** Options of {@link serveHttp}. */
export interface ServeOptions {
  hostname: string;
  port: number;
  fetch: (request: Request) => Response | Promise<Response>;
  log: Logger;
  /** Called once listening, with the address and port (the real one when `port` is 0). */
  onListen?: (address: { hostname: string; port: number }) => void;
  /** How long a request body may take to arrive once its head has. */
  bodyTimeoutMs: number;
  /** How long a request head may take to arrive once its first byte has. */
  headersTimeoutMs: number;
  /** How long a connection may wait for its next request; {@link IDLE_TIMEOUT_MS} by default. */
  idleTimeoutMs?: number;
  /**
   * The body of each answer the listener gives itself (a refusal, a timeout, `500` when the app
   * throws), from its status and message; plain text by default.
   */
  refusal?: RefusalBody;
}

/** A listening server. */
export interface HttpListener {
  port: number;
  /** Resolves when the server has stopped. */
  finished: Promise<void>;
  /** Stops listening and closes every connection (open event streams too). */
  shutdown(): Promise<void>;
}

/** How long a connection may stay open without a request: 60 s (a client reconnects at no cost). */
export const IDLE_TIMEOUT_MS = 60_000;

/** Starts listening; rejects when the address cannot be used. */
export function serveHttp(options: ServeOptions): Promise<HttpListener> {
  try {
    const listener = Deno.listen({ hostname: options.hostname, port: options.port, transport: "tcp" });
    const server = new Server(listener, options);
    options.onListen?.({ hostname: options.hostname, port: listener.addr.port });
    return Promise.resolve({
      port: listener.addr.port,
      finished: server.finished,
      shutdown: () => server.shutdown(),
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

class Server {
  readonly finished: Promise<void>;
  #listener: Deno.TcpListener;
  #connections = new Set<Http1Connection>();
  #stopping = false;
  #sweeper: ReturnType<typeof setInterval>;
  #settings: ListenerSettings;
  #tally: MistakeTally;
  #date = { line: "", second: -1 };

  constructor(listener: Deno.TcpListener, options: ServeOptions) {
    this.#listener = listener;
    const bodyMs = options.bodyTimeoutMs;
    const headersMs = options.headersTimeoutMs;
    const idleMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
    const tally = new MistakeTally(options.log);
    this.#tally = tally;
    this.#settings = {
      fetch: options.fetch,
      log: options.log,
      mistake: (status, msg, fields) => tally.note(status, msg, fields),
      bodyMs,
      headersMs,
      idleMs,
      refusal: options.refusal ?? plainRefusal,
      date: () => this.#dateLine(),
    };
    // One timer for every deadline: a request costs a number written, not a timer set and cleared.
    const every = Math.max(10, Math.min(1000, Math.min(bodyMs, headersMs, idleMs) / 8));
    this.#sweeper = setInterval(() => this.#sweep(), every);
    this.finished = this.#accept();
  }

  async shutdown(): Promise<void> {
    this.#stopping = true;
    try {
      this.#listener.close();
    } catch {
      // closed already
    }
    for (const connection of this.#connections) connection.close();
    await this.finished;
  }

  async #accept(): Promise<void> {
    const served: Promise<void>[] = [];
    while (!this.#stopping) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch (error) {
        if (this.#stopping || error instanceof Deno.errors.BadResource) break;
        // Out of file descriptors and the like: wait a moment rather than spin.
        this.#settings.log.error("http server error", { error });
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (this.#stopping) {
        conn.close();
        break;
      }
      const connection = new Http1Connection(conn, this.#settings);
      this.#connections.add(connection);
      const done = connection.serve().finally(() => {
        this.#connections.delete(connection);
        served.splice(served.indexOf(done), 1);
      });
      served.push(done);
    }
    await Promise.all(served);
    clearInterval(this.#sweeper);
  }

  #sweep(): void {
    const now = performance.now();
    for (const connection of this.#connections) {
      if (connection.deadline <= now) connection.expire();
    }
    this.#tally.tick(now);
  }

  #dateLine(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.#date.second) {
      this.#date = { line: `date: ${new Date(now).toUTCString()}\r\n`, second };
    }
    return this.#date.line;
  }
}
