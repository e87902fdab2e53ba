/**
 * HTTP/1.1 request heads, strict (RFC 9112), for the listener of `deno run` (lib/listener/serve.ts): parsed
 * as their bytes arrive. Pure: bytes in, values out (chunked bodies: http1_chunked.ts; which targets and
 * methods reach the app: http1_target.ts; responses: http1_response.ts).
 *
 * It faces the network, so anything two parsers could read two ways is refused rather than guessed
 * (request smuggling): a request with both `Content-Length` and `Transfer-Encoding`, several or malformed
 * lengths, obs-fold, a bare CR or LF, whitespace before a header's colon. A refusal carries the status to
 * answer with; the connection is closed after it.
 *
 * A head that arrives a byte at a time costs each byte once: {@link HeadParser} keeps where it got to,
 * checks each line as it ends, and refuses as soon as a limit is passed (the request line's length, the
 * head's size with any empty lines before it, the number of fields), not at the blank line.
 */
import {
  canonicalMethod,
  methodRefusal,
  ORIGIN,
  originBytesKept,
  requestUrl,
  type TargetForm,
  targetForm,
} from "./http1_target.ts";
import type { Refusal } from "./http1_refusal.ts";

/** Size limits of a request head and of a chunked body's framing. */
export const HTTP1_LIMITS = {
  /** The request line, in bytes; longer is `414`. */
  requestLine: 8 * 1024,
  /** The whole head (empty lines before it, request line and headers), in bytes; larger is `431`. */
  head: 16 * 1024,
  /** Header fields in a head; more is `431`. */
  headers: 128,
  /** A chunk-size line with its extensions, in bytes; longer is `400`. */
  chunkLine: 4 * 1024,
  /** A chunked body's trailer section, in bytes (trailers are read and ignored); longer is `431`. */
  trailers: 16 * 1024,
} as const;

/** How a request's body is framed. */
export type BodyFraming = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" };

/** A parsed request head. */
export interface RequestHead {
  /** The method as sent (case kept). */
  method: string;
  /** The request target as sent (origin form `/path?q`, or absolute form). */
  target: string;
  /** The URL the app sees: `target` unchanged, with the host (http1_target.ts). */
  url: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  /**
   * Header fields in order, names lower-cased, values without surrounding whitespace. For an
   * absolute-form target, `host` is the target's authority (RFC 9112 section 3.2.2).
   */
  headers: [string, string][];
  /** The `Host` the request is for: the header's value, or an absolute-form target's authority. */
  host: string | undefined;
  body: BodyFraming;
  /** Whether the client lets the connection stay open after the response. */
  keepAlive: boolean;
  /** `Expect: 100-continue` was sent. */
  expectContinue: boolean;
  /** Bytes the head took in the buffer, empty lines before it included. */
  size: number;
}

export type { Refusal } from "./http1_refusal.ts";

/** The outcome of {@link HeadParser.parse}: a head, not enough bytes yet, or a refusal. */
export type HeadResult = { head: RequestHead } | { incomplete: true } | { refused: Refusal };

const CR = 13;
const LF = 10;
const SLASH = 47;
const SP = 32;
const HTAB = 9;
const COLON = 58;

/** `tchar` of RFC 9110 (token characters), by byte. */
export const TOKEN: Uint8Array = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TOKEN[c.charCodeAt(0)] = 1;
}

const INCOMPLETE = { incomplete: true } as const;

function refuse(status: number, reason: string): { refused: Refusal } {
  return { refused: { status, reason } };
}

/**
 * Parses one request head at a time from a connection's buffer, resuming where it stopped when more
 * bytes arrive: call {@link parse} with the same `start` and a larger `end` until it answers a head or a
 * refusal, then {@link reset} before the next head. Offsets are kept relative to `start`, so the bytes
 * may move in the buffer between calls as long as `start` moves with them.
 */
export class HeadParser {
  /** Bytes from `start` already looked at. */
  #scanned = 0;
  /** Where the line being read starts. */
  #lineStart = 0;
  /** Where the request line starts (after any empty lines), -1 until the request line has ended. */
  #first = -1;
  #methodEnd = 0;
  #targetStart = 0;
  #targetEnd = 0;
  #form: TargetForm = ORIGIN;
  #minor: 0 | 1 = 1;
  /** Name start, name end, value start, value end of each header field. */
  #spans: number[] = [];
  /** Whether every header value is ASCII (decoding is cheaper). */
  #ascii = true;

  /** Forgets the head parsed, for the next one. */
  reset(): void {
    this.#scanned = 0;
    this.#lineStart = 0;
    this.#first = -1;
    this.#spans.length = 0;
    this.#ascii = true;
  }

