/**
 * The task tools end to end, through a real SDK client: in memory, over a real stdio child process
 * and over HTTP on a real port run the same scenarios. Each scenario uses its own session.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { createApp } from "../../lib/http/app.ts";
import { createServer, INSTRUCTIONS } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Client } from "../support/sdk_client.ts";
import {
  call,
  connectInMemory,
  type Connection,
  fails,
  LISTING_BUDGET,
  ok,
  spawnStdio,
  startHttp,
  textOf,
} from "../support/harness.ts";
import { quietLogger } from "../support/logs.ts";

type TaskNode = Task;

async function tree(client: Client, sessionId: string, id: string): Promise<TaskNode> {
  return (await ok<{ task: TaskNode }>(client, "getTask", { sessionId, id })).task;
}

function statuses(task: TaskNode, out: Record<string, string> = {}): Record<string, string> {
  out[task.id] = task.status;
  for (const child of task.tasks) statuses(child, out);
  return out;
}

/** A three-level plan: root → a (a1, a2), b; criteria and constraints on several levels. */
async function createPlan(client: Client, sessionId: string): Promise<string> {
  const { task, message } = await ok<{ task: TaskNode; message: string }>(client, "createTask", {
    sessionId,
    name: "Ship the feature",
    description: "The whole plan",
    completion_criteria: ["tests pass"],
    constraints: ["no new dependencies"],
    tasks: [
      {
        id: "a",
        name: "Build",
        completion_criteria: ["it compiles"],
        tasks: [
          { id: "a1", name: "Write the parser", constraints: ["keep it small"] },
          { id: "a2", name: "Write the printer" },
        ],
      },
      { id: "b", name: "Release" },
    ],
  });
  assert.match(message, /with 4 subtasks/);
  assert.deepEqual(statuses(task), { [task.id]: "todo", a: "todo", a1: "todo", a2: "todo", b: "todo" });
  return task.id;
}

type Scenario = (client: Client) => void | Promise<void>;

