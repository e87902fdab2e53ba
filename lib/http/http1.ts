/**
 * HTTP/1.1 request framing, strict (RFC 9112), for the listener of `deno run` (lib/http/serve.ts):
 * the request head and chunked bodies. Pure: bytes in, values out (responses: http1_response.ts).
 *
 * It faces the network, so anything two parsers could read two ways is refused rather than
 * guessed (request smuggling): a request with both `Content-Length` and `Transfer-Encoding`,
 * several or malformed lengths, obs-fold, a bare CR or LF, whitespace before a header's colon.
 * A refusal carries the status to answer with; the connection is closed after it.
 */

/** Size limits of a request head and of a chunked body's framing. */
export const HTTP1_LIMITS = {
  /** The request line, in bytes; longer is `414`. */
  requestLine: 8 * 1024,
  /** The whole head (request line and headers), in bytes; longer is `431`. */
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
  method: string;
  /** The request target as sent (origin form `/path?q`, or absolute form). */
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  /** Header fields in order, names lower-cased, values without surrounding whitespace. */
  headers: [string, string][];
  /** The `Host` header's value (`undefined` when absent). */
  host: string | undefined;
  body: BodyFraming;
  /** Whether the client lets the connection stay open after the response. */
  keepAlive: boolean;
  /** `Expect: 100-continue` was sent. */
  expectContinue: boolean;
  /** Bytes the head took in the buffer, from the offset it was parsed at. */
  size: number;
}

/** Why a request is refused, with the status to answer (the connection closes after it). */
export interface Refusal {
  status: number;
  reason: string;
}

/** The outcome of {@link parseHead}: a head, not enough bytes yet, or a refusal. */
export type HeadResult = { head: RequestHead } | { incomplete: true } | { refused: Refusal };

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;

/** `tchar` of RFC 9110 (token characters), by byte. */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TOKEN[c.charCodeAt(0)] = 1;
}

const INCOMPLETE = { incomplete: true } as const;

function refuse(status: number, reason: string): { refused: Refusal } {
  return { refused: { status, reason } };
}

/**
 * Parses the request head at `buf[start, end)`. Empty lines before the request line are skipped (a
 * client may send a CRLF after a body). Incomplete until the blank line that ends the head arrives;
 * refused as soon as the bytes so far cannot start a valid head, or pass a limit.
 */
export function parseHead(buf: Uint8Array, start: number, end: number): HeadResult {
  let from = start;
  while (from + 1 < end && buf[from] === CR && buf[from + 1] === LF) from += 2;
  if (from < end && buf[from] === LF) return refuse(400, "a bare LF before the request line");
  // Find the blank line; every LF must follow a CR.
  let headEnd = -1;
  let lineStart = from;
  let lines = 0;
  for (let i = buf.indexOf(LF, from); i !== -1 && i < end; i = buf.indexOf(LF, i + 1)) {
    if (i === from || buf[i - 1] !== CR) return refuse(400, "a bare LF in the head");
    if (lines === 0 && i - from > HTTP1_LIMITS.requestLine) {
      return refuse(414, "the request line is too long");
    }
    if (i - 1 === lineStart) {
      headEnd = i + 1;
      break;
    }
    lineStart = i + 1;
    lines++;
  }
  if (headEnd === -1) {
    const scanned = Math.min(end, buf.length) - from;
    if (lines === 0 && scanned > HTTP1_LIMITS.requestLine) return refuse(414, "the request line is too long");
    if (scanned > HTTP1_LIMITS.head) return refuse(431, "the request head is too large");
    if (lines === 0 && scanned >= 4 && !looksLikeRequestLine(buf, from, Math.min(end, from + 24))) {
      return refuse(400, "not an HTTP/1 request");
    }
    return INCOMPLETE;
  }
  if (headEnd - from > HTTP1_LIMITS.head) return refuse(431, "the request head is too large");
  const parsed = parseLines(buf, from, headEnd);
  if ("refused" in parsed) return parsed;
  parsed.head.size = headEnd - start;
  return parsed;
}

/** Whether the first bytes could begin `METHOD SP`: early refusal of garbage without a line end. */
function looksLikeRequestLine(buf: Uint8Array, from: number, end: number): boolean {
  for (let i = from; i < end; i++) {
    if (buf[i] === SP) return i > from;
    if (!TOKEN[buf[i]!]) return false;
  }
  return true;
}

