/**
 * MCP over stdio, one JSON-RPC message per line, answering every line: the SDK's own stdio
 * transport drops lines it cannot parse without a reply and buffers a line of any size.
 *
 * Here a line that is not JSON gets a parse error (id null); a batch, or JSON that is not a message,
 * an invalid request; a line over {@link LIMITS}.stdioLineBytes an invalid request, discarded as it arrives, and the
 * next line is read normally. Blank lines are skipped. Replies are written with synchronous writes,
 * and when the input ends the transport closes only once every request already read has been
 * answered, so a client that writes its requests and closes the pipe still gets every reply.
 */
import { LIMITS } from "../domain/limits.ts";
import type { Logger } from "../log.ts";
import { LineSplitter, OVERSIZED, type SyncWriter, writeAll } from "./deno_stdio.ts";
import { readMessage } from "./jsonrpc.ts";
import { errorReply, INVALID_REQUEST, type JsonRpcErrorReply } from "./rpc_errors.ts";
import type { JSONRPCMessage, Transport } from "./sdk.ts";

/** Options of {@link StdioTransport}; the process's stdin and stdout by default. */
export interface StdioTransportOptions {
  /** What is read into a buffer (`Deno.stdin` by default: not its web stream, ~10 µs less per request). */
  input?: BufferReader;
  output?: SyncWriter;
  /** Largest line accepted, in bytes. */
  maxLineBytes?: number;
  /** Where refused lines are logged (at `warn`). */
  log?: Logger;
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
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  /** Requests read and not answered yet. */
  readonly #pending = new Set<RequestId>();
  #started = false;
  #inputEnded = false;
  #closed = false;

  constructor(options: StdioTransportOptions = {}) {
    this.#input = options.input ?? Deno.stdin;
    this.#output = options.output ?? Deno.stdout;
    this.#maxLineBytes = options.maxLineBytes ?? LIMITS.stdioLineBytes;
    this.#log = options.log;
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
          INVALID_REQUEST,
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
    this.onmessage?.(read.message);
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
    this.onclose?.();
    return Promise.resolve();
  }
}
