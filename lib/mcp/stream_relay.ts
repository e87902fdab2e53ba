/**
 * Response bodies handed on from the SDK's streams, with an end of our own, a bound, or just word of
 * when they are done.
 *
 * {@link relay} (a listen stream's body): the SDK's listen router enqueues each notification into
 * its stream without looking at `desiredSize`, so a client that does not read would have the server
 * queue for it without end. The relay reads the SDK's stream as fast as it produces and queues for
 * the client itself: once `maxQueuedBytes` wait unread (past what the network already holds), the
 * next chunk ends the body as a slow reader and drops what was queued. One chunk may exceed the bound
 * alone (a message is never cut); it is what queues behind it that counts.
 *
 * {@link whenDone} (a reply's body): the same bytes, as they come, and a call once it has ended.
 */
/** How a relayed body is ended from our side: `close` delivers what is queued first, `abort` drops it. */
export type RelayEnd = "close" | "abort";

/** Options of {@link relay}. */
export interface RelayOptions {
  /** Bytes that may wait unread; unbounded when absent. */
  maxQueuedBytes?: number;
  /** Called when the client fell `maxQueuedBytes` behind, just before the body is aborted. */
  onSlow?: (queuedBytes: number) => void;
  /** Runs once, however the body ends (done, cancelled by the client, ended by us, failed). */
  onDone: () => void;
}

/** A relayed body and the way to end it. */
export interface Relay {
  body: ReadableStream<Uint8Array>;
  /** Ends the body (idempotent); the SDK's stream is cancelled, so it tears its side down. */
  end(how: RelayEnd): void;
}

/** See the module doc. */
export function relay(inner: ReadableStream<Uint8Array>, options: RelayOptions): Relay {
  const reader = inner.getReader();
  const limit = options.maxQueuedBytes ?? Infinity;
  // Our own queue, not the stream's: ending a body drops what waits in it without erroring the
  // body (an errored body is an error line on stderr under `deno serve`).
  const queue: Uint8Array[] = [];
  let queued = 0;
  let closing = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  let finished = false;
  const finish = () => {
    if (finished) return false;
    finished = true;
    options.onDone();
    return true;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (queue.length === 0 && !closing) await new Promise<void>((resolve) => (wake = resolve));
      const chunk = queue.shift();
      if (chunk === undefined) return controller.close();
      queued -= chunk.byteLength;
      controller.enqueue(chunk);
    },
    async cancel(reason) {
      finish();
      queue.length = 0;
      queued = 0;
      await reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
  const end = (how: RelayEnd) => {
    if (!finish()) return;
    reader.cancel("ended by the server").catch(() => {});
    if (how === "abort") {
      queue.length = 0;
      queued = 0;
    }
    closing = true;
    nudge();
  };
  (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (finished) return;
        if (done) break;
        if (queued >= limit) {
          options.onSlow?.(queued);
          return end("abort");
        }
        queue.push(value);
        queued += value.byteLength;
        nudge();
      }
    } catch {
      // The SDK's side failed: end the body as if it had ended.
    }
    finish();
    closing = true;
    nudge();
  })();
  return { body, end };
}

/** Settled at once: raced against a read, it tells whether that read had settled already. */
const NOT_YET: Promise<"not yet"> = Promise.resolve("not yet");

/**
 * The body of `inner` unchanged, calling `onDone` once it has ended (read to its end, cancelled by
 * the client, or failed). A chunk whose stream has already ended behind it is handed on together with
 * the end, so the HTTP listener still sees a whole reply at once and writes it with a length.
 */
export function whenDone(inner: ReadableStream<Uint8Array>, onDone: () => void): ReadableStream<Uint8Array> {
  const reader = inner.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return false;
    finished = true;
    onDone();
    return true;
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason).catch(() => {});
    },
  });
  (async () => {
    try {
      let result = await reader.read();
      for (;;) {
        if (finished) return;
        if (result.done) {
          finish();
          return controller.close();
        }
        const next = reader.read();
        const early = await Promise.race([next, NOT_YET]);
        if (finished) return;
        controller.enqueue(result.value);
        if (early !== "not yet" && early.done) {
          finish();
          return controller.close();
        }
        result = early !== "not yet" ? early : await next;
      }
    } catch (error) {
      if (finish()) controller.error(error);
    }
  })();
  return body;
}
