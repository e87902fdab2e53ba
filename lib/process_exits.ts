/**
 * How a running server process ends, and what never ends it. Once it serves, an error that nothing
 * caught (a rejected promise in a background job, a throw in a timer callback) is logged and the
 * server goes on: every store change is atomic and runs in its store's queue, so such an error leaves
 * nothing half done. The only exits are the start-up refusals and a clean stop, and each one logs its
 * exit code and reason first ({@link exitWith}).
 */
import type { Logger } from "./log.ts";

/**
 * From now on, an unhandled rejection or an uncaught error is logged (at `error`, with its message)
 * instead of ending the process. Call once, when the server starts serving.
 */
export function keepServing(log: Logger): void {
  addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log.error("unhandled rejection; the server goes on", { error: event.reason });
  });
  addEventListener("error", (event) => {
    event.preventDefault();
    log.error("uncaught error; the server goes on", { error: event.error ?? event.message });
  });
}

/** Logs why the process ends and with which code (`info` for 0, else `error`), then ends it. */
export function exitWith(log: Logger, code: number, reason: string): never {
  (code === 0 ? log.info : log.error)("exiting", { exitCode: code, reason });
  Deno.exit(code);
}

/** A start-up refusal: one line, `cannot start` with the problem and the exit code, then exit 1. */
export function refuseStart(log: Logger, error: unknown): never {
  log.error("cannot start", { error: (error as Error)?.message ?? String(error), exitCode: 1 });
  Deno.exit(1);
}
