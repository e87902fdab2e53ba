/**
 * The dashboard's live updates: one server-sent event stream per open page, for one namespace, fed
 * by the store's change feed. A change to that namespace sends `event: change` with the namespace's
 * counter (changes in a burst fold into one event); a page then reads the view again. A change to
 * another namespace sends nothing, so a stream tells nobody when other tenants work.
 *
 * The store's feed says only that something changed. So after each burst of changes the hub reads
 * the version of every namespace that has open streams (`Space.version`: what moves when anything
 * in it changes, read without visiting its tasks) and wakes the streams of those whose version
 * moved.
 *
 * Bounded: each stream takes a place in the event streams' fair shares (lib/auth/stream_shares.ts,
 * which MCP's listen streams share: a credential at its share, or any when the cap is full, gives up its
 * own oldest stream of either kind; one that holds none while the cap is full gets 503); a heartbeat
 * comment every `heartbeatMs` so proxies and dead peers are noticed; `endWhere` ends the streams of a
 * revoked credential and `close()` all of them (at shutdown).
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Caller, Credential } from "../../auth/credential.ts";
import { StreamShares } from "../../auth/stream_shares.ts";
import type { Logger } from "../../log.ts";
import { DEFAULTS } from "../../config.ts";

/** Subscribes to a store's changes: calls `onChange` after each; returns the unsubscribe function. */
export type ChangeFeed = (onChange: () => void) => () => void;

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  /** The store's change feed; without one the streams only beat. */
  feed?: ChangeFeed;
  log: Logger;
  /**
   * Where each stream takes its place (shared with MCP's listen streams); by default the hub's own, of
   * {@link DEFAULTS}.maxEventStreams with no share per credential.
   */
  shares?: StreamShares;
  /** Milliseconds between heartbeats (default {@link DEFAULTS}.heartbeatMs). */
  heartbeatMs?: number;
  /**
   * A text that changes whenever what a page shows of the namespace changes (`Space.version`);
   * without it every change counts as a change of every namespace.
   */
  version?: (namespace: string) => Promise<string>;
}

interface Stream extends Caller {
  /** Set by `end()`, which may come before the stream's body has started. */
  ended: boolean;
  wake: () => void;
  end: () => void;
  /** Gives its place in the shares back. */
  release: () => void;
}

/** See the module doc. */
export class EventHub {
  readonly #log: Logger;
  readonly #shares: StreamShares;
  readonly #heartbeatMs: number;
  readonly #version: ((namespace: string) => Promise<string>) | undefined;
  /** Open streams, oldest first. */
  readonly #streams = new Set<Stream>();
  /** Changes seen per namespace (the `seq` a stream sends). */
  readonly #seq = new Map<string, number>();
  /** The last version read per namespace with open streams. */
  readonly #versions = new Map<string, string>();
  readonly #unsubscribe: (() => void) | undefined;
  #dirty = false;
  #checking: Promise<void> | undefined;
  #closed = false;

  constructor(options: EventHubOptions) {
    this.#log = options.log;
    this.#shares = options.shares ?? new StreamShares({ max: DEFAULTS.maxEventStreams, log: options.log });
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULTS.heartbeatMs;
    this.#version = options.version;
    this.#unsubscribe = options.feed?.(() => this.notify());
  }

  /** Open streams now. */
  get size(): number {
    return this.#streams.size;
  }

  /** Tells the hub that something changed: the namespaces it changed get a change event. */
  notify(): void {
    this.#dirty = true;
    this.#checking ??= this.#check().finally(() => (this.#checking = undefined));
  }