  /**
   * Parses on in the head at `buf[start, end)`. Empty lines before the request line are skipped (a
   * client may send a CRLF after a body) and count towards the head's size. Incomplete until the blank
   * line that ends the head arrives; refused as soon as the bytes so far cannot start a valid head, or
   * pass a limit.
   */
  parse(buf: Uint8Array, start: number, end: number): HeadResult {
    const from = start + this.#scanned;
    // One view of the bytes not looked at yet: a native search for each line end, never past `end`.
    const unread = buf.subarray(from, end);
    let i = from;
    while (i < end) {
      const found = unread.indexOf(LF, i - from);
      if (found === -1) break;
      const lf = found + from;
      const lineStart = start + this.#lineStart;
      if (lf === lineStart || buf[lf - 1] !== CR) {
        return refuse(
          400,
          this.#first === -1 && lf === lineStart
            ? "a bare LF before the request line"
            : "a bare LF in the head",
        );
      }
      const lineEnd = lf - 1;
      i = lf + 1;
      if (i - start > HTTP1_LIMITS.head) return refuse(431, "the request head is too large");
      this.#lineStart = i - start;
      this.#scanned = i - start;
      if (lineEnd === lineStart) {
        if (this.#first === -1) continue; // an empty line before the request line
        return this.#finish(buf, start, i);
      }
      const refused = this.#first === -1
        ? this.#requestLine(buf, start, lineStart, lineEnd)
        : this.#field(buf, start, lineStart, lineEnd);
      if (refused) return refused;
    }
    this.#scanned = end - start;
    if (end - start > HTTP1_LIMITS.head) return refuse(431, "the request head is too large");
    if (this.#first === -1) {
      const lineStart = start + this.#lineStart;
      if (end - lineStart > HTTP1_LIMITS.requestLine) return refuse(414, "the request line is too long");
      if (end - lineStart >= 4 && !looksLikeRequestLine(buf, lineStart, Math.min(end, lineStart + 24))) {
        return refuse(400, "not an HTTP/1 request");
      }
    }
    return INCOMPLETE;
  }

  /** Checks the request line at `buf[from, cr)`; a refusal, or undefined when it is valid. */
  #requestLine(buf: Uint8Array, start: number, from: number, cr: number): { refused: Refusal } | undefined {
    if (cr - from > HTTP1_LIMITS.requestLine) return refuse(414, "the request line is too long");
    let i = from;
    while (TOKEN[buf[i]!]) i++;
    if (i === from || buf[i] !== SP) return refuse(400, "a malformed request line");
    const methodEnd = i++;
    const targetStart = i;
    while (buf[i]! > SP && buf[i]! < 127) i++;
    if (i === targetStart || buf[i] !== SP) return refuse(400, "a malformed request target");
    const targetEnd = i++;
    // HTTP-version = "HTTP/" DIGIT "." DIGIT, then the line's end.
    if (
      cr - i !== 8 || buf[i] !== 72 || buf[i + 1] !== 84 || buf[i + 2] !== 84 || buf[i + 3] !== 80 ||
      buf[i + 4] !== 47 || !isDigit(buf[i + 5]) || buf[i + 6] !== 46 || !isDigit(buf[i + 7])
    ) {
      return refuse(400, "a malformed request line");
    }
    const major = buf[i + 5]! - 48;
    const minor = buf[i + 7]! - 48;
    if (major === 2) return refuse(400, "HTTP/2 is not served here (no upgrade, no prior knowledge)");
    if (major !== 1 || minor > 1) return refuse(505, "only HTTP/1.0 and HTTP/1.1 are served");
    // Checked as bytes: the head is decoded once, when it is whole.
    if (!canonicalMethod(buf, from, methodEnd)) {
      const refused = methodRefusal(ascii(buf, from, methodEnd));
      if (refused) return { refused };
    }
    if (buf[targetStart] === SLASH) {
      if (!originBytesKept(buf, targetStart, targetEnd)) {
        return refuse(400, "a request target that a URL parser would change");
      }
      this.#form = ORIGIN;
    } else {
      const form = targetForm(ascii(buf, targetStart, targetEnd));
      if ("reason" in form) return { refused: form };
      this.#form = form;
    }
    this.#first = from - start;
    this.#methodEnd = methodEnd - start;
    this.#targetStart = targetStart - start;
    this.#targetEnd = targetEnd - start;
    this.#minor = minor as 0 | 1;
    return undefined;
  }

