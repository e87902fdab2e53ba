/**
 * The one retry rule of the KV store: an attempt that met another writer (a failed versionstamp
 * check, a store that changed while it was read) or a busy SQLite file ("database is locked") did
 * nothing, so it is run again after a short random pause, up to a bound.
 */

/** What an attempt returns when it must be run again. */
export const AGAIN: unique symbol = Symbol("again");

/** How long to keep trying, and how long to pause between attempts. */
export interface RetryPolicy {
  /** Attempts at most; unbounded when absent. */
  attempts?: number;
  /** Stops trying once this long has passed since the first attempt, ms; unbounded when absent. */
  forMs?: number;
  /** Upper bound of the random pause after attempt `n` (from 1), ms. */
  pauseMs: (n: number) => number;
}

/** Attempts that keep meeting concurrent writers: up to 50, pausing up to 50 ms. */
export const ON_CONFLICT: RetryPolicy = { attempts: 50, pauseMs: (n) => Math.min(50, n * 2) };

/** A busy database: tried for up to 30 s, pausing up to 10 ms. */
export const ON_LOCKED: RetryPolicy = { forMs: 30_000, pauseMs: (n) => Math.min(10, n) };

/**
 * Runs `attempt` until it returns something other than {@link AGAIN}; throws `exhausted(n)` when the
 * policy's bound is reached first (`n`: the attempts made).
 */
export async function retry<T>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T | typeof AGAIN>,
  exhausted: (n: number) => unknown,
): Promise<T> {
  const start = Date.now();
  for (let n = 1;; n++) {
    const result = await attempt(n);
    if (result !== AGAIN) return result;
    if (n >= (policy.attempts ?? Infinity) || Date.now() - start > (policy.forMs ?? Infinity)) {
      throw exhausted(n);
    }
    const pause = Math.random() * policy.pauseMs(n);
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Whether `error` is SQLite's "database is locked" (another process holds the database). */
export function isLocked(error: unknown): boolean {
  return String(error).includes("database is locked");
}

/**
 * Runs a write (or an open), again while SQLite reports "database is locked". Several processes on
 * one local KV meet that error whenever their transactions overlap, and at open when several start on
 * a new database at once; the write then did not happen, so trying again is safe. `onLocked` is told
 * the first time.
 */
export function whenUnlocked<T>(write: () => Promise<T>, onLocked?: (error: unknown) => void): Promise<T> {
  let locked: unknown;
  return retry(ON_LOCKED, async () => {
    try {
      return await write();
    } catch (error) {
      if (!isLocked(error)) throw error;
      if (locked === undefined) onLocked?.(error);
      locked = error;
      return AGAIN;
    }
  }, () => locked);
}
