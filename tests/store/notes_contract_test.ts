/**
 * Notes in every store (docs/teams.md "Context that travels with the work"), checked unchanged against the
 * memory, JSON file and Deno KV stores: kept in order with `notes_dropped`, at their largest (20 notes
 * of 2,000 characters, more than one Deno KV value), across a reopen and through another store
 * object's cached tree, through export and import, and through history: each note its own revision,
 * a restore bringing the notes back as they were at that revision.
 */
import assert from "node:assert/strict";
import { checkRestorable, restoreTree } from "../../lib/domain/history.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { Note } from "../../lib/domain/schemas.ts";
import { createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Space } from "../../lib/store/store.ts";
import { contract, dump } from "../support/store_contract.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

function addNote(store: Space, id: string, note: string, actor: Actor) {
  return store.updateTree("s", (tree) => updateTask(tree, { id, note }, actor), { tool: "updateTask" });
}

function notesOf(store: Space, id: string) {
  return store.readTree("s", (tree) => {
    const task = tree!.get(id)!;
    return { notes: structuredClone(task.notes), dropped: task.notes_dropped };
  });
}

/** A note text at the length limit whose UTF-8 is three times as long (no single Deno KV value holds 20). */
function heavyNote(i: number): string {
  return `${i} __proto__ "é€漢" `.padEnd(LIMITS.noteLength, "漢");
}

contract(
  "notes round-trip at their largest: kept in order with notes_dropped, across a reopen and another store object",
  async (ctx) => {
    const store = await ctx.open();
    await store.updateTree(
      "s",
      (tree) =>
        createTask(tree, {
          id: "p",
          name: "P",
          parallel: true,
          tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }],
        }),
    );
    const other = ctx.kind.shared ? await ctx.open() : store;
    // The other store object reads the session first: it must take in the notes as a catch-up.
    await other.readTree("s", (tree) => assert.ok(tree));
    await store.updateTree("s", (tree) => startTask(tree, "a", { agent: "w1", now: T0 }));
    for (let i = 0; i < LIMITS.notesKept + 3; i++) {
      await addNote(store, "a", heavyNote(i), { agent: i % 2 ? "w1" : "w2", now: T0 + i });
    }
    await addNote(store, "b", "short", { agent: undefined, now: T0 });
    const expected = await notesOf(store, "a");
    assert.equal(expected.notes!.length, LIMITS.notesKept);
    assert.equal(expected.dropped, 3);
    assert.equal(expected.notes![0]!.text, heavyNote(3));
    assert.deepEqual(
      expected.notes!.at(-1),
      {
        agent: "w2",
        at: new Date(T0 + 22).toISOString(),
        text: heavyNote(22),
      } satisfies Note,
    );
    assert.deepEqual(await notesOf(other, "a"), expected);
    assert.deepEqual((await notesOf(other, "b")).notes!.map((n) => n.agent), ["(anonymous)"]);
    const before = await dump(store);
    if (ctx.kind.durable) {
      const reopened = await ctx.open();
      assert.deepEqual(await notesOf(reopened, "a"), expected);
      assert.equal(await dump(reopened), before);
    }
  },
);

contract(
  "each note is its own revision and history entry; a restore brings the notes back as they were",
  async (ctx) => {
    const store = await ctx.open();
    await store.updateTree("s", (tree) => createTask(tree, { id: "a", name: "Build API" }), {
      tool: "createTask",
    });
    const first = await addNote(store, "a", "first", { agent: "w1", now: T0 });
    const second = await addNote(store, "a", "second", { agent: "w2", now: T0 + 1 });
    assert.deepEqual([first.revision, second.revision], [2, 3]);
    const page = await store.readHistory("s", 2);
    assert.deepEqual(page.entries.map((e) => [e.revision, e.tool, e.summary]), [
      [3, "updateTask", `note on "Build API" by w2`],
      [2, "updateTask", `note on "Build API" by w1`],
    ]);
    const restore = (revision: number) =>
      store.updateTree("s", (tree, history) => {
        checkRestorable(revision, {
          current: history.revision,
          oldest: history.oldest,
          historySize: history.historySize,
        });
        return restoreTree(tree, history.deltas);
      }, { tool: "restore_tasks", undoTo: revision });
    const back = await restore(2);
    assert.equal(back.revision, 4);
    assert.equal(back.result.changed, 1);
    assert.deepEqual((await notesOf(store, "a")).notes!.map((n) => n.text), ["first"]);
    await restore(1);
    assert.equal((await notesOf(store, "a")).notes, undefined, "revision 1 had no notes");
    // Undo the undo: both notes come back, with their agents and times.
    await restore(3);
    assert.deepEqual(await notesOf(store, "a"), {
      notes: [
        { agent: "w1", at: new Date(T0).toISOString(), text: "first" },
        { agent: "w2", at: new Date(T0 + 1).toISOString(), text: "second" },
      ],
      dropped: undefined,
    });
    if (ctx.kind.durable) {
      const reopened = await ctx.open();
      assert.equal((await reopened.readHistory("s", 1)).revision, 6);
      assert.deepEqual((await notesOf(reopened, "a")).notes!.length, 2);
    }
  },
);

contract("a restore brings back notes that were dropped past the 20 kept", async (ctx) => {
  const store = await ctx.open();
  await store.updateTree("s", (tree) => createTask(tree, { id: "a", name: "A" }), { tool: "createTask" });
  for (let i = 0; i < LIMITS.notesKept; i++) {
    await addNote(store, "a", heavyNote(i), { agent: "w1", now: T0 + i });
  }
  const full = await notesOf(store, "a");
  const { revision } = await store.readHistory("s", 1);
  await addNote(store, "a", "the 21st", { agent: "w1", now: T0 + 99 });
  assert.equal((await notesOf(store, "a")).dropped, 1);
  await store.updateTree("s", (tree, history) => restoreTree(tree, history.deltas), {
    tool: "restore_tasks",
    undoTo: revision,
  });
  assert.deepEqual(await notesOf(store, "a"), full);
});

contract("export then import keeps every note", async (ctx) => {
  const store = await ctx.open();
  await store.updateTree("s", (tree) => createTask(tree, { id: "a", name: "A" }));
  for (let i = 0; i < LIMITS.notesKept + 1; i++) {
    await addNote(store, "a", heavyNote(i), { agent: "w1", now: T0 + i });
  }
  const expected = await notesOf(store, "a");
  const doc = await ctx.exportDocument(store);
  const copy = new MemoryStore();
  const { state, repairs } = stateFromFile(JSON.parse(JSON.stringify(doc)));
  assert.deepEqual(repairs, []);
  await copy.importState(state);
  assert.deepEqual(await notesOf(copy.space("default"), "a"), expected);
  // And back into a fresh place of this kind.
  const elsewhere = await ctx.kind.place();
  try {
    const target = await elsewhere.open();
    await target.importState(stateFromFile(JSON.parse(JSON.stringify(doc))).state);
    assert.deepEqual(await notesOf(target.space("default"), "a"), expected);
    await target.close();
  } finally {
    await elsewhere.cleanup();
  }
});
