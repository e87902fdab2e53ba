/**
 * The Streamable HTTP transport (MCP 2025-11-25, "Transports") of one MCP connection, or of one
 * stateless request: it turns `/mcp` requests into messages for a {@link ProtocolServer} and the
 * server's messages into event streams.
 *
 * It answers as the SDK's `WebStandardStreamableHTTPServerTransport` did here (same statuses, codes,
 * messages, headers and SSE framing; tests/http/mcp_transport_test.ts holds each rule) without its
 * per-request costs: no zod parse of each message in or out (lib/http/body.ts has checked the body
 * with `isMessage`), no `requestInfo` nobody reads, one keep-alive timer per connection instead of
 * one per stream. Not supported, as this server never configured them: resumability (an event
 * store, `Last-Event-ID`), JSON responses instead of SSE, and DNS-rebinding options (app.ts guards
 * Host and Origin).
 *
 * Routing of what the server sends: a response goes to the stream of the POST that carried its
 * request, and that stream ends once every request of the POST is answered; a notification with a
 * `relatedRequestId` goes to that request's stream; anything else to the standalone GET stream when
 * one is open, else nowhere.
 */
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from "../mcp/request_schemas.ts";
import { isMessage } from "../mcp/jsonrpc.ts";
import {
  errorReply,
  INVALID_REQUEST,
  PARSE_ERROR,
  SERVER_ERROR,
  SESSION_NOT_FOUND,
} from "../mcp/rpc_errors.ts";
import type { JSONRPCMessage, Transport } from "../mcp/sdk.ts";

/** Most messages in one batch (the SDK's limit): a longer batch is refused with 400. */
export const MAX_BATCH_MESSAGES = 100;

/** How often an open event stream gets a `: keepalive` comment, by default (the SDK's interval). */
export const KEEP_ALIVE_MS = 15_000;

/** Options of {@link McpHttpTransport}. */
export interface McpHttpTransportOptions {
  /** Makes the connection's `Mcp-Session-Id` at `initialize`; absent: stateless, one request only. */
  sessionIdGenerator?: () => string;
  /** Called once `initialize` has set the session id, before the reply. */
  onsessioninitialized?: (sessionId: string) => void | Promise<void>;
  /** Called when a `DELETE` ends the session, before the transport closes (stateful only). */
  onsessionclosed?: (sessionId: string) => void | Promise<void>;
  /** Interval of keep-alive comments on open event streams; {@link KEEP_ALIVE_MS} by default. */
  keepAliveMs?: number;
}

type RequestId = string | number;

/** An open event stream: a POST's (answering `pending`) or the standalone GET's. */
interface Stream {
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** Request ids of this POST not answered yet (empty for the GET stream). */
  pending: Set<RequestId>;
  /** Whether the client went away or the stream ended: nothing more is written. */
  ended: boolean;
}

const ENCODER = new TextEncoder();
const KEEP_ALIVE_FRAME = ENCODER.encode(": keepalive\n\n");
const SUPPORTED_VERSIONS_TEXT = SUPPORTED_PROTOCOL_VERSIONS.join(", ");

/** The transport of one MCP connection (stateful) or one request (stateless); see the module doc. */
export class McpHttpTransport implements Transport {
  /** The connection's `Mcp-Session-Id`, set at `initialize` (stateful only). */
  sessionId: string | undefined;
  /** Called once when the transport closes (`close()`, `DELETE`). */
  onclose?: () => void;
  /** Called with errors no reply can carry. */
  onerror?: (error: Error) => void;
  /** Called with each message a client sent. */
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: McpHttpTransportOptions;
  #started = false;
  #handled = false;
  #initialized = false;
  #closed = false;
  /** The POST stream each unanswered request id belongs to. */
  readonly #byRequest = new Map<RequestId, Stream>();
  #standalone: Stream | undefined;
  /** Every open stream, for keep-alive and close. */
  readonly #open = new Set<Stream>();
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(options: McpHttpTransportOptions = {}) {
    this.#options = options;
  }