const SCENARIOS: Record<string, Scenario> = {
  "initialize reports the server, its instructions and the tools capability"(client) {
    assert.equal(client.getServerVersion()?.name, "checklist-mcp");
    assert.equal(client.getInstructions(), INSTRUCTIONS);
    assert.ok(client.getServerCapabilities()?.tools);
  },

  async "tools/list declares every tool fully and stays small"(client) {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (
      const name of [
        "createTask",
        "getTask",
        "listTasks",
        "updateTask",
        "deleteTask",
        "startTask",
        "completeTask",
        "update_tasks",
        "get_all_tasks",
        "mark_task_as_done",
      ]
    ) assert.ok(names.includes(name), `${name} is listed`);
    assert.equal(new Set(names).size, names.length, "tool names are unique");
    for (const tool of tools) {
      assert.ok(tool.title && tool.title.length > 0, `${tool.name} has a title`);
      assert.ok(tool.description && tool.description.length > 0, `${tool.name} has a description`);
      assert.equal(tool.inputSchema.type, "object", `${tool.name} inputSchema`);
      assert.equal(tool.outputSchema?.type, "object", `${tool.name} outputSchema`);
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint"] as const) {
        assert.equal(typeof tool.annotations?.[hint], "boolean", `${tool.name} declares ${hint}`);
      }
      if (tool.annotations?.readOnlyHint) {
        assert.equal(
          tool.annotations.destructiveHint,
          false,
          `${tool.name} reads only, so it destroys nothing`,
        );
      }
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(byName.getTask!.annotations?.readOnlyHint, true);
    assert.equal(byName.deleteTask!.annotations?.destructiveHint, true);
    assert.equal(byName.createTask!.annotations?.readOnlyHint, false);
    const size = JSON.stringify(tools).length + (client.getInstructions() ?? "").length;
    assert.ok(
      size < LISTING_BUDGET,
      `tools/list plus instructions is ${size} characters, over ${LISTING_BUDGET}`,
    );
  },

  async "a plan runs from createTask through startTask and completeTask to the end"(client) {
    const sessionId = "flow";
    const root = await createPlan(client, sessionId);

    const started = await ok<{
      task: { id: string; status: string; parent_id?: string };
      started_tasks: { id: string }[];
      aggregated_completion_criteria: string[];
      aggregated_constraints: string[];
      hierarchy_summary: string;
    }>(client, "startTask", { sessionId, id: root });
    assert.equal(started.task.id, "a1", "starting the root descends to the first leaf");
    assert.equal(started.task.status, "in_progress");
    assert.equal(started.task.parent_id, "a");
    assert.deepEqual(started.started_tasks.map((t) => t.id), [root, "a", "a1"]);
    assert.deepEqual(started.aggregated_completion_criteria, ["tests pass", "it compiles"]);
    assert.deepEqual(started.aggregated_constraints, ["no new dependencies", "keep it small"]);
    assert.match(started.hierarchy_summary, /a1/);
    assert.deepEqual(statuses(await tree(client, sessionId, root)), {
      [root]: "in_progress",
      a: "in_progress",
      a1: "in_progress",
      a2: "todo",
      b: "todo",
    });

    type Done = {
      message: string;
      next_task_id?: string;
      progress_summary: { total_tasks: number; completed_tasks: number; completion_percentage: number };
    };
    const first = await ok<Done>(client, "completeTask", { sessionId, id: "a1", resolution: "parser done" });
    assert.equal(first.next_task_id, "a2");
    assert.equal(first.progress_summary.total_tasks, 5);
    assert.equal(first.progress_summary.completed_tasks, 1);

    await ok(client, "startTask", { sessionId, id: "a2" });
    const second = await ok<Done>(client, "completeTask", {
      sessionId,
      id: "a2",
      resolution: "printer done",
    });
    assert.equal(second.next_task_id, "b");
    assert.match(second.message, /also completed: "Build" \(a\)/);
    assert.equal(
      (await tree(client, sessionId, "a")).status,
      "done",
      "a parent completes with its last child",
    );

    await ok(client, "startTask", { sessionId, id: "b" });
    const last = await call(client, "completeTask", { sessionId, id: "b", resolution: "released" });
    const lastDone = last.structuredContent as Done;
    assert.equal(lastDone.next_task_id, undefined);
    assert.match(lastDone.message, /All tasks are complete/);
    assert.match(textOf(last), /All tasks are complete/);
    assert.equal(lastDone.progress_summary.completed_tasks, 5);
    assert.equal(lastDone.progress_summary.completion_percentage, 100);

    const final = await tree(client, sessionId, root);
    assert.ok(Object.values(statuses(final)).every((s) => s === "done"));
    assert.equal(final.tasks[0]!.tasks[0]!.resolution, "parser done");
  },

  async "every refusal comes back as isError with its code and changes nothing"(client) {
    const sessionId = "errors";
    const root = await createPlan(client, sessionId);
    await ok(client, "startTask", { sessionId, id: "a1" });
    await ok(client, "completeTask", { sessionId, id: "a1", resolution: "ok" });
    const before = await tree(client, sessionId, root);
    const beforeText = (await ok<{ tree: string }>(client, "get_all_tasks", { sessionId })).tree;

    await fails(client, "getTask", { sessionId, id: "missing" }, "NOT_FOUND");
    await fails(client, "startTask", { sessionId, id: "missing" }, "NOT_FOUND");
    await fails(client, "createTask", { sessionId, parentId: "missing", name: "x" }, "NOT_FOUND");
    await fails(
      client,
      "createTask",
      {
        sessionId,
        parentId: "b",
        name: "again",
        tasks: [{ id: "new", name: "n" }, { id: "a2", name: "dup" }],
      },
      "DUPLICATE_ID",
    );
    const order = await fails(client, "startTask", { sessionId, id: "b" }, "EXECUTION_ORDER_VIOLATION");
    assert.match(order, /"Build" \(a\)/, "the refusal names the unfinished earlier sibling");
    await fails(client, "completeTask", { sessionId, id: "a", resolution: "early" }, "UNFINISHED_SUBTASKS");
    await fails(client, "completeTask", { sessionId, id: "a1", resolution: "twice" }, "INVALID_INPUT");
    await fails(client, "createTask", { sessionId, parentId: "b", name: "x".repeat(201) }, "LIMIT_EXCEEDED");
    await fails(client, "getTask", { sessionId: "s".repeat(101), id: "a" }, "LIMIT_EXCEEDED");

    assert.deepEqual(await tree(client, sessionId, root), before);
    assert.equal((await ok<{ tree: string }>(client, "get_all_tasks", { sessionId })).tree, beforeText);
  },

  async "bad input is refused with INVALID_INPUT or LIMIT_EXCEEDED and changes nothing"(client) {
    const sessionId = "bad-input";
    const root = await createPlan(client, sessionId);
    await ok(client, "startTask", { sessionId, id: root });
    const before = await tree(client, sessionId, root);
    const roots = await ok(client, "listTasks", { sessionId });

    const cases: [string, Record<string, unknown>, string][] = [
      ["createTask", { sessionId }, "INVALID_INPUT"],
      ["createTask", { sessionId, name: 42 }, "INVALID_INPUT"],
      ["createTask", { sessionId, name: "ok", tasks: "not a list" }, "INVALID_INPUT"],
      ["createTask", { sessionId, name: "ok", tasks: [{ id: "has space", name: "x" }] }, "INVALID_INPUT"],
      ["createTask", { sessionId, name: "ok", parentId: "a", insertIndex: -1 }, "INVALID_INPUT"],
      ["createTask", { sessionId, name: "ok", parentId: "a", insertIndex: 9 }, "INVALID_INPUT"],
      ["createTask", { sessionId, name: "n".repeat(201) }, "LIMIT_EXCEEDED"],
      ["createTask", { sessionId, name: "ok", tasks: [{ name: "n".repeat(201) }] }, "LIMIT_EXCEEDED"],
      ["createTask", { sessionId, name: "ok", completion_criteria: Array(21).fill("c") }, "LIMIT_EXCEEDED"],
      ["startTask", { sessionId }, "INVALID_INPUT"],
      ["startTask", { sessionId, id: 7 }, "INVALID_INPUT"],
      ["completeTask", { sessionId, id: "a1" }, "INVALID_INPUT"],
      ["completeTask", { sessionId, id: "a1", resolution: "" }, "INVALID_INPUT"],
      ["completeTask", { sessionId, id: "a1", resolution: "r".repeat(4001) }, "LIMIT_EXCEEDED"],
      ["updateTask", { sessionId, id: "a1", status: "finished" }, "INVALID_INPUT"],
      ["updateTask", { sessionId, id: "a1" }, "INVALID_INPUT"],
      ["updateTask", { sessionId, id: "a1", name: "" }, "INVALID_INPUT"],
      ["updateTask", { sessionId, id: "a1", name: "n".repeat(201) }, "LIMIT_EXCEEDED"],
      ["deleteTask", { sessionId, id: ["a1"] }, "INVALID_INPUT"],
      ["listTasks", { sessionId, parentId: null }, "INVALID_INPUT"],
    ];
    for (const [name, args, code] of cases) await fails(client, name, args, code);

    assert.deepEqual(await tree(client, sessionId, root), before);
    assert.deepEqual(await ok(client, "listTasks", { sessionId }), roots);
  },

  async "listTasks, updateTask and deleteTask work on one level"(client) {
    const sessionId = "crud";
    const root = await createPlan(client, sessionId);
    const level = await ok<{ tasks: { id: string; subtasks_total: number }[] }>(client, "listTasks", {
      sessionId,
      parentId: "a",
    });
    assert.deepEqual(level.tasks.map((t) => t.id), ["a1", "a2"]);
    const updated = await ok<{ task: { name: string; description: string } }>(client, "updateTask", {
      sessionId,
      id: "a2",
      name: "Write the pretty printer",
      description: "with colours",
    });
    assert.equal(updated.task.name, "Write the pretty printer");
    assert.equal(updated.task.description, "with colours");
    const deleted = await ok<{ id: string; deleted: number }>(client, "deleteTask", { sessionId, id: "a" });
    assert.deepEqual(deleted, { id: "a", deleted: 3, revision: 3 });
    assert.deepEqual((await tree(client, sessionId, root)).tasks.map((t) => t.id), ["b"]);
    await fails(client, "getTask", { sessionId, id: "a1" }, "NOT_FOUND");
  },

  async "an unknown tool is a JSON-RPC error, not a tool result"(client) {
    await assert.rejects(
      client.callTool({ name: "no_such_tool", arguments: {} }),
      (error: Error & { code?: number }) => {
        assert.equal(error.code, -32602);
        assert.match(error.message, /no_such_tool/);
        return true;
      },
    );
  },
};

