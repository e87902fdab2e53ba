import assert from "node:assert/strict";
import fc from "fast-check";
import { isoTime } from "../../lib/domain/iso_time.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

const LAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

Deno.test("isoTime writes every millisecond of the years 0000-9999 exactly as Date's toISOString", () => {
  for (
    const ms of [
      0,
      -1,
      1,
      86_399_999,
      951_782_400_000,
      4_102_444_800_000,
      new Date("0000-01-01T00:00:00.000Z").getTime(),
      LAST,
    ]
  ) {
    assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms));
  }
  fc.assert(
    fc.property(fc.integer({ min: new Date("0000-01-01T00:00:00.000Z").getTime(), max: LAST }), (ms) => {
      assert.equal(isoTime(ms), new Date(ms).toISOString());
    }),
    { numRuns: fuzzRuns(20_000), seed: FUZZ_SEED },
  );
});

Deno.test("isoTime leaves the years outside 0000-9999 to Date", () => {
  for (const ms of [LAST + 1, new Date("0000-01-01T00:00:00.000Z").getTime() - 1, 8.64e15]) {
    assert.equal(isoTime(ms), new Date(ms).toISOString());
  }
});
