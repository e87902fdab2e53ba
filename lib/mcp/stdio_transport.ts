/**
 * The byte framing under the SDK's stdio entry (`serveStdio`, which owns the protocol, both eras
 * included): one JSON-RPC message per line, every line answered. Ours because the SDK's
 * `StdioServerTransport` falls short of docs/requirements.md "Hostile input" (I6) in three
 * measured ways (tests/mcp/stdio_framing_test.ts runs the same lines through both):
 * - a line that is not JSON, or not a message, gets no reply there; here it gets a parse error
 *   (id null), and a batch or a non-message an invalid request;
 * - a line past its buffer bound closes the whole connection there; here a line over
 *   {@link LIMITS}.stdioLineBytes is refused with an invalid request, discarded as it arrives, and
 *   the next line is read normally;
 * - at the end of input it aborts the requests in flight unanswered; here the transport closes only
 *   once every request already read has been answered, so a client that writes its requests and
 *   closes the pipe still gets every reply.
 * Whether a line is a message is the SDK's `parseJSONRPCMessage`; blank lines are skipped; replies
 * are written with synchronous writes. The bytes under it are here too: lines split with a bound on
 * their size ({@link LineSplitter}), and whole buffers written ({@link writeAll}).
 */
import { LIMITS } from "../domain/limits.ts";
import type { Logger } from "../log.ts";
import { errorReply, type JsonRpcErrorReply, notAMessage } from "./rpc_errors.ts";
import { type JSONRPCMessage, parseJSONRPCMessage, ProtocolErrorCode, type Transport } from "./sdk.ts";

/** Options of {@link StdioTransport}; the process's stdin and stdout by default. */
export interface StdioTransportOptions {
  /** What is read into a buffer (`Deno.stdin` by default: not its web stream, ~10 µs less per request). */
  input?: BufferReader;
  output?: SyncWriter;
  /** Largest line accepted, in bytes. */
  maxLineBytes?: number;
  /** Where refused lines are logged (at `warn`). */
  log?: Logger;
  /**
   * Sees each message read, before the protocol does (stdio_serve.ts follows listen streams with it).
   * When it returns a promise, that message and every one after it wait for it, in order: a listen
   * stream is acknowledged only once what it listens to has been read.
   */
  observe?: (message: JSONRPCMessage) => void | Promise<unknown>;
}

type RequestId = string | number;

/** Something read into a buffer: the number of bytes read, null at the end (`Deno.stdin`). */
export interface BufferReader {
  read(buffer: Uint8Array): Promise<number | null>;
}

/** Bytes read at once from a {@link BufferReader}. */
const READ_BUFFER_BYTES = 64 * 1024;