  /** Required by the transport interface; there is nothing to start. Throws when called twice. */
  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error("Transport already started"));
    this.#started = true;
    return Promise.resolve();
  }

  /**
   * Answers one `/mcp` request. A POST's body must already be read and checked (lib/http/body.ts)
   * and given as `parsedBody`. Throws when a stateless transport is used for a second request.
   */
  async handleRequest(request: Request, options: { parsedBody?: unknown } = {}): Promise<Response> {
    if (this.#closed) return refuse(404, SESSION_NOT_FOUND, "Session not found");
    if (!this.#options.sessionIdGenerator && this.#handled) {
      throw new Error(
        "Stateless transport cannot be reused across requests. Create a new transport per request.",
      );
    }
    this.#handled = true;
    switch (request.method) {
      case "POST":
        return await this.#post(request, options.parsedBody);
      case "GET":
        return this.#get(request);
      case "DELETE":
        return await this.#delete(request);
      default:
        return refuse(405, SERVER_ERROR, "Method not allowed.", { Allow: "GET, POST, DELETE" });
    }
  }

  /**
   * Sends one message of the server's (see the module doc for where it goes). Throws for a
   * response to no request of this transport's, and when the stream of its request is gone.
   */
  send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    // Closed: every stream has ended and nobody waits for this any more.
    if (this.#closed) return Promise.resolve();
    const isResponse = !("method" in message);
    const requestId = isResponse ? (message as { id?: RequestId }).id : options?.relatedRequestId;
    if (requestId === undefined) {
      if (isResponse) {
        return Promise.reject(
          new Error(
            "Cannot send a response on a standalone SSE stream unless resuming a previous client request",
          ),
        );
      }
      if (this.#standalone) this.#write(this.#standalone, message);
      return Promise.resolve();
    }
    const stream = this.#byRequest.get(requestId);
    if (!stream) return Promise.reject(noConnection(requestId));
    this.#write(stream, message);
    if (isResponse) {
      stream.pending.delete(requestId);
      if (stream.pending.size === 0) {
        for (const [id, s] of this.#byRequest) if (s === stream) this.#byRequest.delete(id);
        // The client left before its answer: as the SDK's, say it could not be delivered.
        if (stream.ended) return Promise.reject(noConnection(requestId));
        this.#end(stream);
      } else if (stream.ended) {
        this.#byRequest.delete(requestId);
      }
    }
    return Promise.resolve();
  }

  /** Ends every stream and calls `onclose`, once. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    for (const stream of [...this.#open]) this.#end(stream);
    this.#byRequest.clear();
    this.#standalone = undefined;
    this.#disarmKeepAlive();
    this.onclose?.();
    return Promise.resolve();
  }

  async #post(request: Request, body: unknown): Promise<Response> {
    const accept = request.headers.get("accept");
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
      return refuse(
        406,
        SERVER_ERROR,
        "Not Acceptable: Client must accept both application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return refuse(415, SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json");
    }
    if (Array.isArray(body) && body.length > MAX_BATCH_MESSAGES) {
      return refuse(
        400,
        INVALID_REQUEST,
        `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages`,
      );
    }
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    if (!messages.every(isMessage)) {
      return refuse(400, PARSE_ERROR, "Parse error: Invalid JSON-RPC message");
    }
    const initialize = messages.some((m) =>
      "method" in m && m.method === "initialize" && isInitializeRequest(m)
    );
    if (initialize) {
      if (this.#initialized && this.sessionId !== undefined) {
        return refuse(400, INVALID_REQUEST, "Invalid Request: Server already initialized");
      }
      if (messages.length > 1) {
        return refuse(400, INVALID_REQUEST, "Invalid Request: Only one initialization request is allowed");
      }
      this.sessionId = this.#options.sessionIdGenerator?.();
      this.#initialized = true;
      if (this.sessionId !== undefined) await this.#options.onsessioninitialized?.(this.sessionId);
    } else {
      const refused = this.#checkSession(request) ?? checkProtocolVersion(request);
      if (refused) return refused;
    }
    if (this.#closed) return refuse(404, SESSION_NOT_FOUND, "Session not found");
    const requestIds: RequestId[] = [];
    for (const m of messages) if ("method" in m && "id" in m) requestIds.push(m.id);
    if (requestIds.length === 0) {
      for (const m of messages) this.onmessage?.(m);
      return new Response(null, { status: 202 });
    }
    const { stream, body: events } = this.#openStream(new Set(requestIds));
    for (const id of requestIds) this.#byRequest.set(id, stream);
    for (const m of messages) this.onmessage?.(m);
    return new Response(events, { status: 200, headers: this.#streamHeaders() });
  }

  #get(request: Request): Response {
    if (!request.headers.get("accept")?.includes("text/event-stream")) {
      return refuse(406, SERVER_ERROR, "Not Acceptable: Client must accept text/event-stream");
    }
    const refused = this.#checkSession(request) ?? checkProtocolVersion(request);
    if (refused) return refused;
    if (this.#standalone) {
      return refuse(409, SERVER_ERROR, "Conflict: Only one SSE stream is allowed per session");
    }
    const { stream, body } = this.#openStream(new Set());
    this.#standalone = stream;
    // The client going away ends it even where the server does not cancel the body.
    request.signal.addEventListener("abort", () => this.#end(stream), { once: true });
    return new Response(body, { status: 200, headers: this.#streamHeaders() });
  }

  async #delete(request: Request): Promise<Response> {
    const refused = this.#checkSession(request) ?? checkProtocolVersion(request);
    if (refused) return refused;
    try {
      if (this.sessionId !== undefined) await this.#options.onsessionclosed?.(this.sessionId);
    } finally {
      await this.close();
    }
    return new Response(null, { status: 200 });
  }

  /** The refusal of a request that does not belong to this session (stateful only), or undefined. */
  #checkSession(request: Request): Response | undefined {
    if (!this.#options.sessionIdGenerator) return undefined;
    if (!this.#initialized) return refuse(400, SERVER_ERROR, "Bad Request: Server not initialized");
    const sessionId = request.headers.get("mcp-session-id");
    if (!sessionId) return refuse(400, SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required");
    if (sessionId !== this.sessionId) return refuse(404, SESSION_NOT_FOUND, "Session not found");
    return undefined;
  }

  #streamHeaders(): Record<string, string> {
    const headers: Record<string, string> = {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    };
    if (this.sessionId !== undefined) headers["mcp-session-id"] = this.sessionId;
    return headers;
  }

  #openStream(pending: Set<RequestId>): { stream: Stream; body: ReadableStream<Uint8Array> } {
    let stream!: Stream;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        stream = { controller, pending, ended: false };
      },
      cancel: () => this.#end(stream),
    });
    this.#open.add(stream);
    this.#armKeepAlive();
    return { stream, body };
  }

  #write(stream: Stream, message: JSONRPCMessage): void {
    if (stream.ended) return;
    try {
      stream.controller.enqueue(ENCODER.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  /** Ends `stream` (idempotent): closes its body unless the client cancelled it. */
  #end(stream: Stream): void {
    if (stream.ended) return;
    stream.ended = true;
    this.#open.delete(stream);
    if (this.#standalone === stream) this.#standalone = undefined;
    try {
      stream.controller.close();
    } catch {
      // Cancelled by the client: already closed.
    }
  }

  /**
   * One timer for all open streams: armed when a stream opens, disarmed by the first tick that finds
   * none open and by `close()`, not each time a POST's stream ends (that cost about 5 µs a request).
   */
  #armKeepAlive(): void {
    const ms = this.#options.keepAliveMs ?? KEEP_ALIVE_MS;
    if (this.#keepAlive !== undefined || !(ms >= 1 && ms < 2 ** 31)) return;
    this.#keepAlive = setInterval(() => {
      if (this.#open.size === 0) this.#disarmKeepAlive();
      for (const stream of this.#open) {
        try {
          stream.controller.enqueue(KEEP_ALIVE_FRAME);
        } catch {
          this.#end(stream);
        }
      }
    }, ms);
    Deno.unrefTimer(this.#keepAlive);
  }

  #disarmKeepAlive(): void {
    if (this.#keepAlive === undefined) return;
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}

/** A JSON-RPC error response with no id, as every refusal of the transport is. */
function refuse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json(errorReply(code, message), { status, headers });
}

/** The refusal of an `Mcp-Protocol-Version` header naming a version this server does not speak. */
function checkProtocolVersion(request: Request): Response | undefined {
  const version = request.headers.get("mcp-protocol-version");
  if (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return refuse(
    400,
    SERVER_ERROR,
    `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_VERSIONS_TEXT})`,
  );
}

function noConnection(requestId: RequestId): Error {
  return new Error(`No connection established for request ID: ${String(requestId)}`);
}

/** RFC 9110 `token`. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** A `type/subtype` of tokens. */
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);
/** One `; name=value` parameter (value a token or a quoted string), read where the last one ended. */
const PARAMETER = new RegExp(
  `; *${TOKEN} *= *("(?:[\\u000b\\u0020\\u0021\\u0023-\\u005b\\u005d-\\u007e\\u0080-\\u00ff]|\\\\[\\u000b\\u0020-\\u00ff])*"|${TOKEN}) *`,
  "y",
);

/**
 * Whether a `Content-Type` names `application/json` as its media type (RFC 9110: type and subtype
 * case-insensitive; a substring match would take `text/plain; x=application/json`). A header that is
 * not one well-formed media type with parameters still counts by what precedes its first `;`,
 * unless a comma follows (a list of values, not one media type), as in browsers and the SDK.
 */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  if (header === "application/json") return true;
  const semicolon = header.indexOf(";");
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim();
  if (wellFormed(header, semicolon, type)) return type.toLowerCase() === "application/json";
  const essence = type.toLowerCase();
  return essence === "application/json" && !header.slice(essence.length).includes(",");
}

/** Whether `header` is a media type `type` followed, from `semicolon`, only by parameters. */
function wellFormed(header: string, semicolon: number, type: string): boolean {
  if (!MEDIA_TYPE.test(type)) return false;
  if (semicolon === -1) return true;
  let at = semicolon;
  while (at < header.length) {
    PARAMETER.lastIndex = at;
    const match = PARAMETER.exec(header);
    if (!match) return false;
    at += match[0].length;
  }
  return true;
}
