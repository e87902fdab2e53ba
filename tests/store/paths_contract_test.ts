/**
 * Paths in every store (docs/teams.md "Paths and reservations"), checked unchanged against the memory,
 * JSON file and Deno KV stores: stored normalised on nested tasks, across a reopen and through another
 * store object's cached tree; replaced and cleared by updateTask, each change a revision that a restore
 * undoes; kept by export and import; and a reservation made through one store object refuses an
 * overlapping start through another.
 */
import assert from "node:assert/strict";
import { checkRestorable, restoreTree } from "../../lib/domain/history.ts";
import { DomainError } from "../../lib/domain/errors.ts";
import { createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Space } from "../../lib/store/store.ts";
import { contract, dump } from "../support/store_contract.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

function pathsOf(store: Space) {
  return store.readTree("s", (tree) => {
    const out: Record<string, string[] | undefined> = {};
    for (const { task } of tree!.walk()) out[task.id] = task.paths && [...task.paths];
    return out;
  });
}

async function plan(store: Space): Promise<void> {
  await store.updateTree("s", (tree) =>
    createTask(tree, {
      id: "p",
      name: "P",
      parallel: true,
      paths: ["./src/"],
      tasks: [
        { id: "a", name: "A", paths: ["src/a/**/*.ts", "docs/a.md"] },
        { id: "b", name: "B", tasks: [{ id: "b1", name: "B1", paths: ["src/b/"] }] },
      ],
    }), { tool: "createTask" });
}

const EXPECTED = {
  p: ["src/**"],
  a: ["src/a/**/*.ts", "docs/a.md"],
  b: undefined,
  b1: ["src/b/**"],
};

contract(
  "paths round-trip normalised on nested tasks, across a reopen and another store object",
  async (ctx) => {
    const store = await ctx.open();
    const other = ctx.kind.shared ? await ctx.open() : store;
    await plan(store);
    await other.readTree("s", (tree) => assert.ok(tree)); // a cached tree the next change must reach
    assert.deepEqual(await pathsOf(store), EXPECTED);
    await store.updateTree("s", (tree) => updateTask(tree, { id: "b", paths: ["lib/b/"] }), {
      tool: "updateTask",
    });
    const expected = { ...EXPECTED, b: ["lib/b/**"] };
    assert.deepEqual(await pathsOf(other), expected);
    if (ctx.kind.durable) {
      const before = await dump(store);
      const reopened = await ctx.open();
      assert.deepEqual(await pathsOf(reopened), expected);
      assert.equal(await dump(reopened), before);
    }
  },
);

contract(
  "updateTask replaces and [] clears paths, each a revision; a restore brings them back",
  async (ctx) => {
    const store = await ctx.open();
    await plan(store);
    const replaced = await store.updateTree(
      "s",
      (tree) => updateTask(tree, { id: "a", paths: ["src/a/"] }),
      { tool: "updateTask" },
    );
    const cleared = await store.updateTree("s", (tree) => updateTask(tree, { id: "a", paths: [] }), {
      tool: "updateTask",
    });
    assert.equal(cleared.revision, replaced.revision + 1);
    assert.equal((await pathsOf(store)).a, undefined);
    const page = await store.readHistory("s", 1);
    assert.match(page.entries[0]!.summary, /"A" edited/);
    const restore = (revision: number) =>
      store.updateTree("s", (tree, history) => {
        checkRestorable(revision, {
          current: history.revision,
          oldest: history.oldest,
          historySize: history.historySize,
        });
        return restoreTree(tree, history.deltas);
      }, { tool: "restore_tasks", undoTo: revision });
    await restore(replaced.revision);
    assert.deepEqual((await pathsOf(store)).a, ["src/a/**"]);
    await restore(1);
    assert.deepEqual(await pathsOf(store), EXPECTED);
    if (ctx.kind.durable) {
      const reopened = await ctx.open();
      assert.deepEqual(await pathsOf(reopened), EXPECTED);
    }
  },
);

contract("export then import keeps every task's paths", async (ctx) => {
  const store = await ctx.open();
  await plan(store);
  const doc = await ctx.exportDocument(store);
  const copy = new MemoryStore();
  const { state, repairs } = stateFromFile(JSON.parse(JSON.stringify(doc)));
  assert.deepEqual(repairs, []);
  await copy.importState(state);
  assert.deepEqual(await pathsOf(copy.space("default")), EXPECTED);
  const elsewhere = await ctx.kind.place();
  try {
    const target = await elsewhere.open();
    await target.importState(stateFromFile(JSON.parse(JSON.stringify(doc))).state);
    assert.deepEqual(await pathsOf(target.space("default")), EXPECTED);
    await target.close();
  } finally {
    await elsewhere.cleanup();
  }
});

contract(
  "a reservation made through one store object refuses an overlapping start through another",
  async (ctx) => {
    const store = await ctx.open();
    const other = ctx.kind.shared ? await ctx.open() : store;
    await plan(store);
    await other.readTree("s", (tree) => assert.ok(tree)); // a cached tree from before x's claim
    await store.updateTree("s", (tree) => startTask(tree, "a", { agent: "x", now: T0 }), {
      tool: "startTask",
    });
    // b1 nobody holds, so its paths may overlap x's; starting it may not.
    await other.updateTree("s", (tree) => updateTask(tree, { id: "b1", paths: ["src/a/x.ts"] }));
    const before = await dump(other);
    await assert.rejects(
      other.updateTree("s", (tree) => startTask(tree, "b1", { agent: "y", now: T0 + 1000 })),
      (e) =>
        e instanceof DomainError && e.code === "RESERVED" &&
        /agent "x" reserves src\/a\/\*\*\/\*\.ts/.test(e.message),
    );
    assert.equal(await dump(other), before);
    assert.equal(await dump(store), before);
  },
);
