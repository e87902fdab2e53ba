/**
 * The dashboard's live updates: one server-sent event stream per open page, fed by the store's
 * change feed. A change wakes every stream, which sends `event: change` with a counter (changes in a
 * burst fold into one event); a page then reads the view again.
 *
 * Bounded: at most `maxStreams` open streams (the next gets 503), a heartbeat comment every
 * `heartbeatMs` so proxies and dead peers are noticed, and `close()` ends them all (at shutdown).
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Logger } from "../log.ts";

/** Subscribes to a store's changes: calls `onChange` after each; returns the unsubscribe function. */
export type ChangeFeed = (onChange: () => void) => () => void;

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  /** The store's change feed; without one the streams only beat. */
  feed?: ChangeFeed;
  log: Logger;
  /** Open streams allowed at once (default 100). */
  maxStreams?: number;
  /** Milliseconds between heartbeats (default 15 000). */
  heartbeatMs?: number;
}

interface Stream {
  wake: () => void;
  end: () => void;
}

/** See the module doc. */
export class EventHub {
  readonly #log: Logger;
  readonly #max: number;
  readonly #heartbeatMs: number;
  readonly #streams = new Set<Stream>();
  readonly #unsubscribe: (() => void) | undefined;
  #seq = 0;
  #closed = false;

  constructor(options: EventHubOptions) {
    this.#log = options.log;
    this.#max = options.maxStreams ?? 100;
    this.#heartbeatMs = options.heartbeatMs ?? 15_000;
    this.#unsubscribe = options.feed?.(() => this.notify());
  }

  /** Open streams now. */
  get size(): number {
    return this.#streams.size;
  }

  /** Tells every open stream that something changed. */
  notify(): void {
    this.#seq++;
    for (const stream of this.#streams) stream.wake();
  }

  /** Answers an event-stream request: a stream, or 503 when {@link EventHubOptions.maxStreams} are open. */
  open(c: Context): Response {
    if (this.#closed || this.#streams.size >= this.#max) {
      this.#log.warn("refused event stream: too many open", { open: this.#streams.size });
      c.header("Retry-After", "5");
      return c.json(
        { error: { code: "UNAVAILABLE", message: "Too many open dashboards; try again shortly." } },
        503,
      );
    }
    c.header("Cache-Control", "no-store");
    c.header("X-Accel-Buffering", "no");
    let wake = () => {};
    let end = () => {};
    const stream: Stream = { wake: () => wake(), end: () => end() };
    this.#streams.add(stream);
    return streamSSE(c, async (sse) => {
      let ended = false;
      let pending: Promise<void> = new Promise((resolve) => (wake = resolve));
      const arm = () => (pending = new Promise((resolve) => (wake = resolve)));
      end = () => {
        ended = true;
        wake();
      };
      sse.onAbort(() => end());
      const beat = setInterval(() => {
        sse.write(": ping\n\n").catch(() => end());
      }, this.#heartbeatMs);
      try {
        await sse.writeSSE({ event: "ready", data: JSON.stringify({ seq: this.#seq }), retry: 1000 });
        let sent = this.#seq;
        while (!ended) {
          await pending;
          arm();
          if (ended || sse.aborted || sse.closed) break;
          if (this.#seq === sent) continue;
          sent = this.#seq;
          await sse.writeSSE({ event: "change", data: JSON.stringify({ seq: sent }) });
        }
      } finally {
        clearInterval(beat);
        this.#streams.delete(stream);
        await sse.close().catch(() => {});
      }
    }, (error) => {
      this.#log.debug("event stream ended", { error: error.message });
      return Promise.resolve();
    });
  }

  /** Ends every stream and stops listening to the feed; later requests get 503. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    for (const stream of this.#streams) stream.end();
  }
}
