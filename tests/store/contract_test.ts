/**
 * The store contract: the same behaviours, checked unchanged against the memory, JSON file and
 * Deno KV stores. Sizes are chosen to pass Deno KV's per-commit limits where that matters (a
 * 3,000-task delete, a 1,200-task edit, a 1.3 MB snapshot), so every path of every store runs.
 */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import type { NewTask, Task } from "../../lib/domain/schemas.ts";
import { completeTask, createTask, deleteTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import type { TaskTree } from "../../lib/domain/task_tree.ts";
import { byRecency, saveWork, touchWork, type WorkEntry } from "../../lib/domain/work_lru.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import type { Space } from "../../lib/store/store.ts";
import { contract, dump, durable, shared } from "../support/store_contract.ts";
import { canonical } from "./fixtures/canonical.ts";

/** A task input with `n` leaves under it, ids `${prefix}-${i}`. */
function withLeaves(id: string, n: number, prefix = id, description = ""): NewTask {
  return {
    id,
    name: `Task ${id}`,
    tasks: Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, name: `Leaf ${i}`, description })),
  };
}

function save(
  entries: Map<string, WorkEntry>,
  n: number,
  extra: Partial<Parameters<typeof saveWork>[1]> = {},
) {
  return saveWork(entries, {
    work_summarize: `summary ${n}`,
    work_description: `work ${n}`,
    now: `2025-01-01T00:00:${String(n).padStart(2, "0")}Z`,
    randomId: () => String(10_000_000 + n),
    capacity: 3,
    ...extra,
  });
}

contract("an absent session reads as undefined and nothing is listed", async ({ open }) => {
  const store = await open();
  assert.equal(await store.readTree("nope", (tree) => tree), undefined);
  assert.deepEqual(await store.listSessions(), []);
  assert.deepEqual(await store.readWorks((entries) => [...entries.keys()]), []);
  assert.equal(await store.readProgress("p"), undefined);
  assert.deepEqual(await store.listProjects(), []);
});

contract("the first change creates the session and keeps its tasks", async ({ open }) => {
  const store = await open();
  const { result: { task } } = await store.updateTree("s", (tree) => createTask(tree, withLeaves("a", 3)));
  assert.equal(task.id, "a");
  assert.deepEqual(await store.listSessions(), ["s"]);
  assert.deepEqual(
    await store.readTree("s", (tree) => tree!.roots[0]!.tasks.map((t) => t.id)),
    ["a-0", "a-1", "a-2"],
  );
});

contract("a change that throws keeps nothing, not even a new session", async ({ open }) => {
  const store = await open();
  await assert.rejects(
    store.updateTree("s", (tree) => {
      createTask(tree, withLeaves("a", 2));
      throw new DomainError("INVALID_INPUT", "refused");
    }),
    DomainError,
  );
  assert.deepEqual(await store.listSessions(), []);
  assert.equal(await dump(store), "");
});

contract("a change that throws after edits leaves the tree as it was, also on reopen", async (ctx) => {
  const store = await ctx.open();
  await store.updateTree("s", (tree) => createTask(tree, withLeaves("a", 3)));
  const before = await dump(store);
  await assert.rejects(
    store.updateTree("s", (tree) => {
      createTask(tree, withLeaves("b", 2));
      startTask(tree, "a");
      deleteTask(tree, "a-2");
      tree.setField(tree.require("a-1"), "description", "changed");
      throw new DomainError("LIMIT_EXCEEDED", "refused");
    }),
    /refused/,
  );
  assert.equal(await dump(store), before);
  if (ctx.kind.durable) assert.equal(await dump(await ctx.open()), before);
});

contract("start, complete, update and delete survive a reopen", async (ctx) => {
  const store = await ctx.open();
  await store.updateTree("s", (tree) => createTask(tree, withLeaves("a", 3)));
  await store.updateTree("s", (tree) => createTask(tree, withLeaves("b", 2)));
  await store.updateTree("s", (tree) => startTask(tree, "a"));
  await store.updateTree("s", (tree) => completeTask(tree, "a-0", "done it"));
  await store.updateTree("s", (tree) => updateTask(tree, { id: "b", name: "Renamed", constraints: ["x"] }));
  await store.updateTree("s", (tree) => deleteTask(tree, "a-2"));
  await store.updateTree("s", (tree) => completeTask(tree, "a-1", "and this"));
  const state = await dump(store);
  const roots = JSON.parse(state) as Task[];
  assert.equal(roots[0]!.status, "done");
  assert.equal(roots[0]!.tasks[0]!.resolution, "done it");
  assert.deepEqual(roots[0]!.tasks.map((t) => t.id), ["a-0", "a-1"]);
  assert.equal(roots[1]!.name, "Renamed");
  assert.deepEqual(roots[1]!.constraints, ["x"]);
  await ctx.close(store);
  assert.equal(await dump(await ctx.open()), state);
}, durable);

