/**
 * `git` records in every store (docs/teams.md "Where the work lives"), checked unchanged against the
 * memory, JSON file and Deno KV stores: a record at its largest round-trips across a reopen and through
 * another store object's cached tree; a renewal that refreshes it is written without a revision and
 * reaches the other store object; a note's record is part of the note's revision, and a restore brings
 * the record back as it was; export and import keep it.
 */
import assert from "node:assert/strict";
import { recordGit } from "../../lib/domain/git_record.ts";
import { restoreTree } from "../../lib/domain/history.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { GitState } from "../../lib/domain/schemas.ts";
import { claimTask, createTask, updateTask } from "../../lib/domain/task_ops.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Space } from "../../lib/store/store.ts";
import { contract, dump } from "../support/store_contract.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const HEAD = "89abcdef0123456789abcdef0123456789abcdef";

/** A record at its largest: every text at its limit, non-ASCII, a newline in a path, 20 dirty paths. */
function largest(tag: string): GitState {
  const text = (c: string) => `${tag} ${'__proto__ "é\n漢'}`.padEnd(LIMITS.gitTextLength, c);
  return {
    worktree: text("w"),
    branch: text("b"),
    head: HEAD,
    upstream: text("u"),
    ahead: 3,
    behind: 0,
    dirty: Array.from(
      { length: LIMITS.gitDirty },
      (_, i) => `${String(i).padStart(2, "0")} ${text("d")}`.slice(0, 1024),
    ),
    dirty_count: 12345,
  };
}

/** claimTask for `actor` with `state` recorded on what it took or renewed, as the tool does it. */
function claimRecorded(space: Space, actor: Actor & { agent: string }, state: GitState) {
  return space.updateTree("s", (tree) => {
    const result = claimTask(tree, actor);
    recordGit(tree, result.task ? tree.get(result.task.id) : undefined, actor, state);
    return result;
  }, { tool: "claimTask" });
}

function gitOf(space: Space, id: string) {
  return space.readTree("s", (tree) => structuredClone(tree!.get(id)!.git));
}

contract(
  "a git record round-trips at its largest; a renewal that refreshes it is written without a revision and reaches another store object",
  async (ctx) => {
    const space = await ctx.open();
    await space.updateTree("s", (tree) => createTask(tree, { id: "a", name: "A" }), { tool: "createTask" });
    const other = ctx.kind.shared ? await ctx.open() : space;
    await other.readTree("s", (tree) => assert.ok(tree));
    const taken = await claimRecorded(space, { agent: "w1", now: T0 }, largest("one"));
    assert.equal(taken.revision, 2);
    const expected = await gitOf(space, "a");
    assert.deepEqual(expected, { agent: "w1", at: new Date(T0).toISOString(), ...largest("one") });
    assert.deepEqual(await gitOf(other, "a"), expected);
    // The renewal: a new lease and a new record, no new revision, written all the same.
    const renewed = await claimRecorded(space, { agent: "w1", now: T0 + 60_000 }, largest("two"));
    assert.equal(renewed.result.renewed, true);
    assert.equal(renewed.revision, 2, "no revision");
    assert.equal((await space.readHistory("s", 10)).entries.length, 2);
    const refreshed = await gitOf(space, "a");
    assert.equal(refreshed?.worktree, largest("two").worktree);
    assert.equal(refreshed?.at, new Date(T0 + 60_000).toISOString());
    assert.deepEqual(await gitOf(other, "a"), refreshed, "the other store object read the renewal");
    const before = await dump(space);
    if (ctx.kind.durable) {
      const reopened = await ctx.open();
      assert.deepEqual(await gitOf(reopened, "a"), refreshed);
      assert.equal(await dump(reopened), before);
    }
  },
);

contract(
  "a note's record is part of its revision; a restore brings the record back as it was",
  async (ctx) => {
    const space = await ctx.open();
    await space.updateTree("s", (tree) => createTask(tree, { id: "a", name: "Build API" }), {
      tool: "createTask",
    });
    await claimRecorded(space, { agent: "w1", now: T0 }, { worktree: "/wt/a", head: HEAD, dirty_count: 0 });
    const atTake = await gitOf(space, "a");
    const noted = await space.updateTree("s", (tree) => {
      const actor = { agent: "w1", now: T0 + 1000 };
      const result = updateTask(tree, { id: "a", note: "halfway" }, actor);
      recordGit(tree, tree.get("a"), actor, {
        worktree: "/wt/a",
        head: HEAD,
        dirty: ["x.ts"],
        dirty_count: 1,
      });
      return result;
    }, { tool: "updateTask" });
    assert.equal(noted.revision, 3);
    const page = await space.readHistory("s", 1);
    assert.equal(page.entries[0]!.summary, `note on "Build API" by w1`);
    await space.updateTree("s", (tree, history) => restoreTree(tree, history.deltas), {
      tool: "restore_tasks",
      undoTo: 2,
    });
    assert.deepEqual(await gitOf(space, "a"), atTake);
  },
);

contract("export then import keeps every git record", async (ctx) => {
  const space = await ctx.open();
  await space.updateTree(
    "s",
    (tree) =>
      createTask(tree, {
        id: "p",
        name: "P",
        parallel: true,
        tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }],
      }),
  );
  await claimRecorded(space, { agent: "w1", now: T0 }, largest("a"));
  await claimRecorded(space, { agent: "w2", now: T0 }, { branch: "main", dirty_count: 0 });
  const expected = [await gitOf(space, "a"), await gitOf(space, "b")];
  assert.equal(expected[1]?.agent, "w2");
  const doc = await ctx.exportDocument(space);
  const { state, repairs } = stateFromFile(JSON.parse(JSON.stringify(doc)));
  assert.deepEqual(repairs, []);
  const copy = new MemoryStore();
  await copy.importState(state);
  const imported = copy.space("default");
  assert.deepEqual([await gitOf(imported, "a"), await gitOf(imported, "b")], expected);
  const elsewhere = await ctx.kind.place();
  try {
    const target = await elsewhere.open();
    await target.importState(stateFromFile(JSON.parse(JSON.stringify(doc))).state);
    const back = target.space("default");
    assert.deepEqual([await gitOf(back, "a"), await gitOf(back, "b")], expected);
    await target.close();
  } finally {
    await elsewhere.cleanup();
  }
});