/** The SDK `Transport` over a byte stream in and a synchronous writer out. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: BufferReader;
  readonly #output: SyncWriter;
  readonly #maxLineBytes: number;
  readonly #log: Logger | undefined;
  readonly #observe: ((message: JSONRPCMessage) => void | Promise<unknown>) | undefined;
  /** Messages held back behind an observer's promise, delivered in order; undefined when none are. */
  #held: Promise<void> | undefined;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  /** Requests read and not answered yet. */
  readonly #pending = new Set<RequestId>();
  #started = false;
  #inputEnded = false;
  #closed = false;
  #resolveClosed!: () => void;
  /** Settles once the transport has closed (whoever holds `onclose`). */
  readonly closed: Promise<void> = new Promise((resolve) => (this.#resolveClosed = resolve));

  constructor(options: StdioTransportOptions = {}) {
    this.#input = options.input ?? Deno.stdin;
    this.#output = options.output ?? Deno.stdout;
    this.#maxLineBytes = options.maxLineBytes ?? LIMITS.stdioLineBytes;
    this.#log = options.log;
    this.#observe = options.observe;
  }

  /** Starts reading; called by the SDK's `connect()`. */
  start(): Promise<void> {
    if (this.#started) throw new Error("StdioTransport already started");
    this.#started = true;
    void this.#read();
    return Promise.resolve();
  }

  /** Reads until the input ends (or the transport closes) and hands on each line completed. */
  async #read(): Promise<void> {
    const lines = new LineSplitter(this.#maxLineBytes);
    // One buffer read into again and again: LineSplitter copies what it keeps.
    const buffer = new Uint8Array(READ_BUFFER_BYTES);
    try {
      while (!this.#closed) {
        const n = await this.#input.read(buffer);
        if (n === null) break;
        for (const line of lines.push(buffer.subarray(0, n))) this.#line(line);
      }
      for (const line of lines.end()) this.#line(line);
    } catch (error) {
      if (!this.#closed) this.onerror?.(error as Error);
    }
    this.#inputEnded = true;
    this.#closeWhenAnswered();
  }

  #line(line: Uint8Array | typeof OVERSIZED): void {
    if (this.#closed) return;
    if (line === OVERSIZED) {
      return this.#refuse(
        errorReply(
          ProtocolErrorCode.InvalidRequest,
          `Invalid Request: a line is at most ${this.#maxLineBytes} bytes; this one was discarded`,
        ),
        "line too long",
      );
    }
    const text = this.#decoder.decode(line);
    if (text.trim() === "") return;
    const read = readMessage(text);
    if ("refused" in read) return this.#refuse(read.refused, read.refused.error.message);
    const message = read.message as { id?: RequestId; method?: string; params?: { requestId?: RequestId } };
    if (message.method !== undefined && message.id !== undefined) this.#pending.add(message.id);
    // A cancelled request gets no reply: stop waiting for it.
    if (message.method === "notifications/cancelled" && message.params?.requestId !== undefined) {
      this.#pending.delete(message.params.requestId);
    }
    this.#deliver(read.message);
  }

  /** Hands `message` on, after whatever its observer (or an earlier message's) is waiting for. */
  #deliver(message: JSONRPCMessage): void {
    const waiting = this.#observe?.(message);
    if (!waiting && !this.#held) {
      this.onmessage?.(message);
      return;
    }
    const held: Promise<void> = (this.#held ?? Promise.resolve())
      .then(() => waiting)
      .catch(() => {})
      .then(() => {
        if (!this.#closed) this.onmessage?.(message);
      })
      .finally(() => {
        if (this.#held === held) this.#held = undefined;
      });
    this.#held = held;
  }

  #refuse(reply: JsonRpcErrorReply, reason: string): void {
    this.#log?.warn("stdio line refused", { reason, code: reply.error.code });
    this.#write(reply);
  }

  #write(message: unknown): void {
    writeAll(this.#output, this.#encoder.encode(JSON.stringify(message) + "\n"));
  }

  /** Writes one message as a line; the write is complete when this resolves. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("StdioTransport is closed"));
    try {
      this.#write(message);
    } catch (error) {
      return Promise.reject(error);
    }
    const { id, method } = message as { id?: RequestId; method?: string };
    if (id !== undefined && method === undefined && this.#pending.delete(id)) this.#closeWhenAnswered();
    return Promise.resolve();
  }

  #closeWhenAnswered(): void {
    if (this.#inputEnded && this.#pending.size === 0) void this.close();
  }

  /** Stops reading and calls `onclose` once. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#resolveClosed();
    this.onclose?.();
    return Promise.resolve();
  }
}

/**
 * The message `text` holds, or the reply it gets instead: a parse error when it is not JSON,
 * an invalid request for a batch (one message per line) and for JSON that is not a message.
 */
function readMessage(text: string): { message: JSONRPCMessage } | { refused: JsonRpcErrorReply } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { refused: errorReply(ProtocolErrorCode.ParseError, "Parse error: not valid JSON") };
  }
  if (Array.isArray(value)) {
    return {
      refused: errorReply(
        ProtocolErrorCode.InvalidRequest,
        "Invalid Request: batches are not supported; send one message at a time",
      ),
    };
  }
  try {
    return { message: parseJSONRPCMessage(value) };
  } catch {
    return { refused: notAMessage(value) };
  }
}

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
