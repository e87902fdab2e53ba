/**
 * Ending what a revoked credential opened (docs/hosting.md "Hosting for a team"): removing a token from the
 * tokens file ends its open dashboard event streams and its MCP connections (and with them their
 * streams) within 2 seconds, though no request of it arrives. Requests need no help: each is checked
 * against the file anyway.
 *
 * While anything long-lived is open or opening (`active()`: a listen stream still being set up
 * counts), the file is checked every `intervalMs` (a `stat`; it is read only when it changed); when
 * its entries changed since the last check (whether this watch or a request read it again), `end`
 * is handed the test of a revoked credential. The timer runs only then: {@link RevocationWatch.poke}
 * starts it when a connection or a stream is admitted, it stops by itself once nothing is open or
 * opening, and `stop()` ends it at shutdown.
 */
import type { Logger } from "../log.ts";
import type { Authenticator } from "./authenticator.ts";
import type { Credential } from "./credential.ts";
import { DEFAULTS } from "../config.ts";

/** Options of {@link RevocationWatch}. */
export interface RevocationWatchOptions {
  auth: Authenticator;
  log: Logger;
  /** Whether anything a credential opened is still open or opening (connections, event and listen streams). */
  active: () => boolean;
  /** Ends everything open whose credential `revoked` names; returns how many it ended. */
  end: (revoked: (credential: Credential) => boolean) => number;
  /** Milliseconds between checks of the file (default {@link DEFAULTS}.revocationCheckMs). */
  intervalMs?: number;
}

/** See the module doc. */
export class RevocationWatch {
  readonly #options: RevocationWatchOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  #stopped = false;
  /** The version of the tokens file's entries last acted on. */
  #seen = 0;

  constructor(options: RevocationWatchOptions) {
    this.#options = options;
  }

  /** Starts checking if something is open and the credentials can be revoked (call when one opens). */
  poke(): void {
    if (this.#stopped || this.#timer !== undefined || !this.#options.auth.revocable) return;
    if (!this.#options.active()) return;
    const timer = setInterval(() => this.#tick(), this.#options.intervalMs ?? DEFAULTS.revocationCheckMs);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  /** Stops checking for good. */
  stop(): void {
    this.#stopped = true;
    this.#halt();
  }

  #halt(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #tick(): Promise<void> {
    if (this.#checking) return;
    if (!this.#options.active()) return this.#halt();
    this.#checking = true;
    try {
      const { auth, log } = this.#options;
      const version = await auth.refresh();
      if (version === this.#seen) return;
      this.#seen = version;
      const ended = this.#options.end((credential) => auth.revoked(credential));
      if (ended > 0) {
        log.warn("revoked credentials: their connections and event streams were ended", { ended });
      }
    } catch (error) {
      this.#options.log.error("checking the tokens file for revocations failed", { error });
    } finally {
      this.#checking = false;
    }
  }
}
