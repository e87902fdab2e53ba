/**
 * A space's version (`Space.version`), which the dashboard's event hub compares after each change:
 * in every store it moves with every change, a lease renewal included, and not with a read or another
 * namespace's change; and whenever the namespace's export changes, it moves.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { call, connectInMemory, ok } from "../support/harness.ts";

/** A fresh store of each kind, in a temporary directory removed afterwards. */
const STORES: [string, (dir: string) => Promise<Store>][] = [
  ["memory", () => Promise.resolve(new MemoryStore())],
  [
    "a JSON file",
    async (
      dir,
    ) => (await Deno.mkdir(dir, { recursive: true }), await JsonFileStore.open(`${dir}/tasks.json`)),
  ],
  [
    "Deno KV",
    async (dir) => (await Deno.mkdir(dir, { recursive: true }), await KvStore.open(`${dir}/tasks.kv`)),
  ],
];

for (const [kind, open] of STORES) {
  Deno.test(`a space's version moves with each kind of change a page shows, not with a read or another namespace's change (${kind})`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const store = await open(dir);
      try {
        await changesMoveIt(store);
      } finally {
        await store.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

async function changesMoveIt(store: Store): Promise<void> {
  await using mcp = await connectInMemory({ store });
  const { client } = mcp;
  const version = () => store.space("default").version();
  const moves = async (what: string, change: () => Promise<unknown>) => {
    const before = await version();
    await change();
    assert.notEqual(await version(), before, `${what} should move the space's version`);
  };
  const stays = async (what: string, change: () => Promise<unknown>) => {
    const before = await version();
    await change();
    assert.equal(await version(), before, `${what} should leave the space's version as it was`);
  };
  await moves("a new session", () => ok(client, "createTask", { sessionId: "s", id: "p", name: "Phase" }));
  await moves(
    "a new task",
    () => ok(client, "createTask", { sessionId: "s", parentId: "p", id: "a", name: "A" }),
  );
  await moves("a claim", () => ok(client, "claimTask", { sessionId: "s", agent: "ann", lease_seconds: 600 }));
  await moves(
    "a renewal",
    () => ok(client, "claimTask", { sessionId: "s", agent: "ann", lease_seconds: 1200 }),
  );
  await moves(
    "a note",
    () => ok(client, "updateTask", { sessionId: "s", id: "a", note: "halfway", agent: "ann" }),
  );
  await moves(
    "a completion",
    () => ok(client, "completeTask", { sessionId: "s", id: "a", resolution: "done", agent: "ann" }),
  );
  await moves(
    "a saved work",
    () => ok(client, "save_current_work_info", { work_summarize: "w", work_description: "W" }),
  );
  await ok(client, "save_current_work_info", { work_summarize: "v", work_description: "V" });
  const works = await ok<{ works: { workId: string }[] }>(client, "get_recent_works_info");
  await moves(
    "a work read back (its place in the recent list)",
    () => ok(client, "get_work_by_id", { workId: works.works.at(-1)!.workId }),
  );
  await moves(
    "a progress document",
    () => ok(client, "mem_progress", { project: "p", content: '{"step":1}' }),
  );
  await moves(
    "a progress document changed",
    () => ok(client, "mem_progress", { project: "p", content: '{"step":2}' }),
  );
  await moves("an undo", () => ok(client, "restore_tasks", { sessionId: "s", revision: 1 }));
  await moves("a deleted session's last task", () => ok(client, "deleteTask", { sessionId: "s", id: "p" }));
  await ok(client, "createTask", { sessionId: "s", id: "q", name: "Q" });
  await stays("a read", () => ok(client, "getTask", { sessionId: "s", id: "q" }));
  await using other = await connectInMemory({ store, namespace: "other" });
  await stays(
    "another namespace's change",
    () => ok(other.client, "createTask", { sessionId: "s", name: "X" }),
  );
}

/** One tool call of the property below: a name and its arguments. */
type Op = [string, Record<string, unknown>];

const ids = ["a", "b", "c", "d"] as const;
const createOp = fc.record({
  id: fc.constantFrom(...ids),
  parentId: fc.constantFrom(undefined, ...ids),
  sessionId: fc.constantFrom("s", "s", "t"),
}).map(({ id, parentId, sessionId }): Op => [
  "createTask",
  { sessionId, id, name: `Task ${id}`, ...(parentId ? { parentId } : {}) },
]);
/** A claim, or a renewal when the agent already holds a leaf (a new lease each time, in whole seconds). */
const claimOp = fc.record({ agent: fc.constantFrom("ann", "bob"), lease: fc.integer({ min: 60, max: 3600 }) })
  .map(({ agent, lease }): Op => ["claimTask", { sessionId: "s", agent, lease_seconds: lease }]);
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: createOp, weight: 4 },
  { arbitrary: claimOp, weight: 4 },
  fc.constantFrom(...ids).map((id): Op => ["startTask", { sessionId: "s", id }]),
  fc.record({ id: fc.constantFrom(...ids), agent: fc.constantFrom("ann", "bob") })
    .map(({ id, agent }): Op => ["completeTask", { sessionId: "s", id, resolution: "ok", agent }]),
  fc.record({ id: fc.constantFrom(...ids), text: fc.string({ minLength: 1, maxLength: 5 }) })
    .map(({ id, text }): Op => ["updateTask", { sessionId: "s", id, note: text, agent: "ann" }]),
  fc.record({ id: fc.constantFrom(...ids), name: fc.constantFrom("x", "y") })
    .map(({ id, name }): Op => ["updateTask", { sessionId: "s", id, name }]),
  fc.constantFrom(...ids).map((id): Op => ["deleteTask", { sessionId: "s", id }]),
  fc.constant<Op>(["save_current_work_info", { work_summarize: "w", work_description: "W", sessionId: "s" }]),
  fc.constant<Op>(["get_work_by_id", { workId: "first" }]),
  fc.constantFrom(1, 2).map((
    step,
  ): Op => ["mem_progress", { project: "p", content: JSON.stringify({ step }) }]),
  fc.constantFrom(0, 1, 2).map((revision): Op => ["restore_tasks", { sessionId: "s", revision }]),
);

for (const [kind, open] of STORES) {
  Deno.test(`property: whenever a namespace's export changes, its space's version moves (${kind})`, async () => {
    const dir = await Deno.makeTempDir();
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 16 }), async (ops) => {
          const store = await open(`${dir}/${n++}`);
          try {
            await exportMovesVersion(store, ops);
          } finally {
            await store.close();
          }
        }),
        { numRuns: kind === "memory" ? 80 : 25 },
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

/** Runs `ops`; after each that changed the export, the space's version must have moved. */
async function exportMovesVersion(store: Store, ops: readonly Op[]): Promise<void> {
  await using mcp = await connectInMemory({ store });
  const { client } = mcp;
  const space = store.space("default");
  const exported = async () => JSON.stringify(await store.exportDocument({ namespace: "default" }));
  for (const [name, given] of ops) {
    const args = { ...given };
    const [exportBefore, versionBefore] = [await exported(), await space.version()];
    if (name === "get_work_by_id") {
      const { works } = await ok<{ works: { workId: string }[] }>(client, "get_recent_works_info");
      if (works.length === 0) continue;
      args.workId = works.at(-1)!.workId;
    }
    await call(client, name, args);
    if (await exported() !== exportBefore) {
      assert.notEqual(await space.version(), versionBefore, `${name} ${JSON.stringify(args)}`);
    }
  }
}
