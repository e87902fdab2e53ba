/** Waiting for a token's expiry (lib/auth/expiry.ts): any delay, chained past what one timer holds. */
import assert from "node:assert/strict";
import { atExpiry, LONGEST_TIMER_MS } from "../../lib/auth/expiry.ts";
import { sleep } from "../support/time.ts";

Deno.test("atExpiry waits in links of at most the longest timer, and calls once the time has come", async () => {
  const start = Date.now();
  let calledAt: number | undefined;
  // Links of 20 ms: 150 ms takes several, and the call comes at the end, not after the first link.
  atExpiry(start + 150, () => (calledAt = Date.now()), 20);
  await sleep(100);
  assert.equal(calledAt, undefined, "not before the expiry");
  await sleep(200);
  assert.ok(calledAt !== undefined && calledAt - start >= 150, `called after ${calledAt! - start} ms`);
});

Deno.test("atExpiry: a past expiry calls on the next turn, never synchronously; cancelling stops it", async () => {
  let called = 0;
  atExpiry(Date.now() - 1000, () => called++);
  assert.equal(called, 0);
  await sleep(10);
  assert.equal(called, 1);
  const cancel = atExpiry(Date.now() + 50, () => called++);
  cancel();
  await sleep(100);
  assert.equal(called, 1);
});

Deno.test("atExpiry: an expiry 30 days away does not fire now (one setTimeout would, past 2^31-1 ms)", async () => {
  let called = false;
  const cancel = atExpiry(Date.now() + 30 * 24 * 3600 * 1000, () => (called = true));
  await sleep(50);
  assert.equal(called, false);
  cancel();
  assert.equal(LONGEST_TIMER_MS, 2 ** 31 - 1);
});
