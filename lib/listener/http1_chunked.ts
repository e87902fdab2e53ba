/**
 * Chunked request bodies (RFC 9112 section 7.1), strict, for the listener of `deno run`
 * (lib/listener/serve.ts): decoded as their bytes arrive. Pure. Chunk extensions and trailers are checked
 * for framing and ignored; broken framing is refused (the connection is closed after it).
 */
import { HTTP1_LIMITS, type Refusal, TOKEN } from "./http1.ts";

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;

function refuse(status: number, reason: string): { refused: Refusal } {
  return { refused: { status, reason } };
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
