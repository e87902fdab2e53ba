/**
 * What the listener of `deno run` (lib/listener/serve.ts) logs when a client gets HTTP wrong: a request it
 * refuses, a head or body that does not arrive in time, broken chunked framing. Any client can make
 * such mistakes as often as it likes, so each is a `debug` line, and once a minute at most one `info`
 * line counts them by status; none is a `warn` or an `error`, which are for the server's own trouble.
 */
import type { LogFields, Logger } from "../log.ts";

/** How often the counts are logged (when there are any). */
export const MISTAKE_SUMMARY_MS = 60_000;

/** Counts clients' mistakes by the status they were answered with, and logs the counts once per interval. */
export class MistakeTally {
  #log: Logger;
  #everyMs: number;
  #counts = new Map<string, number>();
  #since: number;

  constructor(log: Logger, options: { everyMs?: number; now?: number } = {}) {
    this.#log = log;
    this.#everyMs = options.everyMs ?? MISTAKE_SUMMARY_MS;
    this.#since = options.now ?? performance.now();
  }

  /** A client's mistake answered with `status`: a `debug` line `msg` with `fields`, and a count. */
  note(status: number, msg: string, fields: LogFields = {}): void {
    const kind = String(status);
    this.#counts.set(kind, (this.#counts.get(kind) ?? 0) + 1);
    this.#log.debug(msg, { status, ...fields });
  }

  /** Logs the counts at `info` once `everyMs` have passed since the last time (nothing when there are none). */
  tick(now: number = performance.now()): void {
    if (now - this.#since < this.#everyMs) return;
    if (this.#counts.size > 0) {
      const counts = Object.fromEntries(this.#counts);
      this.#counts.clear();
      this.#log.info("http clients' mistakes", { counts, seconds: Math.round((now - this.#since) / 1000) });
    }
    this.#since = now;
  }
}
