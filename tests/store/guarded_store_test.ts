/**
 * guardStore's line between a failure of the store and an error of the change itself: what a
 * change's or a read's own callback throws passes through as it is (the tool layer reports it as an
 * internal error of the tool), never as `STORE_UNAVAILABLE`.
 */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { guardStore } from "../../lib/store/guarded_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { quietLogger } from "../support/logs.ts";

Deno.test("an error thrown by a change's or a read's own callback passes through guardStore unchanged", async () => {
  const space = guardStore(new MemoryStore(), quietLogger()).space("default");
  const boom = new Error("the callback's own bug");
  await assert.rejects(
    space.updateTree("s", () => {
      throw boom;
    }),
    (error) => error === boom,
  );
  await assert.rejects(
    space.readTree("s", () => {
      throw boom;
    }),
    (error) => error === boom,
  );
  await assert.rejects(
    space.updateWorks(() => {
      throw boom;
    }),
    (error) => error === boom,
  );
  const refusal = new DomainError("NOT_FOUND", "no such task");
  await assert.rejects(
    space.updateTree("s", () => {
      throw refusal;
    }),
    (error) => error === refusal,
  );
  assert.deepEqual(await space.listSessions(), [], "nothing was kept of the failed changes");
});
