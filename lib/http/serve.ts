/**
 * The HTTP listener of `deno run main.ts`: a `node:http` server handing each request to a web
 * `fetch` handler (the Hono app), with a deadline on request bodies.
 *
 * Why not `Deno.serve`: it cannot close a connection from a handler, and once a handler has asked
 * for a body that never comes, the pending read keeps the connection open whatever the handler
 * answers. A client that sends its headers and then stalls would hold a connection forever. Here a
 * request whose body has not arrived within the deadline gets `408` and its socket is destroyed.
 * (`deno serve main.ts` and Deno Deploy use their own listener; there the app still answers `408`
 * but the platform decides when the connection closes.)
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../log.ts";
import { errorReply, INTERNAL_ERROR, SERVER_ERROR } from "../mcp/rpc_errors.ts";
import { BODY_TIMEOUT_MS } from "./body.ts";

/** Options of {@link serveHttp}. */
export interface ServeOptions {
  hostname: string;
  port: number;
  fetch: (request: Request) => Response | Promise<Response>;
  log: Logger;
  /** Called once listening, with the address and port (the real one when `port` is 0). */
  onListen?: (address: { hostname: string; port: number }) => void;
  /** How long a request body may take to arrive; 30 s by default. */
  bodyTimeoutMs?: number;
}

/** A listening server. */
export interface HttpListener {
  port: number;
  /** Resolves when the server has stopped. */
  finished: Promise<void>;
  /** Stops listening and closes every connection (open event streams too). */
  shutdown(): Promise<void>;
}

/** Starts listening; rejects when the address cannot be used. */
export async function serveHttp(options: ServeOptions): Promise<HttpListener> {
  // Imported here, not at the top: in the single-file bundle a static import of a Node built-in is
  // loaded at start, and Deno's node:http costs a stdio start ~10 ms it never uses.
  const { createServer } = await import("node:http");
  const timeoutMs = options.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  const server = createServer((req, res) => void handle(req, res, options, timeoutMs));
  // Once per connection, not per request (a system call each time).
  server.on("connection", (socket) => socket.setNoDelay(true));
  const finished = new Promise<void>((resolve) => server.once("close", () => resolve()));
  return await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      server.on("error", (error) => options.log.error("http server error", { error }));
      const { port } = server.address() as AddressInfo;
      options.onListen?.({ hostname: options.hostname, port });
      resolve({
        port,
        finished,
        shutdown: () => {
          server.close();
          server.closeAllConnections();
          return finished;
        },
      });
    });
  });
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  options: ServeOptions,
  timeoutMs: number,
): Promise<void> {
  // Until the whole body has arrived, read or not: a body left unread behind an early answer (a
  // 401) still holds the connection until it ends.
  if (!req.complete) {
    const deadline = setTimeout(() => bodyTimedOut(req, res, options.log, timeoutMs), timeoutMs);
    const settled = () => clearTimeout(deadline);
    req.once("end", settled);
    req.once("close", settled);
  }
  // The request's signal says when the client went away: its body broke off, or its connection.
  const aborter = new AbortController();
  const abort = () => aborter.abort();
  req.once("error", abort);
  req.once("aborted", abort);
  res.once("close", () => {
    if (!res.writableFinished) abort();
  });
  let response: Response;
  try {
    response = await options.fetch(toRequest(req, aborter.signal));
  } catch (error) {
    // The app answers its own errors (Hono's onError); this is the listener's last resort.
    options.log.error("http request failed", { path: pathOf(req), error });
    response = Response.json(errorReply(INTERNAL_ERROR, "Internal error"), { status: 500 });
  }
  if (res.destroyed || res.headersSent) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  await writeResponse(response, res, req.method === "GET");
}

/** `408` (unless an answer went out already) and the socket destroyed: the client stalled its body. */
function bodyTimedOut(req: IncomingMessage, res: ServerResponse, log: Logger, timeoutMs: number): void {
  if (req.complete || req.socket.destroyed) return;
  log.warn("request body timed out; connection closed", { path: pathOf(req), timeoutMs });
  const body = JSON.stringify(
    errorReply(SERVER_ERROR, `Request Timeout: the body did not arrive within ${timeoutMs / 1000} s`),
  );
  if (res.headersSent) return void req.socket.destroy();
  res.writeHead(408, { "content-type": "application/json", connection: "close" });
  res.end(body, () => req.socket.destroy());
}

