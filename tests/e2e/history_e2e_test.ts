/**
 * History and undo end to end (docs/history.md): through a real SDK client in memory, and
 * real stdio server processes restarted on one FILE_PATH or KV_PATH.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { call, connectInMemory, fails, ok, spawnStdio, textOf } from "../support/harness.ts";

interface HistoryReply {
  revision: number;
  entries: { revision: number; at: string; tool: string; summary: string }[];
}
interface RestoreReply {
  revision: number;
  restored_from: number;
  added: number;
  removed: number;
  changed: number;
  message: string;
}

async function tempDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix: "checklist-history-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

const PLAN = {
  sessionId: "work",
  id: "release",
  name: "Release",
  completion_criteria: ["CI green"],
  tasks: [
    { id: "test", name: "Test", constraints: ["no flaky retries"] },
    { id: "tag", name: "Tag", completion_criteria: ["signed tag"] },
    { id: "publish", name: "Publish" },
  ],
};

Deno.test("a plan wiped by update_tasks comes back with its ids, statuses, resolutions and criteria", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const created = await ok<{ revision: number }>(client, "createTask", PLAN);
  assert.equal(created.revision, 1);
  await ok(client, "startTask", { sessionId: "work", id: "release" });
  await ok(client, "completeTask", { sessionId: "work", id: "test", resolution: "all 412 tests pass" });
  const started = await ok<{ revision: number }>(client, "startTask", { sessionId: "work", id: "tag" });
  assert.equal(started.revision, 4);
  const before = await ok<{ task: Task }>(client, "getTask", { sessionId: "work", id: "release" });

  const wiped = await ok<{ revision: number }>(client, "update_tasks", {
    sessionId: "work",
    tasks: [{ taskId: "oops", description: "Start over" }],
  });
  assert.equal(wiped.revision, 5);
  await fails(client, "getTask", { sessionId: "work", id: "release" }, "NOT_FOUND");

  const history = await ok<HistoryReply>(client, "task_history", { sessionId: "work" });
  assert.equal(history.revision, 5);
  assert.deepEqual(history.entries.map((e) => [e.revision, e.tool]), [
    [5, "update_tasks"],
    [4, "startTask"],
    [3, "completeTask"],
    [2, "startTask"],
    [1, "createTask"],
  ]);
  assert.match(history.entries[0]!.summary, /removed 4/);

  const restored = await call(client, "restore_tasks", { sessionId: "work", revision: 4 });
  const reply = restored.structuredContent as unknown as RestoreReply;
  assert.deepEqual({ ...reply, message: undefined }, {
    revision: 6,
    restored_from: 4,
    added: 4,
    removed: 1,
    changed: 0,
    message: undefined,
  });
  assert.match(textOf(restored), /"Tag" \(tag\) is in progress again/);
  assert.match(textOf(restored), /restore_tasks with revision 5/);
  const after = await ok<{ task: Task }>(client, "getTask", { sessionId: "work", id: "release" });
  assert.deepEqual(after.task, before.task);
  assert.deepEqual(after.task.completion_criteria, ["CI green"]);
  assert.equal(after.task.tasks[0]!.resolution, "all 412 tests pass");
  assert.equal(after.task.tasks[1]!.status, "in_progress");
  // The task in progress is the one it was: completing it goes on with the plan.
  const done = await ok<{ next_task_id?: string }>(client, "completeTask", {
    sessionId: "work",
    id: "tag",
    resolution: "v1.2.0",
  });
  assert.equal(done.next_task_id, "publish");
});

Deno.test("a restore can be undone by restoring the revision before it", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  await ok(client, "createTask", PLAN);
  await ok(client, "deleteTask", { sessionId: "work", id: "tag" });
  const tree = await ok<{ tree: string }>(client, "get_all_tasks", { sessionId: "work" });
  const restore = await ok<RestoreReply>(client, "restore_tasks", { sessionId: "work", revision: 1 });
  assert.equal(restore.revision, 3);
  assert.notEqual(
    (await ok<{ tree: string }>(client, "get_all_tasks", { sessionId: "work" })).tree,
    tree.tree,
  );
  const undo = await ok<RestoreReply>(client, "restore_tasks", { sessionId: "work", revision: 2 });
  assert.deepEqual([undo.revision, undo.removed], [4, 1]);
  assert.equal((await ok<{ tree: string }>(client, "get_all_tasks", { sessionId: "work" })).tree, tree.tree);
  const same = await ok<RestoreReply>(client, "restore_tasks", { sessionId: "work", revision: 4 });
  assert.equal(same.revision, 4, "restoring the current revision changes nothing and adds no revision");
});

Deno.test("sessions have their own revisions: restoring one leaves the others alone", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  await ok(client, "createTask", { sessionId: "a", name: "A" });
  await ok(client, "createTask", { sessionId: "a", name: "A2" });
  const b = await ok<{ revision: number }>(client, "createTask", { sessionId: "b", name: "B" });
  assert.equal(b.revision, 1);
  await ok(client, "restore_tasks", { sessionId: "a", revision: 1 });
  assert.equal((await ok<{ tasks: unknown[] }>(client, "listTasks", { sessionId: "b" })).tasks.length, 1);
  assert.equal((await ok<HistoryReply>(client, "task_history", { sessionId: "b" })).revision, 1);
  assert.deepEqual(await ok<HistoryReply>(client, "task_history", { sessionId: "never" }), {
    revision: 0,
    entries: [],
  });
});

Deno.test("HISTORY_SIZE keeps that many entries; an older or unmade revision is NOT_FOUND naming the oldest kept", async () => {
  await using conn = await connectInMemory({ store: new MemoryStore({ historySize: 5 }) });
  const { client } = conn;
  await ok(client, "createTask", { id: "a", name: "v0" });
  for (let i = 1; i < 12; i++) await ok(client, "updateTask", { id: "a", name: `v${i}` });
  const history = await ok<HistoryReply>(client, "task_history", { limit: 5 });
  assert.deepEqual(history.entries.map((e) => e.revision), [12, 11, 10, 9, 8]);
  for (const revision of [7, 0, 13]) {
    const message = await fails(client, "restore_tasks", { revision }, "NOT_FOUND");
    assert.match(message, /oldest kept is 8/);
  }
  await fails(client, "task_history", { limit: 6 }, "INVALID_INPUT");
  await fails(client, "task_history", { limit: 0 }, "INVALID_INPUT");
  await ok(client, "restore_tasks", { revision: 8 });
  assert.equal((await ok<{ task: Task }>(client, "getTask", { id: "a" })).task.name, "v7");
});

Deno.test("HISTORY_SIZE=0: the history tools say history is off, and replies still carry revisions", async () => {
  await using conn = await connectInMemory({ store: new MemoryStore({ historySize: 0 }) });
  const { client } = conn;
  const created = await ok<{ revision: number }>(client, "createTask", { name: "A" });
  assert.equal(created.revision, 1);
  const history = await call(client, "task_history", {});
  assert.deepEqual(history.structuredContent, { revision: 1, entries: [] });
  assert.match(textOf(history), /History is off.*HISTORY_SIZE=0/);
  assert.match(await fails(client, "restore_tasks", { revision: 1 }, "NOT_FOUND"), /HISTORY_SIZE=0/);
});

Deno.test("the changing task and checklist tools reply with the new revision", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const steps: [string, Record<string, unknown>][] = [
    ["createTask", { id: "p", name: "P", tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }] }],
    ["updateTask", { id: "a", description: "first" }],
    ["startTask", { id: "a" }],
    ["completeTask", { id: "a", resolution: "ok" }],
    ["deleteTask", { id: "b" }],
    ["update_tasks", { sessionId: "default", path: "/p/", tasks: [{ taskId: "c", description: "C" }] }],
    ["mark_task_as_done", { sessionId: "default", taskIds: ["c"] }],
  ];
  for (const [i, [tool, args]] of steps.entries()) {
    assert.equal((await ok<{ revision: number }>(client, tool, args)).revision, i + 1, tool);
  }
});

for (const store of ["FILE_PATH", "KV_PATH"] as const) {
  Deno.test(`history survives a restart with ${store}, and a restore after it brings the plan back`, async () => {
    await using dir = await tempDir();
    const env = { [store]: `${dir.path}/${store === "FILE_PATH" ? "tasks.json" : "tasks.kv"}` };
    let before: Task;
    {
      await using first = await spawnStdio({ env });
      await ok(first.client, "createTask", PLAN);
      await ok(first.client, "startTask", { sessionId: "work", id: "release" });
      before = (await ok<{ task: Task }>(first.client, "getTask", { sessionId: "work", id: "release" })).task;
      await ok(first.client, "deleteTask", { sessionId: "work", id: "release" });
    }
    await using second = await spawnStdio({ env });
    const history = await ok<HistoryReply>(second.client, "task_history", { sessionId: "work" });
    assert.deepEqual(history.entries.map((e) => e.tool), ["deleteTask", "startTask", "createTask"]);
    await ok(second.client, "restore_tasks", { sessionId: "work", revision: 2 });
    const after = await ok<{ task: Task }>(second.client, "getTask", { sessionId: "work", id: "release" });
    assert.deepEqual(after.task, before);
  });
}