  /**
   * Answers an event-stream request of `caller` (for a namespace the credential may see; routes.ts
   * checks): a stream (after closing the credential's own oldest one when it is at its share, or the
   * cap is full), or 503 when the cap is full of other credentials' streams.
   */
  open(c: Context, caller: Caller): Response {
    let wake = () => {};
    const stream: Stream = {
      ...caller,
      ended: false,
      wake: () => wake(),
      end: () => {
        stream.ended = true;
        wake();
      },
      release: () => {},
    };
    const release = this.#closed ? undefined : this.#shares.admit(caller.credential, () => {
      this.#remove(stream);
      stream.end();
    });
    if (!release) {
      c.header("Retry-After", "5");
      return c.json(
        { error: { code: "UNAVAILABLE", message: "Too many open dashboards; try again shortly." } },
        503,
      );
    }
    stream.release = release;
    c.header("Cache-Control", "no-store");
    c.header("X-Accel-Buffering", "no");
    this.#streams.add(stream);
    const { namespace } = caller;
    return streamSSE(c, async (sse) => {
      let pending: Promise<void> = new Promise((resolve) => (wake = resolve));
      const arm = () => (pending = new Promise((resolve) => (wake = resolve)));
      sse.onAbort(() => stream.end());
      const beat = setInterval(() => {
        sse.write(": ping\n\n").catch(() => stream.end());
      }, this.#heartbeatMs);
      try {
        await this.#baseline(namespace);
        let sent = this.#seq.get(namespace) ?? 0;
        if (!stream.ended) {
          await sse.writeSSE({ event: "ready", data: JSON.stringify({ seq: sent }), retry: 1000 });
        }
        while (!stream.ended) {
          await pending;
          arm();
          if (stream.ended || sse.aborted || sse.closed) break;
          const seq = this.#seq.get(namespace) ?? 0;
          if (seq === sent) continue;
          sent = seq;
          await sse.writeSSE({ event: "change", data: JSON.stringify({ seq }) });
        }
      } finally {
        clearInterval(beat);
        this.#remove(stream);
        await sse.close().catch(() => {});
      }
    }, (error) => {
      this.#log.debug("event stream ended", { error: error.message });
      return Promise.resolve();
    });
  }

  /** Ends every open page stream whose credential `refused` names (a revoked token); returns how many. */
  endWhere(refused: (credential: Credential) => boolean): number {
    let ended = 0;
    for (const stream of [...this.#streams]) {
      if (!refused(stream.credential)) continue;
      this.#log.warn("event stream ended: its credential was revoked", {
        credential: stream.credential.name,
      });
      this.#remove(stream);
      stream.end();
      ended++;
    }
    return ended;
  }

  /** Ends every stream and stops listening to the feed; later requests get 503. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    for (const stream of [...this.#streams]) {
      this.#remove(stream);
      stream.end();
    }
  }

  /**
   * Forgets a stream and gives its place back (idempotent); a namespace left without streams is not watched.
   */
  #remove(stream: Stream): void {
    if (!this.#streams.delete(stream)) return;
    stream.release();
    if (![...this.#streams].some((s) => s.namespace === stream.namespace)) {
      this.#versions.delete(stream.namespace);
    }
  }

  /** Reads the namespace's version when it has none yet, so the first change is told from no change. */
  async #baseline(namespace: string): Promise<void> {
    if (!this.#version || this.#versions.has(namespace)) return;
    const version = await this.#version(namespace).catch(() => undefined);
    if (version !== undefined && !this.#versions.has(namespace)) {
      this.#versions.set(namespace, version);
    }
  }

  /** After changes: wakes the streams of each namespace whose version moved (all, without versions). */
  async #check(): Promise<void> {
    while (this.#dirty) {
      this.#dirty = false;
      const namespaces = new Set([...this.#streams].map((s) => s.namespace));
      for (const namespace of namespaces) {
        if (this.#version) {
          const version = await this.#version(namespace).catch((error) => {
            this.#log.debug("event stream: reading a namespace's version failed", { namespace, error });
            return undefined;
          });
          if (version === undefined || version === this.#versions.get(namespace)) continue;
          this.#versions.set(namespace, version);
        }
        this.#seq.set(namespace, (this.#seq.get(namespace) ?? 0) + 1);
        for (const stream of this.#streams) if (stream.namespace === namespace) stream.wake();
      }
    }
  }
}
