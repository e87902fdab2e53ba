/** Waiting, bounded: a pause, and a deadline on a promise. */

/** Waits `milliseconds`. */
export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Rejects when `promise` takes longer than `timeoutMs`; `what` names it in the error. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `done()` holds, checking every 20 ms, for at most `ms`; returns whether it held. */
export async function until(done: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= end) return false;
    await sleep(20);
  }
  return true;
}
