/**
 * Helpers for serving the SDK's `StdioServerTransport` well under Deno.
 *
 * {@link denoStdout} stands in for `process.stdout`: the transport only calls `write(string)` and
 * `once("drain")` on it, and writing the encoded line with `Deno.stdout.writeSync` skips the
 * Node-compatible stream machinery (about 50 us less per reply of a few KB; BENCHMARKS.md). The
 * write completes before `write` returns, so `drain` is never needed. Stdin stays
 * `process.stdin`: Deno's own `Deno.stdin.readable` measured slower per message here.
 */
import type { Writable } from "node:stream";

/** A stdout for `StdioServerTransport` that writes each message with one synchronous write. */
export function denoStdout(output: { writeSync(data: Uint8Array): number } = Deno.stdout): Writable {
  const encoder = new TextEncoder();
  const stdout = {
    write(text: string | Uint8Array) {
      const bytes = typeof text === "string" ? encoder.encode(text) : text;
      let written = 0;
      while (written < bytes.length) written += output.writeSync(bytes.subarray(written));
      return true;
    },
    once() {
      return stdout;
    },
  };
  return stdout as unknown as Writable;
}

/** The transport surface {@link closeWhenAnswered} wraps (the SDK's transports fit). */
export interface MessageTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  send(message: never, options?: never): Promise<void>;
}

/**
 * Returns `hangUp`: call it when the client has gone (stdin ended); `close` then runs as soon as
 * every request already received has been answered, so a client that writes its requests and
 * closes the pipe at once still gets every reply. Wraps `onmessage` and `send`: call it after
 * `connect()`.
 */
export function closeWhenAnswered(transport: MessageTransport, close: () => Promise<void>): () => void {
  const pending = new Set<unknown>();
  let hungUp = false;
  let closing = false;
  const maybeClose = () => {
    if (hungUp && pending.size === 0 && !closing) {
      closing = true;
      void close().catch(() => {});
    }
  };
  const onmessage = transport.onmessage;
  transport.onmessage = ((message: { id?: unknown; method?: unknown }, extra?: never) => {
    if (message.id !== undefined && message.method !== undefined) pending.add(message.id);
    onmessage?.(message as never, extra);
  }) as MessageTransport["onmessage"];
  const send = transport.send.bind(transport);
  transport.send = (async (message: { id?: unknown; method?: unknown }, options?: never) => {
    try {
      await send(message as never, options);
    } finally {
      if (message.id !== undefined && message.method === undefined) {
        pending.delete(message.id);
        maybeClose();
      }
    }
  }) as MessageTransport["send"];
  return () => {
    hungUp = true;
    maybeClose();
  };
}