/** The request's path without its query, for logs: a share link's `?token=` never reaches them. */
function pathOf(req: IncomingMessage): string {
  const target = req.url ?? "/";
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  // Pairs, not a Headers object: the Request would copy (and check) a Headers object's list again.
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(requestUrl(req), {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: bodyStream(req), duplex: "half" } : {}),
  } as RequestInit);
}

/**
 * The request's body as a web stream, fed by the request's own events: cheaper per request than
 * `ReadableStream.from(req)` (an async iterator and its promises per chunk). Reading pauses the
 * socket when the stream is full.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (chunk: Uint8Array) => {
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 1) <= 0) req.pause();
      });
      req.once("end", () => controller.close());
      req.once("error", (error) => controller.error(error));
    },
    pull() {
      req.resume();
    },
    cancel() {
      req.resume(); // discard the rest; the body deadline still closes a stalled connection
    },
  }, { highWaterMark: 4 });
}

/**
 * The request's URL from its target and `Host`. A `Host` no URL can be built from (`::1`) gets a
 * placeholder: the app's guard refuses the request by its header (lib/http/guards.ts).
 */
function requestUrl(req: IncomingMessage): string {
  const target = req.url ?? "/";
  try {
    return new URL(target, `http://${req.headers.host ?? "localhost"}`).href;
  } catch {
    return new URL(target.startsWith("/") ? target : "/", "http://invalid.host").href;
  }
}

/**
 * Writes `response` to `res` in as few socket writes as it allows (each costs more than the bytes
 * in it): a whole body with its headers at once; an event stream that has ended by the time its
 * first event arrives (the usual answer to a POST: one JSON-RPC response) likewise, with a length.
 * Other event streams go out as they come; with `headersAtOnce` (a GET, which opens a stream that
 * may stay silent) the headers leave before the first event.
 */
async function writeResponse(response: Response, res: ServerResponse, headersAtOnce: boolean): Promise<void> {
  // The headers go out with the first write, in one `writeHead` of the raw list (no per-header
  // `setHeader` bookkeeping).
  const headers = headerList(response.headers);
  const head = (extra: string[] = []) =>
    res.writeHead(response.status, extra.length ? [...headers, ...extra] : headers);
  // A whole body (or none) with its length, as `res.end(body)` alone would have sent it.
  const whole = (body?: Uint8Array) =>
    void (NO_BODY.has(response.status)
      ? head().end()
      : head(["content-length", String(body?.byteLength ?? 0)]).end(body));
  if (!response.body) return whole();
  // An event stream is written as it comes (below); any other body in one write.
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    try {
      return whole(new Uint8Array(await response.arrayBuffer()));
    } catch {
      return void res.destroy();
    }
  }
  const reader = response.body.getReader();
  res.once("close", () => void reader.cancel().catch(() => {}));
  try {
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    if (headersAtOnce) head().flushHeaders();
    else {
      const first = await reader.read();
      if (first.done) return whole();
      pending = reader.read();
      const next = await Promise.race([pending, NOT_YET]);
      if (next !== "not yet" && next.done) return whole(first.value);
      if (!head().write(first.value)) await drained(res);
    }
    while (!res.destroyed) {
      const { done, value } = await (pending ?? reader.read());
      pending = undefined;
      if (done) return void res.end();
      if (!res.write(value)) await drained(res);
    }
  } catch {
    // The body failed midway (its producer was cancelled): end the connection, not the process.
    res.destroy();
  }
}

/** Statuses whose responses never carry a body or a length. */
const NO_BODY = new Set([101, 103, 204, 304]);

/** A response's headers as `writeHead`'s flat list (`name, value, …`), each cookie on its own. */
function headerList(headers: Headers): string[] {
  const list: string[] = [];
  // forEach, not for…of: the iterator's machinery costs several times the copying (~10 µs a response).
  headers.forEach((value, name) => {
    if (name !== "set-cookie" && name !== "content-length") list.push(name, value);
  });
  for (const cookie of headers.getSetCookie()) list.push("set-cookie", cookie);
  return list;
}

/** Settled at once: raced against a read, it tells whether that read had settled already. */
const NOT_YET: Promise<"not yet"> = Promise.resolve("not yet");

function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    res.once("drain", resolve);
    res.once("close", resolve);
  });
}