contract("two stores on one place see and keep each other's changes", async ({ open }) => {
  const a = await open();
  const b = await open();
  await a.updateTree("s", (tree) => createTask(tree, { id: "root", name: "Root" }));
  assert.equal(await b.readTree("s", (tree) => tree?.get("root")?.name), "Root");
  await Promise.all([
    ...Array.from(
      { length: 15 },
      (_, i) => a.updateTree("s", (tree) => createTask(tree, { id: `a${i}`, name: "A", parentId: "root" })),
    ),
    ...Array.from(
      { length: 15 },
      (_, i) => b.updateTree("s", (tree) => createTask(tree, { id: `b${i}`, name: "B", parentId: "root" })),
    ),
  ]);
  await b.updateTree("s", (tree) => startTask(tree, "root"));
  await a.updateTree("s", (tree) => completeTask(tree, tree.activeLeaves()[0]!.id, "by a"));
  await b.updateTree("s", (tree) => startTask(tree, "root"));
  const seen = await Promise.all([dump(a), dump(b), dump(await open())]);
  assert.equal(seen[1], seen[0]);
  assert.equal(seen[2], seen[0]);
  const root = (JSON.parse(seen[0]) as Task[])[0]!;
  assert.equal(root.tasks.length, 30);
  for (let i = 0; i < 15; i++) {
    assert.ok(root.tasks.some((t) => t.id === `a${i}`), `a${i} kept`);
    assert.ok(root.tasks.some((t) => t.id === `b${i}`), `b${i} kept`);
  }
  assert.deepEqual(root.tasks.map((t) => t.status).slice(0, 3), ["done", "in_progress", "todo"]);
}, shared);

contract("works keep their recency order, touches and evictions", async (ctx) => {
  const store = await ctx.open();
  for (let n = 1; n <= 3; n++) await store.updateWorks((entries) => save(entries, n));
  await store.updateWorks((entries) => touchWork(entries, "10000001", 10));
  const { evicted } = await store.updateWorks((entries) => save(entries, 4));
  assert.deepEqual(evicted.map((e) => e.workId), ["10000002"]);
  const order = (s: Space) => s.readWorks((entries) => byRecency(entries.values()).map((e) => e.workId));
  assert.deepEqual(await order(store), ["10000004", "10000001", "10000003"]);
  await assert.rejects(store.updateWorks((entries) => touchWork(entries, "10000002", 10)), DomainError);
  if (ctx.kind.durable) {
    await ctx.close(store);
    assert.deepEqual(await order(await ctx.open()), ["10000004", "10000001", "10000003"]);
  }
});

contract("saves from two stores at once are all kept and the capacity holds", async ({ open }) => {
  const a = await open();
  const b = await open();
  const saves = (s: Space, from: number) =>
    Array.from(
      { length: 6 },
      (_, i) => s.updateWorks((entries) => save(entries, from + i, { capacity: 100 })),
    );
  await Promise.all([...saves(a, 10), ...saves(b, 30)]);
  const ids = await (await open()).readWorks((entries) => [...entries.keys()].sort());
  assert.deepEqual(
    ids,
    [...[10, 11, 12, 13, 14, 15], ...[30, 31, 32, 33, 34, 35]].map((n) => String(10_000_000 + n)),
  );
  await Promise.all([...saves(a, 50), ...saves(b, 70)]);
  await a.updateWorks((entries) => save(entries, 90, { capacity: 3 }));
  assert.equal(await b.readWorks((entries) => entries.size), 3);
}, shared);

