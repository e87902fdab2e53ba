/**
 * The team fields (`parallel`, `blocked_by`, `claim`; docs/teams.md) round-trip in every
 * store, across a reopen, through another process's cached tree (KV catch-up), and through export and
 * import.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { exportStore, importStore } from "../../lib/store/transfer.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { STORE_KINDS } from "../support/store_places.ts";

const NOW = Date.parse("2026-01-01T00:00:00.000Z");

function teamFields(roots: readonly Task[]) {
  const out: Record<string, unknown> = {};
  const visit = (t: Task) => {
    out[t.id] = { status: t.status, parallel: t.parallel, blocked_by: t.blocked_by, claim: t.claim };
    t.tasks.forEach(visit);
  };
  roots.forEach(visit);
  return structuredClone(out);
}

Deno.test("parallel, blocked_by and claims round-trip in every store, a second store object, and export/import", async (t) => {
  for (const kind of STORE_KINDS) {
    await t.step(kind.name, async () => {
      const place = await kind.place();
      const store = await place.open();
      const other = kind.shared ? await place.open() : store;
      try {
        const space = store.space("default");
        // The second store object reads the session before the change (a cached tree to catch up).
        await space.updateTree("s", (tree) =>
          createTask(tree, {
            id: "P",
            name: "P",
            parallel: true,
            tasks: [{ id: "a", name: "a" }, { id: "b", name: "b", blocked_by: ["a"] }],
          }));
        await other.space("default").readTree("s", (tree) => assert.ok(tree));
        await space.updateTree("s", (tree) => startTask(tree, "a", { agent: "x", now: NOW }));
        const expected = await space.readTree("s", (tree) => teamFields(tree!.roots));
        assert.equal((expected.a as { claim: { agent: string } }).claim.agent, "x");
        assert.deepEqual((expected.b as { blocked_by: string[] }).blocked_by, ["a"]);
        assert.equal((expected.P as { parallel: boolean }).parallel, true);
        assert.deepEqual(
          await other.space("default").readTree("s", (tree) => teamFields(tree!.roots)),
          expected,
        );
        if (kind.durable) {
          const reopened = await place.open();
          assert.deepEqual(
            await reopened.space("default").readTree("s", (tree) => teamFields(tree!.roots)),
            expected,
          );
          await reopened.close();
        }
        // A renewal (no revision) reaches the other store object's cached tree too.
        const { revision } = await space.readHistory("s", 1);
        const renewed = await space.updateTree(
          "s",
          (tree) => startTask(tree, "a", { agent: "x", now: NOW + 60_000 }),
        );
        assert.equal(renewed.revision, revision);
        const expires = new Date(NOW + 60_000 + 1800_000).toISOString();
        assert.equal(
          await other.space("default").readTree("s", (tree) => tree!.get("a")!.claim!.expires_at),
          expires,
        );
        (expected.a as { claim: { expires_at: string } }).claim.expires_at = expires;
        const copy = new MemoryStore();
        await importStore(copy, await exportStore(store));
        assert.deepEqual(
          await copy.space("default").readTree("s", (tree) => teamFields(tree!.roots)),
          expected,
        );
      } finally {
        if (other !== store) await other.close();
        await store.close();
        await place.cleanup();
      }
    });
  }
});
