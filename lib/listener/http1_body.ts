/**
 * A request body still on the wire, for the listener of `deno run` (lib/listener/http1_connection.ts):
 * what is left of it, taken from the connection's buffer as it arrives (length-framed or chunked).
 */
import type { Refusal, RequestHead } from "./http1.ts";
import { ChunkedDecoder } from "./http1_chunked.ts";

/** The unread bytes of a connection, `buf[start, end)`, and how to mark some of them read. */
export interface ReadBuffer {
  buf: Uint8Array<ArrayBuffer>;
  start: number;
  end: number;
  consume(n: number): void;
}

/** Thrown inside a body read when the chunked framing is broken. */
export class FramingError extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.reason);
  }
}

/** A request body still on the wire: what is left of it, read from the connection's buffer. */
export class BodySource {
  #left: number;
  #chunked: ChunkedDecoder | undefined;
  done = false;
  /** Bytes the framing still announces (chunked: unknown, Infinity). */
  get left(): number {
    return this.#chunked ? Infinity : this.#left;
  }

  constructor(framing: RequestHead["body"]) {
    this.#left = framing.kind === "length" ? framing.length : 0;
    this.#chunked = framing.kind === "chunked" ? new ChunkedDecoder() : undefined;
    this.done = framing.kind === "none";
  }

  /** Takes the body's bytes buffered in `c` (a copy, or nothing with `drop`). */
  take(c: ReadBuffer, drop = false): Uint8Array<ArrayBuffer> | undefined {
    if (this.done) return undefined;
    if (!this.#chunked) {
      const n = Math.min(this.#left, c.end - c.start);
      if (n === 0) return undefined;
      const chunk = drop ? undefined : c.buf.slice(c.start, c.start + n);
      c.consume(n);
      this.#left -= n;
      this.done = this.#left === 0;
      return chunk;
    }
    const result = this.#chunked.decode(c.buf, c.start, c.end);
    if ("refused" in result) throw new FramingError(result.refused);
    let chunk: Uint8Array<ArrayBuffer> | undefined;
    if (!drop && result.data.length === 1) chunk = result.data[0]!.slice();
    else if (!drop && result.data.length > 1) {
      chunk = new Uint8Array(result.data.reduce((sum, d) => sum + d.byteLength, 0));
      let at = 0;
      for (const d of result.data) {
        chunk.set(d, at);
        at += d.byteLength;
      }
    }
    c.consume(result.consumed);
    this.done = result.done;
    return chunk;
  }

  /** Whether the rest of the body is already buffered in `c` (length-framed bodies only). */
  buffered(c: ReadBuffer): boolean {
    return this.done || (!this.#chunked && c.end - c.start >= this.#left);
  }
}
