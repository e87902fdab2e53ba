/**
 * Waiting for a token's expiry (an OAuth token's `exp`), however far away it is. `setTimeout` holds
 * at most 2³¹−1 ms (about 24.8 days) and fires at once for a longer delay, so a long wait is chained:
 * each timer waits at most {@link LONGEST_TIMER_MS} and arms the next until the time has come.
 */

/** The longest delay one `setTimeout` keeps (a signed 32-bit count of milliseconds). */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `onExpired` once `Date.now()` has reached `expiresAt` (milliseconds since the epoch; on the
 * next turn of the event loop when it has already passed, never synchronously). Returns the function
 * that cancels the wait. `longest` is for tests (a shorter chain link); it defaults to
 * {@link LONGEST_TIMER_MS}.
 */
export function atExpiry(expiresAt: number, onExpired: () => void, longest = LONGEST_TIMER_MS): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const wait = () => {
    timer = setTimeout(check, Math.max(0, Math.min(expiresAt - Date.now(), longest)));
  };
  const check = () => {
    if (Date.now() >= expiresAt) onExpired();
    else wait();
  };
  wait();
  return () => clearTimeout(timer);
}