  /** Checks the header field line `buf[from, cr)` (name ":" OWS value OWS) and notes where its parts are. */
  #field(buf: Uint8Array, start: number, from: number, cr: number): { refused: Refusal } | undefined {
    let i = from;
    while (TOKEN[buf[i]!]) i++;
    if (i === cr) return refuse(400, "a malformed header name");
    if (buf[i] !== COLON) {
      if (i === from && (buf[i] === SP || buf[i] === HTAB)) return refuse(400, "obs-fold in a header");
      if (buf[i] === SP || buf[i] === HTAB) return refuse(400, "whitespace before a header's colon");
      if (buf[i] === CR) return refuse(400, "a bare CR in a header");
      return refuse(400, "a malformed header name");
    }
    if (i === from) return refuse(400, "an empty header name");
    const nameEnd = i++;
    while (buf[i] === SP || buf[i] === HTAB) i++;
    const valueStart = i;
    let valueEnd = i;
    for (; i < cr; i++) {
      const c = buf[i]!;
      if (c > SP && c !== 127) {
        valueEnd = i + 1;
        if (c > 127) this.#ascii = false;
      } else if (c === CR) return refuse(400, "a bare CR in a header");
      else if (c !== SP && c !== HTAB) return refuse(400, "a control character in a header value");
    }
    const spans = this.#spans;
    if (spans.length >= HTTP1_LIMITS.headers * 4) return refuse(431, "too many header fields");
    spans.push(from - start, nameEnd - start, valueStart - start, valueEnd - start);
    return undefined;
  }

  /** The head, once its blank line has arrived (`headEnd` is just past it). */
  #finish(buf: Uint8Array, start: number, headEnd: number): { head: RequestHead } | { refused: Refusal } {
    // The head decoded once; the method, the target, each name and value are slices of that text.
    const from = start + this.#first;
    const text = this.#ascii ? ascii(buf, from, headEnd) : latin1(buf, from, headEnd);
    const at = (n: number) => n - this.#first;
    const spans = this.#spans;
    const headers: [string, string][] = [];
    let host: string | undefined;
    let hosts = 0;
    let length: string | undefined;
    let lengths = 0;
    let codings: string | undefined;
    let connection = "";
    let expect: string | undefined;
    for (let h = 0; h < spans.length; h += 4) {
      const name = text.slice(at(spans[h]!), at(spans[h + 1]!)).toLowerCase();
      const value = text.slice(at(spans[h + 2]!), at(spans[h + 3]!));
      headers.push([name, value]);
      switch (name) {
        case "host":
          host = value;
          hosts++;
          break;
        case "content-length":
          length = value;
          lengths++;
          break;
        case "transfer-encoding":
          codings = codings === undefined ? value : `${codings},${value}`;
          break;
        case "connection":
          connection = connection ? `${connection},${value}` : value;
          break;
        case "expect":
          expect = expect === undefined ? value : `${expect},${value}`;
          break;
      }
    }
    const minor = this.#minor;
    if (hosts > 1) return refuse(400, "several Host headers");
    if (minor === 1 && hosts === 0) return refuse(400, "no Host header");
    let body: BodyFraming = { kind: "none" };
    if (codings !== undefined) {
      if (lengths > 0) return refuse(400, "both Content-Length and Transfer-Encoding");
      if (minor === 0) return refuse(400, "Transfer-Encoding in an HTTP/1.0 request");
      const list = codings.split(",").map((c) => c.trim().toLowerCase());
      if (list.some((c) => c === "")) return refuse(400, "an empty transfer-coding");
      if (list[list.length - 1] !== "chunked") return refuse(400, "chunked is not the final transfer-coding");
      if (list.indexOf("chunked") !== list.length - 1) return refuse(400, "chunked applied more than once");
      if (list.length > 1) return refuse(501, "a transfer-coding other than chunked");
      body = { kind: "chunked" };
    } else if (lengths > 1) return refuse(400, "several Content-Length headers");
    else if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) return refuse(400, "an invalid Content-Length");
      const n = Number(length);
      if (n > 0) body = { kind: "length", length: n };
    }
    // `close` wins over `keep-alive`, whichever the version.
    const tokens = connection === "" ? [] : connection.toLowerCase().split(",").map((t) => t.trim());
    const keepAlive = !tokens.includes("close") && (minor === 1 || tokens.includes("keep-alive"));
    let expectContinue = false;
    if (expect !== undefined) {
      if (expect.trim().toLowerCase() !== "100-continue") {
        return refuse(417, "an expectation other than 100-continue");
      }
      expectContinue = minor === 1;
    }
    const target = text.slice(at(this.#targetStart), at(this.#targetEnd));
    const form = this.#form;
    if (form.form === "absolute") {
      // RFC 9112 section 3.2.2: the target's authority, not the Host header, names the host.
      host = form.authority;
      const index = headers.findIndex(([name]) => name === "host");
      if (index === -1) headers.push(["host", host]);
      else headers[index] = ["host", host];
    }
    return {
      head: {
        method: text.slice(0, at(this.#methodEnd)),
        target,
        url: requestUrl(target, form, host),
        minor,
        headers,
        host,
        body,
        keepAlive,
        expectContinue,
        size: headEnd - start,
      },
    };
  }
}

/** Parses the request head at `buf[start, end)` at once (a {@link HeadParser} used for one call). */
export function parseHead(buf: Uint8Array, start: number, end: number): HeadResult {
  return new HeadParser().parse(buf, start, end);
}

/** Whether the first bytes could begin `METHOD SP`: early refusal of garbage without a line end. */
function looksLikeRequestLine(buf: Uint8Array, from: number, end: number): boolean {
  for (let i = from; i < end; i++) {
    if (buf[i] === SP) return i > from;
    if (!TOKEN[buf[i]!]) return false;
  }
  return true;
}

const ASCII = new TextDecoder();

function ascii(buf: Uint8Array, start: number, end: number): string {
  return ASCII.decode(buf.subarray(start, end));
}

/** The bytes as a string, one character per byte (header values may hold obs-text). */
function latin1(buf: Uint8Array, start: number, end: number): string {
  let text = "";
  for (let i = start; i < end; i += 4096) {
    text += String.fromCharCode(...buf.subarray(i, Math.min(end, i + 4096)));
  }
  return text;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 48 && c <= 57;
}
