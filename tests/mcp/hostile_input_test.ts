/**
 * Hostile input through a real SDK client (contract "Failures, limits and hostile input"): deep
 * nesting is LIMIT_EXCEEDED before any deep work, wrong types are one coded line, keys that name
 * Object.prototype members are kept like any other, blank required text is refused, and
 * mark_task_as_done judges each id alone. Every refusal leaves the store as it was.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { call, connectInMemory, fails, ok, textOf } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";

/** A createTask input whose `tasks` nest `levels` deep. */
function nestedTasks(levels: number): Record<string, unknown> {
  let task: Record<string, unknown> = { name: "leaf" };
  for (let i = 0; i < levels; i++) task = { name: `level ${i}`, tasks: [task] };
  return task;
}

/** JSON text of an object whose value nests `levels` deep in all. */
function nestedJson(levels: number): string {
  return `{"a":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
}

/** Calls a tool with raw arguments (any JSON value) and returns the coded error. */
async function refusal(
  client: Client,
  name: string,
  args: unknown,
): Promise<{ code: string; message: string }> {
  const result = await client.callTool({ name, arguments: args as Record<string, unknown> });
  assert.equal(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { error: { code: string; message: string } }).error;
}

Deno.test("tasks nested 1,000 deep are LIMIT_EXCEEDED, not a stack overflow, and nothing is stored", async (t) => {
  await using conn = await connectInMemory();
  const before = await conn.store.exportDocument();
  await t.step("createTask", async () => {
    const message = await fails(conn.client, "createTask", nestedTasks(1000), "LIMIT_EXCEEDED");
    assert.match(message, /`tasks` nests deeper than 64 levels/);
  });
  await t.step("update_tasks", async () => {
    let item: Record<string, unknown> = { taskId: "x0", description: "x" };
    for (let i = 1; i < 1000; i++) item = { taskId: `x${i}`, description: "x", children: [item] };
    await fails(conn.client, "update_tasks", { sessionId: "s", tasks: [item] }, "LIMIT_EXCEEDED");
  });
  await t.step("just past the tree's own depth limit is LIMIT_EXCEEDED too", async () => {
    await fails(conn.client, "createTask", nestedTasks(20), "LIMIT_EXCEEDED");
  });
  assert.deepEqual(await conn.store.exportDocument(), before);
  await ok(conn.client, "createTask", nestedTasks(11));
});

Deno.test("a progress document nested deeper than 64 levels is LIMIT_EXCEEDED; 64 levels are kept", async () => {
  await using conn = await connectInMemory();
  await fails(conn.client, "mem_progress", { project: "p", content: nestedJson(65) }, "LIMIT_EXCEEDED");
  await fails(conn.client, "mem_progress", { project: "p", content: nestedJson(1400) }, "LIMIT_EXCEEDED");
  assert.equal(await conn.store.space("default").readProgress("p"), undefined);
  await ok(conn.client, "mem_progress", { project: "p", content: nestedJson(64) });
  const read = await ok<{ content: unknown }>(conn.client, "mem_progress", { project: "p" });
  assert.equal(JSON.stringify(read.content), nestedJson(64));
});

Deno.test("arguments of the wrong type are INVALID_INPUT in one line naming the field", async (t) => {
  await using conn = await connectInMemory();
  const before = await conn.store.exportDocument();
  for (const [label, args] of [["a string", "do it"], ["an array", [1, 2]], ["a number", 7]] as const) {
    await t.step(`arguments that are ${label}`, async () => {
      const error = await refusal(conn.client, "createTask", args);
      assert.equal(error.code, "INVALID_INPUT");
      assert.equal(
        error.message,
        `Invalid arguments for createTask: arguments must be a JSON object of named parameters, not ${label}.`,
      );
    });
  }
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["createTask", { name: 5 }, /`name` must be a string/],
    ["createTask", { name: "a", tasks: [{ name: "b", tasks: "c" }] }, /`tasks\[0\]\.tasks` must be an array/],
    ["getTask", {}, /`id` is required/],
    ["mark_task_as_done", { sessionId: "s", taskIds: "a" }, /`taskIds` must be an array/],
    ["mem_progress", { project: { name: "p" } }, /`project` must be a string/],
  ];
  for (const [tool, args, pattern] of cases) {
    await t.step(`${tool} ${JSON.stringify(args)}`, async () => {
      const error = await refusal(conn.client, tool, args);
      assert.equal(error.code, "INVALID_INPUT");
      assert.match(error.message, pattern);
      assert.doesNotMatch(error.message, /[\n{}]|"code"|"path"/, "one line, no validator dump");
    });
  }
  assert.deepEqual(await conn.store.exportDocument(), before);
});

Deno.test("__proto__, constructor and toString are ids, projects and keys like any other", async (t) => {
  await using conn = await connectInMemory();
  const c = conn.client;
  for (const key of ["__proto__", "constructor", "toString"]) {
    await t.step(key, async () => {
      await ok(c, "createTask", {
        sessionId: key,
        id: key,
        name: `task ${key}`,
        tasks: [{ id: `${key}1`, name: "x" }],
      });
      const got = await ok<{ task: { id: string; tasks: { id: string }[] } }>(c, "getTask", {
        sessionId: key,
        id: key,
      });
      assert.equal(got.task.id, key);
      assert.equal(got.task.tasks[0]!.id, `${key}1`);
      const listed = await ok<{ tasks: { id: string }[] }>(c, "listTasks", { sessionId: key });
      assert.deepEqual(listed.tasks.map((x) => x.id), [key]);
      const marked = await ok<{ marked: string[] }>(c, "mark_task_as_done", {
        sessionId: key,
        taskIds: [`${key}1`, key],
      });
      assert.deepEqual(marked.marked, [`${key}1`, key]);
      assert.match((await ok<{ tree: string }>(c, "get_all_tasks", { sessionId: key })).tree, /✓ .*: task /);

      const content = `{"${key}":{"nested":true},"goal":"g","list":[{"${key}":1}]}`;
      await ok(c, "mem_progress", { project: key, content });
      const doc = await ok<{ content: unknown }>(c, "mem_progress", { project: key });
      assert.equal(JSON.stringify(doc.content), content);
      assert.ok(Object.hasOwn(doc.content as object, key), `${key} is an own key of the document`);

      const { workId } = await ok<{ workId: string }>(c, "save_current_work_info", {
        sessionId: key,
        work_summarize: key,
        work_description: key,
      });
      const work = await ok<{ sessionId: string; work_tasks: { id: string }[] }>(c, "get_work_by_id", {
        workId,
      });
      assert.equal(work.sessionId, key);
      assert.equal(work.work_tasks[0]!.id, key);
    });
  }
});

Deno.test("required text that is blank after trimming is INVALID_INPUT and changes nothing", async (t) => {
  await using conn = await connectInMemory();
  const c = conn.client;
  await ok(c, "createTask", { sessionId: "s", id: "a", name: "A" });
  await ok(c, "startTask", { sessionId: "s", id: "a" });
  await ok(c, "mem_progress", { project: "p", content: "{}" });
  const before = await conn.store.exportDocument();
  const cases: [string, string, Record<string, unknown>][] = [
    ["task name", "createTask", { sessionId: "s", name: " \t\n " }],
    ["task name on update", "updateTask", { sessionId: "s", id: "a", name: "   " }],
    ["checklist task text", "update_tasks", { sessionId: "s", tasks: [{ taskId: "b", description: "  " }] }],
    ["resolution", "completeTask", { sessionId: "s", id: "a", resolution: "  \n" }],
    ["work_description", "save_current_work_info", { work_summarize: "s", work_description: "   " }],
    ["work_summarize", "save_current_work_info", { work_summarize: "\t", work_description: "d" }],
    ["project", "mem_progress", { project: "   ", content: "{}" }],
  ];
  for (const [label, tool, args] of cases) {
    await t.step(label, async () => {
      const message = await fails(c, tool, args, "INVALID_INPUT");
      assert.match(message, /must not be empty or blank/);
    });
  }
  assert.deepEqual(await conn.store.exportDocument(), before);
});

Deno.test("mark_task_as_done judges each id alone: unknown and malformed ids fail, the others are marked", async () => {
  await using conn = await connectInMemory();
  const c = conn.client;
  await ok(c, "update_tasks", {
    sessionId: "s",
    tasks: [{ taskId: "a", description: "A" }, { taskId: "b", description: "B" }],
  });
  const result = await call(c, "mark_task_as_done", {
    sessionId: "s",
    taskIds: ["a", "bad id", "", "x".repeat(65), "nope", "b"],
  });
  assert.equal(result.isError, undefined, textOf(result));
  const { marked, failed } = result.structuredContent as {
    marked: string[];
    failed: { taskId: string; code: string; reason: string }[];
  };
  assert.deepEqual(marked, ["a", "b"]);
  assert.deepEqual(failed.map((f) => [f.taskId, f.code]), [
    ["bad id", "INVALID_INPUT"],
    ["", "INVALID_INPUT"],
    ["x".repeat(65), "INVALID_INPUT"],
    ["nope", "NOT_FOUND"],
  ]);
  assert.match(textOf(result), /Failed bad id: not a task id/);
  // Only malformed ids: nothing can be marked, so the call is an error and nothing changes.
  const before = await conn.store.exportDocument();
  await fails(c, "mark_task_as_done", { sessionId: "s", taskIds: ["a/b", " "] }, "INVALID_INPUT");
  assert.deepEqual(await conn.store.exportDocument(), before);
});

Deno.test("protocol errors are one plain line naming the field, never a validator dump", async (t) => {
  await using conn = await connectInMemory();
  const cases: [string, unknown, RegExp][] = [
    ["resources/read", { uri: 123 }, /^Invalid params: `uri`: .*expected string/],
    ["prompts/get", { name: "resume", arguments: { project: 5 } }, /^Invalid params: `arguments\.project`/],
    ["logging/setLevel", { level: "loud" }, /^Invalid params: `level`/],
    ["tools/list", { cursor: {} }, /^Invalid params: `cursor`/],
    ["tools/call", { name: 5 }, /tools\/call needs params\.name/],
  ];
  for (const [method, params, pattern] of cases) {
    await t.step(method, async () => {
      const error = await conn.client.request({ method, params } as never, z.any()).then(
        () => assert.fail(`${method} should fail`),
        (e: { code: number; message: string }) => e,
      );
      assert.equal(error.code, -32602, error.message);
      const message = error.message.replace(/^MCP error -32602: /, "");
      assert.match(message, pattern);
      assert.doesNotMatch(message, /\n|"code"|"path"|\[\s*\{/);
    });
  }
});