async function runScenarios(t: Deno.TestContext, connect: () => Promise<Connection>): Promise<void> {
  await using conn = await connect();
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    await t.step(name, async () => await scenario(conn.client));
  }
}

Deno.test("task tools through an in-memory client", (t) => runScenarios(t, () => connectInMemory()));

Deno.test("task tools through a stdio child process", (t) => runScenarios(t, () => spawnStdio()));

Deno.test("task tools through HTTP on a real port", (t) => runScenarios(t, () => startHttp()));

Deno.test("HTTP app answers without a socket", async (t) => {
  const store = new MemoryStore();
  const log = quietLogger();
  const { app, close } = createApp({
    store,
    log,
    makeServer: () => createServer({ store, log, features: [PLAN_VIEW] }),
  });
  const base = "http://127.0.0.1:8585";
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    host: "127.0.0.1:8585",
  };
  try {
    await t.step("GET /healthz reports the store", async () => {
      const response = await app.request(`${base}/healthz`, { headers: { host: headers.host } });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { status: "ok", store: "memory" });
    });

    await t.step("a POST without a session that is not initialize is a 400", async () => {
      const response = await app.request(`${base}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      assert.equal(response.status, 400);
      const body = await response.json();
      assert.equal(body.jsonrpc, "2.0");
      assert.equal(typeof body.error?.code, "number");
    });

    await t.step("an unknown Mcp-Session-Id is a 404", async () => {
      const response = await app.request(`${base}/mcp`, {
        method: "POST",
        headers: { ...headers, "mcp-session-id": "00000000-0000-4000-8000-000000000000" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      assert.equal(response.status, 404);
      assert.equal(typeof (await response.json()).error?.code, "number");
    });

    await t.step("initialize opens a session that later requests use", async () => {
      const init = await app.request(`${base}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "app-request", version: "0" },
          },
        }),
      });
      assert.equal(init.status, 200);
      const session = init.headers.get("mcp-session-id");
      assert.ok(session, "initialize returns Mcp-Session-Id");
      assert.match(await init.text(), /checklist-mcp/);
      const sessionHeaders = { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
      const initialized = await app.request(`${base}/mcp`, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      });
      assert.equal(initialized.status, 202);
      await initialized.body?.cancel();
      const list = await app.request(`${base}/mcp`, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
      });
      assert.equal(list.status, 200);
      assert.match(await list.text(), /"createTask"/);
    });
  } finally {
    await close();
  }
});

Deno.test("createTask keeps an id given at the top level, and refuses a used one", async () => {
  await using conn = await connectInMemory();
  const created = await call(conn.client, "createTask", {
    id: "plan",
    name: "Plan",
    tasks: [{ id: "step", name: "Step" }],
  });
  assert.equal(created.isError, undefined);
  const task = (created.structuredContent as { task: { id: string; tasks: { id: string }[] } }).task;
  assert.equal(task.id, "plan");
  assert.equal(task.tasks[0]!.id, "step");
  const again = await call(conn.client, "createTask", { id: "plan", name: "Other" });
  assert.equal(again.isError, true);
  assert.equal((again.structuredContent as { error: { code: string } }).error.code, "DUPLICATE_ID");
});
