/**
 * Byte-level helpers of the stdio transport (`stdio_transport.ts`): splitting input into lines
 * with a bound on their size, and writing a whole buffer with synchronous writes.
 */

/** Marks a line longer than the bound: its bytes were dropped, up to and including its newline. */
export const OVERSIZED: unique symbol = Symbol("oversized line");

/**
 * Splits a byte stream into lines (without `\n`) of at most `maxBytes`. A longer line is reported
 * once as {@link OVERSIZED} as soon as it passes the bound, and the rest of it is discarded as it
 * arrives, so it is never held in memory whole; the line after it is read normally.
 */
export class LineSplitter {
  readonly #max: number;
  #parts: Uint8Array[] = [];
  #size = 0;
  #discarding = false;

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  /** The lines `chunk` completes, in order. */
  *push(chunk: Uint8Array): Generator<Uint8Array | typeof OVERSIZED> {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.#discarding) {
        if (this.#size + (end - start) > this.#max) {
          this.#discarding = true;
          this.#parts = [];
          this.#size = 0;
          yield OVERSIZED;
        } else if (end > start) {
          // A copy: the caller may reuse the chunk's buffer.
          this.#parts.push(chunk.slice(start, end));
          this.#size += end - start;
        }
      }
      if (newline === -1) return;
      if (this.#discarding) this.#discarding = false;
      else yield this.#take();
      start = newline + 1;
    }
  }

  /** The last line when the input ended without a newline. */
  *end(): Generator<Uint8Array> {
    if (!this.#discarding && this.#size > 0) yield this.#take();
    this.#discarding = false;
  }

  #take(): Uint8Array {
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    if (parts.length === 1) return parts[0]!;
    const line = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      line.set(part, at);
      at += part.length;
    }
    return line;
  }
}

/** Something written to with synchronous writes that may take part of a buffer (`Deno.stdout`). */
export interface SyncWriter {
  writeSync(data: Uint8Array): number;
}

/**
 * Writes all of `bytes` before returning. A reply of a few KB in one synchronous write costs about
 * 50 us less than the Node-compatible stream (BENCHMARKS.md), and nothing written is still queued
 * when the process exits.
 */
export function writeAll(output: SyncWriter, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += output.writeSync(bytes.subarray(written));
}
