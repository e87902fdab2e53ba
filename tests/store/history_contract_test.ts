/**
 * The store contract for history (docs/history.md), checked unchanged against the memory,
 * JSON file and Deno KV stores: revisions and entries written with the change, restores through the
 * store, trimming to `HISTORY_SIZE`, several store objects on one place, reopening, export/import,
 * and stores written before history existed. Sizes reach Deno KV's limits where that matters.
 */
import assert from "node:assert/strict";
import { updateTasks } from "../../lib/domain/checklist.ts";
import { DomainError } from "../../lib/domain/errors.ts";
import { checkRestorable, restoreTree } from "../../lib/domain/history.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { NewTask } from "../../lib/domain/schemas.ts";
import { completeTask, createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import type { TaskTree } from "../../lib/domain/task_tree.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import type { Space } from "../../lib/store/store.ts";
import { contract, dump, durable, shared } from "../support/store_contract.ts";

/** Restores `revision` the way `restore_tasks` does. */
function restore(store: Space, revision: number, sessionId = "s") {
  return store.updateTree(sessionId, (tree, history) => {
    checkRestorable(revision, {
      current: history.revision,
      oldest: history.oldest,
      historySize: history.historySize,
    });
    return restoreTree(tree, history.deltas);
  }, { tool: "restore_tasks", undoTo: revision });
}

/** A plan with maximal texts: `n` leaves under one root. */
function bigPlan(n: number): NewTask {
  const text = (c: string, length: number) => c.repeat(length);
  return {
    id: "plan",
    name: text("P", LIMITS.nameLength),
    description: text("d", LIMITS.descriptionLength),
    tasks: Array.from({ length: n }, (_, i) => ({
      id: `t${i}`,
      name: `${i} ${text("n", LIMITS.nameLength - 5)}`,
      description: text("d", LIMITS.descriptionLength),
      completion_criteria: Array.from({ length: LIMITS.listItems }, () => text("c", LIMITS.listItemLength)),
      constraints: Array.from({ length: LIMITS.listItems }, () => text("k", LIMITS.listItemLength)),
    })),
  };
}

contract(
  "every change gets the next revision and an entry; one that changes nothing gets none",
  async ({ open }) => {
    const store = await open();
    assert.deepEqual(await store.readHistory("s", 10), { revision: 0, oldest: undefined, entries: [] });
    const created = await store.updateTree("s", (t) => createTask(t, { id: "a", name: "A" }), {
      tool: "createTask",
    });
    assert.equal(created.revision, 1);
    const same = await store.updateTree("s", (t) => updateTask(t, { id: "a", name: "A" }), {
      tool: "updateTask",
    });
    assert.equal(same.revision, 1);
    await assert.rejects(
      store.updateTree("s", (t) => startTask(t, "ghost"), { tool: "startTask" }),
      DomainError,
    );
    const started = await store.updateTree("s", (t) => startTask(t, "a"), { tool: "startTask" });
    assert.equal(started.revision, 2);
    const page = await store.readHistory("s", 10);
    assert.equal(page.revision, 2);
    assert.equal(page.oldest, 1);
    assert.deepEqual(page.entries.map((e) => [e.revision, e.tool, e.summary]), [
      [2, "startTask", 'changed 1: "A" in_progress'],
      [1, "createTask", 'added 1: "A"'],
    ]);
    assert.ok(!Number.isNaN(Date.parse(page.entries[0]!.at)));
    assert.deepEqual((await store.readHistory("s", 1)).entries.map((e) => e.revision), [2]);
    assert.deepEqual(await store.readHistory("other", 10), { revision: 0, oldest: undefined, entries: [] });
  },
);

contract(
  "a level of maximal tasks replaced by update_tasks is restored, and the restore undone",
  async ({ open }) => {
    const store = await open();
    await store.updateTree("s", (t) => createTask(t, bigPlan(LIMITS.tasksPerCall - 1)), {
      tool: "createTask",
    });
    await store.updateTree("s", (t) => startTask(t, "plan"), { tool: "startTask" });
    await store.updateTree("s", (t) => completeTask(t, "t0", "first one done"), { tool: "completeTask" });
    const planned = await dump(store);
    const wiped = await store.updateTree(
      "s",
      (t) => updateTasks(t, "/", [{ taskId: "x", description: "Oops" }]),
      {
        tool: "update_tasks",
      },
    );
    assert.equal(wiped.revision, 4);
    const afterWipe = await dump(store);
    const back = await restore(store, 3);
    assert.equal(back.revision, 5);
    assert.deepEqual(back.result, { added: LIMITS.tasksPerCall, removed: 1, changed: 0, notes: [] });
    assert.equal(await dump(store), planned);
    const undo = await restore(store, 4);
    assert.equal(undo.revision, 6);
    assert.equal(await dump(store), afterWipe);
    // Another store object on the same place reads the same history.
    const again = await open();
    assert.equal(await dump(again), afterWipe);
    await restore(again, 5);
    assert.equal(await dump(again), planned);
  },
);

contract(
  "history keeps the last HISTORY_SIZE entries; an older revision is NOT_FOUND naming the oldest",
  async ({ open }) => {
    const store = await open();
    await store.updateTree("s", (t) => createTask(t, { id: "a", name: "v0" }), { tool: "createTask" });
    for (let i = 1; i <= 40; i++) {
      await store.updateTree("s", (t) => updateTask(t, { id: "a", name: `v${i}` }), { tool: "updateTask" });
    }
    const page = await store.readHistory("s", 3);
    assert.deepEqual(page.entries.map((e) => e.revision), [41, 40, 39]);
    assert.equal(page.oldest, 39);
    await assert.rejects(
      restore(store, 38),
      (e) => e instanceof DomainError && e.code === "NOT_FOUND" && /oldest kept is 39/.test(e.message),
    );
    await assert.rejects(restore(store, 0), /oldest kept is 39/);
    await restore(store, 39);
    assert.equal(
      await store.readTree("s", (t) => t!.get("a")!.name),
      "v38",
    );
  },
  undefined,
  { historySize: 3 },
);

contract(
  "HISTORY_SIZE=0 keeps no entries but still counts revisions",
  async ({ open }) => {
    const store = await open();
    await store.updateTree("s", (t) => createTask(t, { id: "a", name: "A" }), { tool: "createTask" });
    const second = await store.updateTree("s", (t) => startTask(t, "a"), { tool: "startTask" });
    assert.equal(second.revision, 2);
    assert.deepEqual(await store.readHistory("s", 10), { revision: 2, oldest: undefined, entries: [] });
    await assert.rejects(restore(store, 1), /HISTORY_SIZE=0/);
  },
  undefined,
  { historySize: 0 },
);

contract("sessions have their own revisions and histories", async ({ open }) => {
  const store = await open();
  await store.updateTree("a", (t) => createTask(t, { id: "x", name: "X" }), { tool: "createTask" });
  await store.updateTree("a", (t) => startTask(t, "x"), { tool: "startTask" });
  const b = await store.updateTree("b", (t) => createTask(t, { id: "x", name: "Y" }), { tool: "createTask" });
  assert.equal(b.revision, 1);
  await restore(store, 1, "b");
  assert.equal(await store.readTree("a", (t) => t!.get("x")!.status), "in_progress");
  assert.equal((await store.readHistory("a", 10)).revision, 2);
});

contract("two stores on one place hand out unique, consecutive revisions", async ({ open }) => {
  const a = await open();
  const b = await open();
  await a.updateTree("s", (t) => createTask(t, { id: "root", name: "Root" }), { tool: "createTask" });
  const revisions = await Promise.all(
    Array.from(
      { length: 30 },
      (_, i) =>
        (i % 2 ? a : b).updateTree(
          "s",
          (t: TaskTree) => createTask(t, { id: `c${i}`, name: `C${i}`, parentId: "root" }),
          {
            tool: "createTask",
          },
        ).then((r) => r.revision),
    ),
  );
  assert.deepEqual(revisions.sort((x, y) => x - y), Array.from({ length: 30 }, (_, i) => i + 2));
  const page = await b.readHistory("s", 100);
  assert.deepEqual(page.entries.map((e) => e.revision), Array.from({ length: 31 }, (_, i) => 31 - i));
  // Every entry undoes exactly its change: back to the root alone.
  await restore(a, 1);
  assert.deepEqual(await b.readTree("s", (t) => t!.get("root")!.tasks.length), 0);
}, shared);

contract("history survives reopening the store", async ({ open, close }) => {
  const first = await open();
  await first.updateTree("s", (t) => createTask(t, { id: "a", name: "A", tasks: [{ id: "b", name: "B" }] }), {
    tool: "createTask",
  });
  await first.updateTree("s", (t) => startTask(t, "a"), { tool: "startTask" });
  await close(first);
  const second = await open();
  assert.deepEqual((await second.readHistory("s", 5)).entries.map((e) => e.tool), [
    "startTask",
    "createTask",
  ]);
  await restore(second, 1);
  assert.equal(await second.readTree("s", (t) => t!.get("b")!.status), "todo");
  assert.equal((await second.readHistory("s", 5)).revision, 3);
}, durable);

contract(
  "export leaves history out; an import starts every session again at revision 0",
  async (ctx) => {
    const store = await ctx.open();
    await store.updateTree("s", (t) => createTask(t, { id: "a", name: "A" }), { tool: "createTask" });
    const doc = await ctx.exportDocument(store);
    assert.equal("history" in doc, false);
    const { state } = stateFromFile(doc);
    await ctx.importState(store, state);
    assert.deepEqual(await store.readHistory("s", 5), { revision: 0, oldest: undefined, entries: [] });
    const next = await store.updateTree("s", (t) => startTask(t, "a"), { tool: "startTask" });
    assert.equal(next.revision, 1);
    assert.deepEqual((await store.readHistory("s", 5)).entries.map((e) => e.revision), [1]);
  },
);
