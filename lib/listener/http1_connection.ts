/**
 * One TCP connection of the listener of `deno run` (lib/listener/serve.ts): it reads requests in order
 * (pipelined ones too), hands each to the app as a web `Request`, writes the answers, and keeps the
 * deadlines on heads, bodies and idle time that the server's sweep enforces.
 */
import type { LogFields, Logger } from "../log.ts";
import { BodySource, FramingError } from "./http1_body.ts";
import { HeadParser, type Refusal, type RequestHead } from "./http1.ts";
import type { RefusalBody } from "./http1_refusal.ts";
import { pathOf, toRequest } from "./http1_request.ts";
import {
  chunkOf,
  encodeMessage,
  headerLines,
  NO_BODY_STATUS,
  reasonPhrase,
  statusLine,
} from "./http1_response.ts";

/** Deadlines, the handler and the body of the listener's own answers, shared by a server's connections. */
export interface ListenerSettings {
  fetch: (request: Request) => Response | Promise<Response>;
  log: Logger;
  /** A client's mistake, answered with `status` (lib/listener/client_mistakes.ts: a debug line and a count). */
  mistake(status: number, msg: string, fields?: LogFields): void;
  bodyMs: number;
  headersMs: number;
  idleMs: number;
  /** The body of an answer the listener gives itself (a refusal, a timeout, its last-resort `500`). */
  refusal: RefusalBody;
  /** The `date` header line, computed at most once a second. */
  date(): string;
}

/** What a connection waits for, which says what its deadline means. */
type Waiting = "idle" | "head" | "body" | "nothing" | "linger";

/** Buffered unread bytes past which the connection stops reading until they are consumed. */
const HIGH_WATER = 64 * 1024;
/**
 * The buffer a connection reads into when it has nothing unread, usually while it waits for its next
 * request: most requests fit, and an idle connection holds no more than this.
 */
const SMALL_BUFFER = 4 * 1024;
/** The space a read is given once the one before filled all it had (the client has more to send). */
const LARGE_READ = 16 * 1024;
/** The least space a read is given otherwise. */
const MIN_READ = 1024;
/** An unread body remainder up to this size is read and dropped to keep the connection; past it, closed. */
const DRAIN_LIMIT = 64 * 1024;
/** How long a closing connection reads (and drops) what the client still sends, so it gets the answer. */
const LINGER_MS = 2000;

const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");

/**
 * One TCP connection: reads requests in order, answers each, keeps the deadlines. (An MCP client's
 * connection is another thing: lib/mcp/connections.ts.)
 */
export class Http1Connection {
  buf: Uint8Array<ArrayBuffer>;
  start = 0;
  end = 0;
  /** When the current wait fails (performance.now() time); Infinity when nothing is awaited. */
  deadline = Infinity;
  #waiting: Waiting = "idle";
  #conn: Deno.TcpConn;
  #settings: ListenerSettings;
  #head = new HeadParser();
  /** The buffer {@link SMALL_BUFFER} is about: kept for the connection's life, used whenever nothing is unread. */
  #small: Uint8Array<ArrayBuffer> = new Uint8Array(SMALL_BUFFER);
  #reading = false;
  /** Whether the last read filled all the space it was given. */
  #full = false;
  /** The client sent its last byte (or the connection broke). */
  #eof = false;
  #closed = false;
  #drop = false;
  #wake: ((more: boolean) => void)[] = [];
  #finishing: Promise<void> | undefined;
  // The request being answered.
  #target = "/";
  #aborter: AbortController | undefined;
  #source: BodySource | undefined;
  #bodyStream: ReadableStreamDefaultController<Uint8Array> | undefined;
  #streamReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #headSent = false;
  /** Stop after the current request (a refusal or a timeout answered it). */
  #last = false;

