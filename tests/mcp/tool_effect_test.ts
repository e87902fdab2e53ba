/**
 * Changing tools say what they changed in their result's `_meta` (lib/domain/tool_effect.ts), through
 * a real client: the tool, the session, the tasks touched; reads and failures say nothing.
 */
import assert from "node:assert/strict";
import { EFFECT_META_KEY } from "../../lib/domain/tool_effect.ts";
import { ALL_TOOLS } from "../../lib/mcp/server.ts";
import { effectOf } from "../../lib/render/changes.ts";
import { call, connectInMemory, textOf } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";

async function effect(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  const result = await call(client, name, args);
  assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
  return (result as { _meta?: Record<string, unknown> })._meta?.[EFFECT_META_KEY];
}

Deno.test("every changing tool of the tasks, checklist and history groups says what it changed in _meta", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const seen = new Map<string, unknown>();
  const run = async (name: string, args: Record<string, unknown>) => {
    const said = await effect(client, name, args);
    seen.set(name, said);
    return said;
  };

  assert.deepEqual(
    await run("createTask", {
      name: "Plan",
      id: "p",
      tasks: [{ id: "a", name: "A", tasks: [{ id: "a1", name: "A1" }] }, { id: "b", name: "B" }],
    }),
    { tool: "createTask", sessionId: "default", added: ["p", "a", "a1", "b"] },
  );
  assert.deepEqual(
    await run("updateTask", { id: "b", description: "more" }),
    { tool: "updateTask", sessionId: "default", changed: ["b"] },
  );
  assert.deepEqual(
    await run("startTask", { id: "p" }),
    { tool: "startTask", sessionId: "default", started: ["p", "a", "a1"], focus: "a1" },
  );
  assert.deepEqual(
    await run("completeTask", { id: "a1", resolution: "done" }),
    { tool: "completeTask", sessionId: "default", completed: ["a1"] },
  );
  assert.deepEqual(
    await run("claimTask", { agent: "x" }),
    { tool: "claimTask", sessionId: "default", started: ["p", "b"], focus: "b" },
  );
  assert.deepEqual(
    await run("claimTask", { agent: "y" }),
    { tool: "claimTask", sessionId: "default" },
    "nothing ready: the call touched no task",
  );
  assert.deepEqual(
    await run("deleteTask", { id: "a" }),
    { tool: "deleteTask", sessionId: "default", removed: ["a"] },
  );
  await call(client, "createTask", { sessionId: "h", name: "H", id: "h" });
  await call(client, "updateTask", { sessionId: "h", id: "h", name: "H2" });
  assert.deepEqual(
    await run("restore_tasks", { sessionId: "h", revision: 1 }),
    { tool: "restore_tasks", sessionId: "h" },
  );
  assert.deepEqual(
    await run("update_tasks", {
      sessionId: "c",
      tasks: [{ taskId: "x", description: "X", children: [{ taskId: "y", description: "Y" }] }],
    }),
    { tool: "update_tasks", sessionId: "c", changed: ["x", "y"] },
  );
  assert.deepEqual(
    await run("mark_task_as_done", { sessionId: "c", taskIds: ["y", "nope"] }),
    { tool: "mark_task_as_done", sessionId: "c", completed: ["y"] },
  );

  const changing = ALL_TOOLS.filter((t) =>
    ["tasks", "checklist", "history"].includes(t.group) && !t.annotations.readOnlyHint
  ).map((t) => t.name);
  assert.deepEqual([...seen.keys()].sort(), [...changing].sort(), "every changing tool is covered here");
});

Deno.test("reads, other groups and failures carry no effect", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  await call(client, "createTask", { name: "Plan", id: "p" });
  for (
    const [name, args] of [
      ["getTask", { id: "p" }],
      ["listTasks", {}],
      ["get_all_tasks", { sessionId: "default" }],
      ["task_history", {}],
      ["mem_progress", { project: "x", content: "{}" }],
      ["save_current_work_info", { work_summarize: "s", work_description: "d" }],
    ] as const
  ) {
    assert.equal(await effect(client, name, args), undefined, name);
  }
  const failed = await call(client, "startTask", { id: "missing" }) as { _meta?: Record<string, unknown> };
  assert.equal(failed._meta?.[EFFECT_META_KEY], undefined);
});

Deno.test("the plan view marks from a real result's _meta what it marked before from the reply's shape", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const seen = async (name: string, args: Record<string, unknown>) => {
    const result = await call(client, name, args) as {
      structuredContent?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    };
    return effectOf({ tool: name, arguments: args, result: result.structuredContent, meta: result._meta });
  };
  assert.deepEqual(
    await seen("createTask", { sessionId: "s", name: "P", id: "p", tasks: [{ id: "q", name: "Q" }] }),
    {
      sessionId: "s",
      changes: { p: "added", q: "added" },
    },
  );
  assert.deepEqual(await seen("startTask", { sessionId: "s", id: "p" }), {
    sessionId: "s",
    changes: { p: "started", q: "started" },
    focus: "q",
  });
  assert.deepEqual(await seen("completeTask", { sessionId: "s", id: "q", resolution: "r" }), {
    sessionId: "s",
    changes: { q: "completed" },
  });
  assert.deepEqual(await seen("getTask", { sessionId: "s", id: "p" }), { sessionId: "s", changes: {} });
});