/** The head's bytes as a string, one character per byte (header values may hold obs-text). */
function latin1(buf: Uint8Array, start: number, end: number, ascii: boolean): string {
  if (ascii) return ASCII.decode(buf.subarray(start, end));
  let text = "";
  for (let i = start; i < end; i += 4096) {
    text += String.fromCharCode(...buf.subarray(i, Math.min(end, i + 4096)));
  }
  return text;
}

const ASCII = new TextDecoder();

function parseLines(
  buf: Uint8Array,
  from: number,
  headEnd: number,
): { head: RequestHead } | { refused: Refusal } {
  // Validate byte by byte, noting where each piece starts and ends; decode once at the end.
  let i = from;
  const methodStart = i;
  while (TOKEN[buf[i]!]) i++;
  if (i === methodStart || buf[i] !== SP) return refuse(400, "a malformed request line");
  const methodEnd = i++;
  const targetStart = i;
  while (buf[i]! > SP && buf[i]! < 127) i++;
  if (i === targetStart || buf[i] !== SP) return refuse(400, "a malformed request target");
  const targetEnd = i++;
  // HTTP-version = "HTTP/" DIGIT "." DIGIT, then CRLF.
  if (
    buf[i] !== 72 || buf[i + 1] !== 84 || buf[i + 2] !== 84 || buf[i + 3] !== 80 || buf[i + 4] !== 47 ||
    !isDigit(buf[i + 5]) || buf[i + 6] !== 46 || !isDigit(buf[i + 7]) || buf[i + 8] !== CR ||
    buf[i + 9] !== LF
  ) {
    return refuse(400, "a malformed request line");
  }
  const major = buf[i + 5]! - 48;
  const minor = buf[i + 7]! - 48;
  if (major === 2) return refuse(400, "HTTP/2 is not served here (no upgrade, no prior knowledge)");
  if (major !== 1 || minor > 1) return refuse(505, "only HTTP/1.0 and HTTP/1.1 are served");
  i += 10;
  // Header fields: name ":" OWS value OWS CRLF.
  const spans: number[] = [];
  let ascii = true;
  while (i < headEnd - 2) {
    const nameStart = i;
    while (TOKEN[buf[i]!]) i++;
    if (buf[i] !== COLON) {
      if (i === nameStart && (buf[i] === SP || buf[i] === HTAB)) return refuse(400, "obs-fold in a header");
      if (buf[i] === SP || buf[i] === HTAB) return refuse(400, "whitespace before a header's colon");
      return refuse(400, "a malformed header name");
    }
    if (i === nameStart) return refuse(400, "an empty header name");
    const nameEnd = i++;
    while (buf[i] === SP || buf[i] === HTAB) i++;
    const valueStart = i;
    let valueEnd = i;
    for (;; i++) {
      const c = buf[i]!;
      if (c === CR) break;
      if (c > SP && c !== 127) {
        valueEnd = i + 1;
        if (c > 127) ascii = false;
      } else if (c !== SP && c !== HTAB) return refuse(400, "a control character in a header value");
    }
    // The scan for the head's end made sure every CR here is followed by LF.
    if (buf[i + 1] !== LF) return refuse(400, "a bare CR in a header");
    i += 2;
    spans.push(nameStart, nameEnd, valueStart, valueEnd);
    if (spans.length > HTTP1_LIMITS.headers * 4) return refuse(431, "too many header fields");
  }
  const text = latin1(buf, from, headEnd, ascii);
  const at = (n: number) => n - from;
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
  const tokens = connection.toLowerCase();
  const keepAlive = minor === 1 ? !hasToken(tokens, "close") : hasToken(tokens, "keep-alive");
  let expectContinue = false;
  if (expect !== undefined) {
    if (expect.trim().toLowerCase() !== "100-continue") {
      return refuse(417, "an expectation other than 100-continue");
    }
    expectContinue = minor === 1;
  }
  return {
    head: {
      method: text.slice(at(methodStart), at(methodEnd)),
      target: text.slice(at(targetStart), at(targetEnd)),
      minor: minor as 0 | 1,
      headers,
      host,
      body,
      keepAlive,
      expectContinue,
      size: headEnd - from,
    },
  };
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 48 && c <= 57;
}