  constructor(conn: Deno.TcpConn, settings: ListenerSettings) {
    this.#conn = conn;
    this.#settings = settings;
    this.buf = this.#small;
    // Once per connection, not per request (a system call each time).
    try {
      conn.setNoDelay(true);
    } catch {
      // the connection is gone already; the first read says so
    }
  }

  /** Serves requests until the client or a rule ends the connection. */
  async serve(): Promise<void> {
    try {
      this.#pump();
      while (!this.#closed && !this.#last) {
        const head = await this.#nextHead();
        if (!head) break;
        if (!(await this.#exchange(head))) break;
      }
    } catch (error) {
      this.#settings.log.error("http connection failed", { error });
    } finally {
      await this.#finish();
    }
  }

  /** Closes the connection at once, ending whatever it was doing. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.deadline = Infinity;
    try {
      this.#conn.close();
    } catch {
      // closed already
    }
    this.#clientGone();
    this.#wakeUp(false);
  }

  /** Called by the server's sweep once {@link deadline} has passed. */
  expire(): void {
    const waiting = this.#waiting;
    this.deadline = Infinity;
    if (waiting === "idle" || waiting === "linger" || waiting === "nothing") return this.close();
    if (waiting === "head") {
      this.#settings.mistake(408, "request head timed out; connection closed", {
        timeoutMs: this.#settings.headersMs,
      });
      return void this.#refuse(
        408,
        `Request Timeout: the request head did not arrive within ${seconds(this.#settings.headersMs)} s`,
      );
    }
    // waiting for a body: unless all of it is here, unread, the client stalled it.
    if (this.#source?.buffered(this)) return;
    this.#settings.mistake(408, "request body timed out; connection closed", {
      path: pathOf(this.#target),
      timeoutMs: this.#settings.bodyMs,
    });
    this.#clientGone();
    void this.#refuse(
      408,
      `Request Timeout: the body did not arrive within ${seconds(this.#settings.bodyMs)} s`,
    );
  }

  /** Marks `n` buffered bytes as read. */
  consume(n: number): void {
    this.start += n;
    // Rewound only between reads: a pending read writes at the old end.
    if (!this.#reading) {
      if (this.start === this.end) this.start = this.end = 0;
      this.#pump();
    }
  }

  /**
   * Keeps one read outstanding while there is room: it brings pipelined requests and notices a client
   * gone. A body still arriving whose last read filled its space is read in larger pieces; otherwise,
   * with nothing unread, the read goes to the small buffer and a larger one is let go (an idle
   * connection holds only the small one).
   */
  #pump(): void {
    if (this.#reading || this.#eof || this.#closed) return;
    if (this.#drop) this.start = this.end = 0;
    const used = this.end - this.start;
    if (used >= HIGH_WATER) return;
    const large = this.#full && this.#source !== undefined && !this.#source.done;
    const want = large ? LARGE_READ : MIN_READ;
    if (used === 0) {
      this.start = this.end = 0;
      if (!large) this.buf = this.#small;
      else if (this.buf.length < want) this.buf = new Uint8Array(want);
    } else if (this.buf.length - this.end < want) {
      const size = used + want > this.buf.length
        ? Math.max(this.buf.length * 2, used + want)
        : this.buf.length;
      if (size === this.buf.length) this.buf.copyWithin(0, this.start, this.end);
      else {
        const bigger = new Uint8Array(size);
        bigger.set(this.buf.subarray(this.start, this.end), 0);
        this.buf = bigger;
      }
      this.start = 0;
      this.end = used;
    }
    this.#reading = true;
    this.#full = false;
    this.#conn.read(this.buf.subarray(this.end)).then(this.#onRead, this.#onReadError);
  }

  #onRead = (n: number | null): void => {
    this.#reading = false;
    if (n === null) return this.#ended();
    this.#full = this.end + n === this.buf.length;
    this.end += n;
    this.#wakeUp(true);
    // Read on once whoever waited has taken its bytes (its continuation runs first): with nothing left
    // unread, the next read can go to the small buffer.
    queueMicrotask(this.#pumpLater);
  };

  #pumpLater = (): void => this.#pump();

  #onReadError = (): void => {
    this.#reading = false;
    this.#ended();
  };

  /** The client will send nothing more: whatever it asked and is still running is for nobody. */
  #ended(): void {
    this.#eof = true;
    this.#clientGone();
    this.#wakeUp(false);
  }

  #clientGone(): void {
    this.#aborter?.abort();
    this.#bodyStream?.error(new Error("the connection closed before the body ended"));
    this.#bodyStream = undefined;
    this.#streamReader?.cancel().catch(() => {});
    this.#streamReader = undefined;
  }

  #wakeUp(more: boolean): void {
    if (this.#wake.length === 0) return;
    const wake = this.#wake;
    this.#wake = [];
    for (const resolve of wake) resolve(more);
  }

  /** Resolves true when more bytes have arrived, false when none will. */
  #more(): Promise<boolean> {
    if (this.#closed || this.#eof) return Promise.resolve(false);
    this.#pump();
    return new Promise((resolve) => void this.#wake.push(resolve));
  }

  #wait(waiting: Waiting, ms: number): void {
    this.#waiting = waiting;
    this.deadline = ms === Infinity ? Infinity : performance.now() + ms;
  }

  async #nextHead(): Promise<RequestHead | undefined> {
    this.#wait("idle", this.#settings.idleMs);
    this.#head.reset();
    while (true) {
      if (this.start < this.end) {
        const result = this.#head.parse(this.buf, this.start, this.end);
        if ("head" in result) {
          this.consume(result.head.size);
          return result.head;
        }
        if ("refused" in result) {
          this.#settings.mistake(result.refused.status, "http request refused", {
            reason: result.refused.reason,
          });
          await this.#refuse(result.refused.status, refusalText(result.refused));
          return undefined;
        }
        if (this.#waiting === "idle") this.#wait("head", this.#settings.headersMs);
      }
      if (!(await this.#more())) return undefined;
    }
  }

  /** Answers one request; false when the connection must close after it. */
  async #exchange(head: RequestHead): Promise<boolean> {
    const settings = this.#settings;
    this.#target = head.target;
    this.#headSent = false;
    const aborter = new AbortController();
    this.#aborter = aborter;
    const source = head.body.kind === "none" ? undefined : new BodySource(head.body);
    this.#source = source;
    let body: BodyInit | null = null;
    try {
      if (source) {
        const first = source.take(this);
        if (source.done) body = first ?? null;
        else {
          this.#wait("body", settings.bodyMs);
          if (head.expectContinue && !(await this.#write(CONTINUE))) return false;
          body = this.#stream(source, first);
        }
      }
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      this.#bodyRefused(error.refusal);
      await this.#refuse(error.refusal.status, refusalText(error.refusal));
      return false;
    }
    if (!source || source.done) this.#wait("nothing", Infinity);
    const request = toRequest(head, aborter.signal, body);
    let response: Response;
    if (!request) response = this.#ownAnswer(400, "Bad Request: the request cannot be served", true);
    else {
      try {
        response = await settings.fetch(request);
      } catch (error) {
        // The app answers its own errors (Hono's onError); this is the listener's last resort.
        settings.log.error("http request failed", { path: pathOf(head.target), error });
        response = this.#ownAnswer(500, "Internal error", false);
      }
    }
    const keepAlive = await this.#respond(head, response, source);
    this.#aborter = undefined;
    this.#bodyStream = undefined;
    if (!keepAlive || this.#closed || this.#last) return false;
    // A body the app left unread (an early answer) is read and dropped, under the same deadline.
    try {
      while (source && !source.done) {
        source.take(this, true);
        if (!source.done && !(await this.#more())) return false;
      }
    } catch (error) {
      if (error instanceof FramingError) return false;
      throw error;
    }
    return true;
  }

  /** The body still arriving, as a stream the app reads; its deadline runs whether it reads or not. */
  #stream(source: BodySource, first: Uint8Array | undefined): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#bodyStream = controller;
        if (first) controller.enqueue(first);
      },
      pull: async (controller) => {
        while (this.#bodyStream === controller) {
          let chunk: Uint8Array | undefined;
          try {
            chunk = source.take(this);
          } catch (error) {
            if (!(error instanceof FramingError)) throw error;
            this.#bodyRefused(error.refusal);
            this.#clientGone();
            void this.#refuse(error.refusal.status, refusalText(error.refusal));
            return;
          }
          if (chunk && chunk.byteLength > 0) controller.enqueue(chunk);
          if (source.done) {
            this.#bodyStream = undefined;
            this.#wait("nothing", Infinity);
            controller.close();
            return;
          }
          if (chunk && chunk.byteLength > 0) return;
          if (!(await this.#more()) && this.#bodyStream === controller) {
            this.#clientGone();
            return;
          }
        }
      },
      cancel: () => {
        this.#bodyStream = undefined;
      },
    }, { highWaterMark: 0 });
  }

  /**
   * Writes `response` in as few socket writes as it allows (each costs more than the bytes in it):
   * a whole body with its headers at once; an event stream that has ended by the time its first
   * event arrives (the usual answer to a POST: one JSON-RPC response) likewise, with a length. Other
   * event streams go out as they come, chunked; a GET's (which may stay silent) sends its headers
   * first. Returns whether the connection stays open.
   */
  async #respond(head: RequestHead, response: Response, source: BodySource | undefined): Promise<boolean> {
    if (this.#headSent || this.#closed) {
      await response.body?.cancel().catch(() => {});
      return false;
    }
    const status = response.status;
    let keepAlive = head.keepAlive && !this.#eof && !hasClose(response.headers.get("connection"));
    // An unread body too large to drop, or of unknown length, ends the connection.
    if (source && !source.done && source.left > DRAIN_LIMIT) keepAlive = false;
    const noBody = NO_BODY_STATUS.has(status) || status < 200;
    const isHead = head.method === "HEAD";
    const stream = !noBody && !isHead && response.body !== null &&
      (response.headers.get("content-type")?.startsWith("text/event-stream") ?? false);
    const chunked = stream && head.minor === 1;
    if (stream && !chunked) keepAlive = false;
    let lines = statusLine(status) + headerLines(response.headers) + this.#settings.date();
    if (!keepAlive) lines += "connection: close\r\n";
    else if (head.minor === 0) lines += "connection: keep-alive\r\n";
    const whole = async (body: Uint8Array | undefined): Promise<boolean> => {
      if (noBody) return await this.#writeHead(encodeMessage(lines + "\r\n")) && keepAlive;
      if (isHead) {
        const length = response.headers.get("content-length");
        const framing = length !== null ? `content-length: ${length}\r\n` : "";
        return await this.#writeHead(encodeMessage(lines + framing + "\r\n")) && keepAlive;
      }
      const size = body?.byteLength ?? 0;
      return await this.#writeHead(encodeMessage(`${lines}content-length: ${size}\r\n\r\n`, body)) &&
        keepAlive;
    };
    if (!stream) {
      let body: Uint8Array | undefined;
      if (!noBody && !isHead && response.body) {
        try {
          body = await response.bytes();
        } catch {
          this.close();
          return false;
        }
      } else await response.body?.cancel().catch(() => {});
      return await whole(body);
    }
    const reader = response.body!.getReader();
    this.#streamReader = reader;
    const frame = (data: Uint8Array) => chunked ? chunkOf(data) : data;
    const streamHead = lines + (chunked ? "transfer-encoding: chunked\r\n\r\n" : "\r\n");
    try {
      let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
      if (head.method === "GET") {
        if (!(await this.#writeHead(encodeMessage(streamHead)))) return false;
      } else {
        const first = await reader.read();
        if (first.done) return await whole(undefined);
        pending = reader.read();
        const next = await Promise.race([pending, NOT_YET]);
        if (next !== "not yet" && next.done) return await whole(first.value);
        const framed = frame(first.value);
        const out = encodeMessage(streamHead, framed);
        if (!(await this.#writeHead(out))) return false;
      }
      while (!this.#closed) {
        const { done, value } = await (pending ?? reader.read());
        pending = undefined;
        if (done) break;
        if (value.byteLength > 0 && !(await this.#write(frame(value)))) return false;
      }
      if (this.#closed) return false;
      if (chunked && !(await this.#write(LAST_CHUNK))) return false;
      return keepAlive;
    } catch {
      // The body failed midway (its producer was cancelled): end the connection, not the process.
      this.close();
      return false;
    } finally {
      if (this.#streamReader === reader) this.#streamReader = undefined;
      reader.cancel().catch(() => {});
    }
  }

  /** Writes a response's first bytes, unless a response (a timeout's) went out already. */
  async #writeHead(bytes: Uint8Array): Promise<boolean> {
    if (this.#headSent || this.#closed) return false;
    this.#headSent = true;
    return await this.#write(bytes);
  }

  async #write(bytes: Uint8Array): Promise<boolean> {
    try {
      for (let at = 0; at < bytes.byteLength;) {
        at += await this.#conn.write(at === 0 ? bytes : bytes.subarray(at));
      }
      return true;
    } catch {
      this.close();
      return false;
    }
  }

  /** Notes a body whose framing broke (a client's mistake). */
  #bodyRefused(refusal: Refusal): void {
    this.#settings.mistake(refusal.status, "request body refused; connection closed", {
      reason: refusal.reason,
      path: pathOf(this.#target),
    });
  }

  /** Answers `status` with the refusal body (unless an answer went out already) and closes. */
  async #refuse(status: number, message: string): Promise<void> {
    this.#last = true;
    const { type, text } = this.#settings.refusal(status, message);
    const body = new TextEncoder().encode(text);
    const head = statusLine(status) + `content-type: ${type}\r\n` + this.#settings.date() +
      `connection: close\r\ncontent-length: ${body.byteLength}\r\n\r\n`;
    if (this.#headSent) return this.close();
    await this.#writeHead(encodeMessage(head, body));
    await this.#finish();
  }

  /** An answer the listener gives itself, as a response to write; `close`: the connection ends after it. */
  #ownAnswer(status: number, message: string, close: boolean): Response {
    const { type, text } = this.#settings.refusal(status, message);
    const headers: Record<string, string> = { "content-type": type };
    if (close) headers.connection = "close";
    return new Response(text, { status, headers });
  }

  /**
   * Ends the connection: sends FIN, then reads and drops what the client still sends for a moment
   * before closing, so that a client still writing receives the answer instead of a reset.
   */
  #finish(): Promise<void> {
    this.#finishing ??= (async () => {
      if (this.#closed) return;
      this.#last = true;
      try {
        await this.#conn.closeWrite();
      } catch {
        return this.close();
      }
      this.#drop = true;
      this.#wait("linger", LINGER_MS);
      while (await this.#more()) {
        // dropped by #pump, which rewinds between reads
      }
      this.close();
    })();
    return this.#finishing;
  }
}

/** Settled at once: raced against a read, it tells whether that read had settled already. */
const NOT_YET: Promise<"not yet"> = Promise.resolve("not yet");

/** A refusal's message: the status's reason phrase, then why (`Bad Request: a bare LF in the head`). */
function refusalText({ status, reason }: Refusal): string {
  return `${reasonPhrase(status)}: ${reason}`;
}

function seconds(ms: number): number {
  return ms / 1000;
}

function hasClose(connection: string | null): boolean {
  return connection !== null && connection.toLowerCase().split(",").some((t) => t.trim() === "close");
}