contract("a work snapshot bigger than one commit comes back unchanged", async (ctx) => {
  const store = await ctx.open();
  for (let i = 0; i < 4; i++) {
    await store.updateTree(
      "s",
      (tree) => createTask(tree, withLeaves(`r${i}`, 499, `r${i}`, "é".repeat(600))),
    );
  }
  const snapshot = await store.readTree("s", (tree) => structuredClone(tree!.roots));
  assert.ok(JSON.stringify(snapshot).length > 1_000_000);
  await store.updateWorks((entries) => save(entries, 1, { sessionId: "s", snapshot }));
  await store.updateTree("s", (tree) => deleteTask(tree, "r0"));
  const again = (s: Space) => s.readWorks((entries) => JSON.stringify(entries.get("10000001")?.work_tasks));
  assert.equal(await again(store), JSON.stringify(snapshot));
  await store.updateWorks((entries) => touchWork(entries, "10000001", 10));
  if (ctx.kind.durable) assert.equal(await again(await ctx.open()), JSON.stringify(snapshot));
  await store.updateWorks((entries) => save(entries, 1, { sessionId: "s", snapshot: [] }));
  assert.equal(await again(store), "[]");
});

contract("progress documents upsert with a revision, big ones too", async (ctx) => {
  const store = await ctx.open();
  const now = "2025-01-01T00:00:00Z";
  const big = { goal: "ü€".repeat(15_000), completed: [], next_steps: [], blockers: [] };
  await store.updateProgress(
    "p",
    (current) => upsertProgress(current, { project: "p", content: { a: 1 }, now }),
  );
  const second = await store.updateProgress(
    "p",
    (current) => upsertProgress(current, { project: "p", content: big, now, session_id: "s" }),
  );
  assert.equal(second.revision, 2);
  await store.updateProgress(
    "q",
    (current) => upsertProgress(current, { project: "q", content: { list: [1] }, now }),
  );
  assert.deepEqual((await store.listProjects()).sort(), ["p", "q"]);
  const read = async (s: Space) => await s.readProgress("p");
  assert.deepEqual(await read(store), second);
  const third = await store.updateProgress("p", (c) => upsertProgress(c, { project: "p", content: {}, now }));
  assert.equal(third.revision, 3);
  if (ctx.kind.durable) assert.deepEqual(await read(await ctx.open()), third);
});

contract("a parent of 1,000 children and tasks with maximal fields round-trip", async (ctx) => {
  const store = await ctx.open();
  const long = (n: number, c: string) => c.repeat(n);
  const id = (i: number) => `${String(i).padStart(4, "0")}-${"x".repeat(59)}`;
  await store.updateTree("s", (tree) =>
    createTask(tree, {
      id: "wide",
      name: long(200, "名"),
      description: long(4000, "€"),
      completion_criteria: Array.from({ length: 20 }, () => long(500, "ß")),
      constraints: Array.from({ length: 20 }, () => long(250, "😀")),
      tasks: Array.from({ length: 499 }, (_, i) => ({ id: id(i), name: "n" })),
    }));
  await store.updateTree("s", (tree) => {
    for (let i = 499; i < 1000; i++) createTask(tree, { id: id(i), name: "n", parentId: "wide" });
  });
  await store.updateTree("s", (tree) => completeTask(tree, id(0), long(4000, "✓")));
  const state = await dump(store);
  assert.equal((JSON.parse(state) as Task[])[0]!.tasks.length, 1000);
  if (ctx.kind.durable) assert.equal(await dump(await ctx.open()), state);
});

contract("deleting a subtree bigger than one commit is one change", async (ctx) => {
  const store = await ctx.open();
  await store.updateTree("s", (tree) => createTask(tree, { id: "keep", name: "Keep" }));
  await store.updateTree("s", (tree) => createTask(tree, { id: "big", name: "Big" }));
  for (let i = 0; i < 6; i++) {
    await store.updateTree("s", (tree) => createTask(tree, { ...withLeaves(`g${i}`, 499), parentId: "big" }));
  }
  assert.equal(await store.readTree("s", (tree) => tree!.size), 3002);
  const other = ctx.kind.shared ? await ctx.open() : store;
  assert.equal(await other.readTree("s", (tree) => tree!.size), 3002);
  const { result: { deleted } } = await store.updateTree("s", (tree) => deleteTask(tree, "big"));
  assert.equal(deleted, 3001);
  const expected = canonical([{ id: "keep", name: "Keep", description: "", status: "todo", tasks: [] }]);
  assert.equal(await dump(store), expected);
  assert.equal(await dump(other), expected);
  await store.updateTree(
    "s",
    (tree) => createTask(tree, { id: "g3-7", name: "Reused id", parentId: "keep" }),
  );
  if (ctx.kind.durable) {
    await ctx.close(store);
    const reopened = await ctx.open();
    assert.equal(await reopened.readTree("s", (tree) => tree!.size), 2);
    assert.equal(await reopened.readTree("s", (tree) => tree!.get("g3-7")?.name), "Reused id");
  }
});

