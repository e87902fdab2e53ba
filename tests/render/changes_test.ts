import assert from "node:assert/strict";
import { effectOf } from "../../lib/render/changes.ts";

Deno.test("effectOf reads what each changing tool did from its arguments and reply", async (t) => {
  await t.step("startTask marks every task it started", () => {
    const effect = effectOf({
      arguments: { sessionId: "s", id: "a" },
      result: { started_tasks: [{ id: "a", name: "A" }, { id: "a1", name: "A1" }], revision: 3 },
    });
    assert.deepEqual(effect, { sessionId: "s", changes: { a: "started", a1: "started" } });
  });
  await t.step("completeTask marks the task completed", () => {
    const effect = effectOf({
      arguments: { id: "a1", resolution: "r" },
      result: { message: "", progress_summary: {}, revision: 4 },
    });
    assert.deepEqual(effect, { sessionId: "default", changes: { a1: "completed" } });
  });
  await t.step("createTask marks the whole new subtree added", () => {
    const effect = effectOf({
      arguments: { sessionId: "s", name: "A" },
      result: {
        task: { id: "a", tasks: [{ id: "b", tasks: [{ id: "c", tasks: [] }] }] },
        message: "",
        revision: 1,
      },
    });
    assert.deepEqual(effect.changes, { a: "added", b: "added", c: "added" });
  });
  await t.step("updateTask marks the task changed", () => {
    const effect = effectOf({
      arguments: { id: "a" },
      result: { task: { id: "a", subtasks_total: 0 }, message: "", revision: 2 },
    });
    assert.deepEqual(effect.changes, { a: "changed" });
  });
  await t.step("mark_task_as_done marks what it marked, not what failed", () => {
    const effect = effectOf({
      arguments: { sessionId: "c", taskIds: ["x", "y"] },
      result: { marked: ["x"], failed: [{ taskId: "y", code: "C", reason: "r" }], tree: "", revision: 2 },
    });
    assert.deepEqual(effect, { sessionId: "c", changes: { x: "completed" } });
  });
  await t.step("update_tasks marks the listed tasks, nested ones too", () => {
    const effect = effectOf({
      arguments: { sessionId: "c", tasks: [{ taskId: "x", description: "X", children: [{ taskId: "y" }] }] },
      result: { sessionId: "c", updated: 2, tree: "", revision: 1 },
    });
    assert.deepEqual(effect, { sessionId: "c", changes: { x: "changed", y: "changed" } });
  });
});

Deno.test("effectOf changes nothing for reads, failures and replies it does not know", () => {
  assert.deepEqual(
    effectOf({ arguments: { id: "a" }, result: { task: { id: "a", tasks: [] } } }).changes,
    {},
  );
  assert.deepEqual(
    effectOf({ arguments: { id: "a" }, result: { error: { code: "NOT_FOUND", message: "" } } }).changes,
    {},
  );
  assert.deepEqual(effectOf({ result: { whatever: 1 } }), { sessionId: "default", changes: {} });
  assert.deepEqual(effectOf({}), { sessionId: "default", changes: {} });
});

Deno.test("effectOf takes the session from the arguments, then the reply; checklist tools have no default", () => {
  assert.equal(
    effectOf({ result: { sessionId: "from-reply", total_tasks: 1, tree: "" } }).sessionId,
    "from-reply",
  );
  assert.equal(effectOf({ tool: "get_all_tasks", arguments: {} }).sessionId, undefined);
  assert.equal(effectOf({ tool: "task_history", arguments: {} }).sessionId, "default");
  assert.equal(effectOf({ arguments: { sessionId: "" } }).sessionId, "default");
});

Deno.test("effectOf trusts the reply's shape over the tool name the host gave (a view kept open)", () => {
  const effect = effectOf({
    tool: "startTask",
    arguments: { id: "a1", resolution: "done" },
    result: { message: "", progress_summary: {}, revision: 4 },
  });
  assert.deepEqual(effect.changes, { a1: "completed" });
});

Deno.test("effectOf reads claimTask: the tasks it started, the leaf to centre on; nothing ready marks nothing", () => {
  const claimed = effectOf({
    tool: "claimTask",
    arguments: { sessionId: "s", agent: "frontend" },
    result: {
      task: { id: "ui", name: "UI" },
      started_tasks: [{ id: "root", name: "R" }, { id: "ui", name: "UI" }],
      claim: { agent: "frontend", since: "", expires_at: "" },
      revision: 5,
    },
  });
  assert.deepEqual(claimed, { sessionId: "s", changes: { root: "started", ui: "started" }, focus: "ui" });
  const waiting = effectOf({
    tool: "startTask",
    arguments: { sessionId: "s", agent: "late" },
    result: { task: null, message: "Nothing ready", waiting_on: [], blocked: [] },
  });
  assert.deepEqual(waiting, { sessionId: "s", changes: {} });
});
