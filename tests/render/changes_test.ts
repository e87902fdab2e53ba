import assert from "node:assert/strict";
import { EFFECT_META_KEY, type ToolEffect } from "../../lib/domain/tool_effect.ts";
import { effectOf } from "../../lib/render/changes.ts";

/** A result's `_meta` holding `effect`, as the tool wrapper writes it. */
function meta(effect: ToolEffect): Record<string, unknown> {
  return { [EFFECT_META_KEY]: effect };
}

Deno.test("effectOf reads what each changing tool did from the effect in its result's _meta", async (t) => {
  await t.step("startTask marks every task it started", () => {
    const effect = effectOf({
      arguments: { sessionId: "s", id: "a" },
      result: { started_tasks: [{ id: "a", name: "A" }, { id: "a1", name: "A1" }], revision: 3 },
      meta: meta({ tool: "startTask", sessionId: "s", started: ["a", "a1"], focus: "a1" }),
    });
    assert.deepEqual(effect, { sessionId: "s", changes: { a: "started", a1: "started" }, focus: "a1" });
  });
  await t.step("completeTask marks the task completed", () => {
    const effect = effectOf({
      arguments: { id: "a1", resolution: "r" },
      result: { message: "", progress_summary: {}, revision: 4 },
      meta: meta({ tool: "completeTask", sessionId: "default", completed: ["a1"] }),
    });
    assert.deepEqual(effect, { sessionId: "default", changes: { a1: "completed" } });
  });
  await t.step("createTask marks the whole new subtree added", () => {
    const effect = effectOf({
      arguments: { sessionId: "s", name: "A" },
      meta: meta({ tool: "createTask", sessionId: "s", added: ["a", "b", "c"] }),
    });
    assert.deepEqual(effect.changes, { a: "added", b: "added", c: "added" });
  });
  await t.step("updateTask marks the task changed", () => {
    const effect = effectOf({
      arguments: { id: "a" },
      meta: meta({ tool: "updateTask", sessionId: "default", changed: ["a"] }),
    });
    assert.deepEqual(effect.changes, { a: "changed" });
  });
  await t.step("mark_task_as_done marks what it marked, not what failed", () => {
    const effect = effectOf({
      arguments: { sessionId: "c", taskIds: ["x", "y"] },
      result: { marked: ["x"], failed: [{ taskId: "y", code: "C", reason: "r" }], tree: "", revision: 2 },
      meta: meta({ tool: "mark_task_as_done", sessionId: "c", completed: ["x"] }),
    });
    assert.deepEqual(effect, { sessionId: "c", changes: { x: "completed" } });
  });
  await t.step("update_tasks marks the listed tasks, nested ones too", () => {
    const effect = effectOf({
      arguments: { sessionId: "c", tasks: [{ taskId: "x", description: "X", children: [{ taskId: "y" }] }] },
      meta: meta({ tool: "update_tasks", sessionId: "c", changed: ["x", "y"] }),
    });
    assert.deepEqual(effect, { sessionId: "c", changes: { x: "changed", y: "changed" } });
  });
  await t.step("deleteTask and restore_tasks mark nothing (what they removed is gone)", () => {
    const deleted = effectOf({ meta: meta({ tool: "deleteTask", sessionId: "s", removed: ["a"] }) });
    assert.deepEqual(deleted, { sessionId: "s", changes: {} });
    const restored = effectOf({ meta: meta({ tool: "restore_tasks", sessionId: "s" }) });
    assert.deepEqual(restored, { sessionId: "s", changes: {} });
  });
});

Deno.test("effectOf changes nothing for reads, failures and replies without an effect", () => {
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
  // A reply shaped like startTask's says nothing without its effect: the view no longer guesses.
  assert.deepEqual(
    effectOf({ arguments: { sessionId: "s" }, result: { started_tasks: [{ id: "a" }], revision: 1 } }),
    { sessionId: "s", changes: {} },
  );
  for (const bad of [{ [EFFECT_META_KEY]: "x" }, { [EFFECT_META_KEY]: { tool: "t" } }, { other: 1 }]) {
    assert.deepEqual(effectOf({ arguments: { sessionId: "s" }, meta: bad }), { sessionId: "s", changes: {} });
  }
});

Deno.test("effectOf takes the session from the effect, else the arguments, then the reply; checklist tools have no default", () => {
  assert.equal(
    effectOf({ result: { sessionId: "from-reply", total_tasks: 1, tree: "" } }).sessionId,
    "from-reply",
  );
  assert.equal(effectOf({ tool: "get_all_tasks", arguments: {} }).sessionId, undefined);
  assert.equal(effectOf({ tool: "task_history", arguments: {} }).sessionId, "default");
  assert.equal(effectOf({ arguments: { sessionId: "" } }).sessionId, "default");
  assert.equal(
    effectOf({ arguments: {}, meta: meta({ tool: "startTask", sessionId: "from-effect" }) }).sessionId,
    "from-effect",
  );
});

Deno.test("effectOf trusts the result's effect over the tool name the host gave (a view kept open)", () => {
  const effect = effectOf({
    tool: "startTask",
    arguments: { id: "a1", resolution: "done" },
    result: { message: "", progress_summary: {}, revision: 4 },
    meta: meta({ tool: "completeTask", sessionId: "default", completed: ["a1"] }),
  });
  assert.deepEqual(effect.changes, { a1: "completed" });
});

Deno.test("effectOf reads claimTask: the tasks it started, the leaf to centre on; nothing ready marks nothing", () => {
  const claimed = effectOf({
    tool: "claimTask",
    arguments: { sessionId: "s", agent: "frontend" },
    meta: meta({ tool: "claimTask", sessionId: "s", started: ["root", "ui"], focus: "ui" }),
  });
  assert.deepEqual(claimed, { sessionId: "s", changes: { root: "started", ui: "started" }, focus: "ui" });
  const waiting = effectOf({
    tool: "startTask",
    arguments: { sessionId: "s", agent: "late" },
    result: { task: null, message: "Nothing ready", waiting_on: [], blocked: [] },
    meta: meta({ tool: "claimTask", sessionId: "s" }),
  });
  assert.deepEqual(waiting, { sessionId: "s", changes: {} });
});
