/**
 * The one count of open event streams, which both surfaces receive: the dashboard's page streams
 * (`/events`, lib/dashboard/server/events.ts) and MCP's `subscriptions/listen` streams
 * (lib/mcp/listen_streams.ts) take their places here, so a credential's share holds across both.
 *
 * At most `max` streams at once, shared fairly among credentials (fair_share.ts): a credential at its
 * share, or any credential when the cap is full, that opens another first ends its own oldest stream,
 * of either kind; one that holds none while the cap is full is refused. Each surface feeds and ends its
 * own streams; this only counts them and says which must end. Pure bookkeeping: no Hono, no SDK.
 */
import type { Logger } from "../log.ts";
import type { Credential } from "./credential.ts";
import { admission } from "./fair_share.ts";

/** Options of {@link StreamShares}. */
export interface StreamSharesOptions {
  /** Open streams allowed at once. */
  max: number;
  /** Open streams one credential may hold (`tenantShare(max, …)`); `max` by default. */
  share?: number;
  log: Logger;
}

/** One place taken: whose, and how its surface ends it. */
interface Place {
  credential: Credential;
  end: () => void;
}

/** See the module doc. */
export class StreamShares {
  readonly #max: number;
  readonly #share: number;
  readonly #log: Logger;
  /** Places taken, oldest first. */
  readonly #places = new Set<Place>();
  /** Places per credential name. */
  readonly #held = new Map<string, number>();

  constructor(options: StreamSharesOptions) {
    this.#max = options.max;
    this.#share = Math.min(options.share ?? options.max, options.max);
    this.#log = options.log;
  }

  /** Streams open (or opening) now, of both kinds. */
  get size(): number {
    return this.#places.size;
  }

  /** Streams of `credential` now. */
  heldBy(credential: Credential): number {
    return this.#held.get(credential.name) ?? 0;
  }

  /**
   * Takes a place for one more stream of `credential`, after ending the credential's own oldest one
   * when it is at its share or the cap is full; undefined when the cap is full of other credentials'
   * streams. `end` is called if the place must be given up for a newer stream of the same credential;
   * the returned function gives the place back (idempotent; call it however the stream ends).
   */
  admit(credential: Credential, end: () => void): (() => void) | undefined {
    if (!this.#makeRoom(credential)) return undefined;
    const place: Place = { credential, end };
    this.#places.add(place);
    this.#held.set(credential.name, this.heldBy(credential) + 1);
    return () => this.#release(place);
  }

  /** Makes room for one more stream of `credential` (its own oldest goes); false: refuse it. */
  #makeRoom(credential: Credential): boolean {
    for (;;) {
      const verdict = admission({
        held: this.heldBy(credential),
        total: this.#places.size,
        share: this.#share,
        cap: this.#max,
      });
      if (verdict === "admit") return true;
      const own = [...this.#places].find((p) => p.credential.name === credential.name);
      if (verdict === "refuse" || !own) {
        this.#log.warn("refused event stream: too many open", {
          credential: credential.name,
          open: this.#places.size,
          max: this.#max,
        });
        return false;
      }
      this.#log.warn("event stream quota: ended the credential's oldest stream", {
        credential: credential.name,
        share: this.#share,
        max: this.#max,
      });
      this.#release(own);
      own.end();
    }
  }

  #release(place: Place): void {
    if (!this.#places.delete(place)) return;
    const name = place.credential.name;
    const held = (this.#held.get(name) ?? 1) - 1;
    if (held > 0) this.#held.set(name, held);
    else this.#held.delete(name);
  }
}