contract("a change touching more tasks than one commit holds is kept whole or not at all", async (ctx) => {
  const store = await ctx.open();
  for (let i = 0; i < 3; i++) {
    await store.updateTree("s", (tree) => createTask(tree, withLeaves(`p${i}`, 400)));
  }
  const touchAll = (tree: TaskTree, text: string) => {
    for (const { task } of tree.walk()) tree.setField(task, "description", `${text} ${"d".repeat(700)}`);
  };
  const before = await dump(store);
  await assert.rejects(
    store.updateTree("s", (tree) => {
      touchAll(tree, "never");
      throw new DomainError("INVALID_INPUT", "refused");
    }),
    DomainError,
  );
  assert.equal(await dump(store), before);
  await store.updateTree("s", (tree) => touchAll(tree, "all"));
  await store.updateTree("s", (tree) => startTask(tree, "p0"));
  const after = await dump(store);
  const roots = JSON.parse(after) as Task[];
  assert.ok(
    roots.every((r) =>
      r.description.startsWith("all ") && r.tasks.every((t) => t.description.startsWith("all "))
    ),
  );
  assert.equal(roots[0]!.tasks[0]!.status, "in_progress");
  if (ctx.kind.durable) assert.equal(await dump(await ctx.open()), after);
});

contract("export then import reproduces the store elsewhere", async (ctx) => {
  const store = await ctx.open();
  await store.updateTree("s", (tree) => createTask(tree, withLeaves("a", 3)));
  await store.updateTree("s", (tree) => startTask(tree, "a"));
  await store.updateTree("t", (tree) => createTask(tree, withLeaves("b", 450)));
  const snapshot = await store.readTree("s", (tree) => structuredClone(tree!.roots));
  await store.updateWorks((entries) => save(entries, 1, { sessionId: "s", snapshot }));
  await store.updateWorks((entries) => save(entries, 2));
  await store.updateProgress(
    "p",
    (c) => upsertProgress(c, { project: "p", content: { goal: "g" }, now: "t" }),
  );
  const doc = await ctx.exportDocument(store);
  assert.deepEqual(Object.keys(doc.sessions).sort(), ["s", "t"]);
  assert.equal(doc.works.length, 2);

  const elsewhere = await ctx.kind.place();
  try {
    const targetStore = await elsewhere.open();
    const target = targetStore.space(ctx.namespace);
    await target.updateTree(
      "old",
      (tree) => createTask(tree, { id: "gone", name: "Replaced by the import" }),
    );
    const { state, repairs } = stateFromFile(JSON.parse(JSON.stringify(doc)));
    assert.deepEqual(repairs, []);
    const option = ctx.namespace === "default" ? {} : { namespace: ctx.namespace };
    await targetStore.importState(state, option);
    const copy = await targetStore.exportDocument(option);
    assert.deepEqual(copy, JSON.parse(JSON.stringify(doc)));
    assert.deepEqual((await target.listSessions()).sort(), ["s", "t"]);
    await target.updateTree("s", (tree) => completeTask(tree, "a-0", "after import"));
    await target.updateWorks((entries) => touchWork(entries, "10000001", 10));
    if (ctx.kind.durable) {
      await targetStore.close();
      const reopenedStore = await elsewhere.open();
      const reopened = reopenedStore.space(ctx.namespace);
      assert.equal(await reopened.readTree("s", (tree) => tree!.get("a-0")!.status), "done");
      assert.equal(await reopened.readTree("old", (tree) => tree), undefined);
      assert.deepEqual(
        await reopened.readWorks((entries) => JSON.stringify(entries.get("10000001")!.work_tasks)),
        JSON.stringify(snapshot),
      );
      await reopenedStore.close();
    } else await targetStore.close();
  } finally {
    await elsewhere.cleanup();
  }
});