/** Whether the comma list `list` (lower case) holds `token`. */
function hasToken(list: string, token: string): boolean {
  if (list === "") return false;
  return list.split(",").some((t) => t.trim() === token);
}

/** What {@link ChunkedDecoder.decode} made of the bytes it was given. */
export type ChunkedResult =
  | { consumed: number; data: Uint8Array[]; done: boolean }
  | { refused: Refusal };

/**
 * Decodes a chunked body incrementally: give it the unread bytes, it says how many it consumed and
 * which data they held (views into the given buffer: copy them before the buffer is reused).
 * Chunk extensions and trailers are checked for framing and ignored.
 */
export class ChunkedDecoder {
  #state: "size" | "data" | "data-end" | "trailers" | "done" = "size";
  #left = 0;
  #trailerBytes = 0;

  /** Whether the last chunk and the trailer section have been read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Decodes what it can of `buf[start, end)`. */
  decode(buf: Uint8Array, start: number, end: number): ChunkedResult {
    const data: Uint8Array[] = [];
    let i = start;
    while (i < end && this.#state !== "done") {
      if (this.#state === "data") {
        const n = Math.min(this.#left, end - i);
        data.push(buf.subarray(i, i + n));
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = "data-end";
        continue;
      }
      if (this.#state === "data-end") {
        if (end - i < 2) break;
        if (buf[i] !== CR || buf[i + 1] !== LF) return refuse(400, "chunk data not followed by CRLF");
        i += 2;
        this.#state = "size";
        continue;
      }
      const lf = buf.indexOf(LF, i);
      const limit = this.#state === "size"
        ? HTTP1_LIMITS.chunkLine
        : HTTP1_LIMITS.trailers - this.#trailerBytes;
      if (lf === -1 || lf >= end) {
        if (end - i > limit) {
          return this.#state === "size"
            ? refuse(400, "a chunk-size line too long")
            : refuse(431, "the trailer section is too large");
        }
        break;
      }
      if (lf === i || buf[lf - 1] !== CR) return refuse(400, "a bare LF in chunked framing");
      if (lf + 1 - i > limit) {
        return this.#state === "size"
          ? refuse(400, "a chunk-size line too long")
          : refuse(431, "the trailer section is too large");
      }
      if (this.#state === "size") {
        const size = chunkSize(buf, i, lf - 1);
        if (size === undefined) return refuse(400, "a malformed chunk-size line");
        i = lf + 1;
        if (size === 0) this.#state = "trailers";
        else {
          this.#left = size;
          this.#state = "data";
        }
        continue;
      }
      // A trailer line, or the blank line that ends the body.
      if (lf - 1 === i) {
        i = lf + 1;
        this.#state = "done";
        break;
      }
      if (!validTrailer(buf, i, lf - 1)) return refuse(400, "a malformed trailer field");
      this.#trailerBytes += lf + 1 - i;
      i = lf + 1;
    }
    return { consumed: i - start, data, done: this.#state === "done" };
  }
}

/** `chunk-size [ chunk-ext ]` at `buf[start, end)` (no CRLF): the size, or undefined when malformed. */
function chunkSize(buf: Uint8Array, start: number, end: number): number | undefined {
  let size = 0;
  let i = start;
  for (; i < end; i++) {
    const c = buf[i]!;
    const digit = c >= 48 && c <= 57
      ? c - 48
      : c >= 97 && c <= 102
      ? c - 87
      : c >= 65 && c <= 70
      ? c - 55
      : -1;
    if (digit === -1) break;
    size = size * 16 + digit;
  }
  if (i === start || i - start > 12) return undefined;
  // chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] ): checked for stray bytes only.
  while (i < end && (buf[i] === SP || buf[i] === HTAB)) i++;
  if (i < end && buf[i] !== 59) return undefined;
  for (; i < end; i++) {
    const c = buf[i]!;
    if ((c < SP && c !== HTAB) || c === 127) return undefined;
  }
  return size;
}

function validTrailer(buf: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end && TOKEN[buf[i]!]) i++;
  if (i === start || buf[i] !== COLON) return false;
  for (i++; i < end; i++) {
    const c = buf[i]!;
    if ((c < SP && c !== HTAB) || c === 127) return false;
  }
  return true;
}
