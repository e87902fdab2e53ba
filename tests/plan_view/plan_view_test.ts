/**
 * The plan view's MCP side (docs/dashboard.md "Plan view in chat clients"): the resource, the `_meta.ui` of the
 * tools, the view-only tools, the size of each read, and the context budget, through real SDK clients.
 */
import assert from "node:assert/strict";
import { PLAN_HTML } from "../../lib/plan_view/assets/plan_html.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { EFFECT_META_KEY } from "../../lib/domain/tool_effect.ts";
import { PLAN_VIEW_MIME, PLAN_VIEW_URI } from "../../lib/plan_view/server/plan_resource.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { SessionViewSchema, type TaskRow } from "../../lib/render/model.ts";
import {
  connectInMemory,
  LISTING_BUDGET,
  ok,
  spawnStdio,
  startHttp,
  type ToolResult,
} from "../support/harness.ts";
import { type Client, StreamableHTTPClientTransport } from "../support/sdk_client.ts";
import { bigPlanDocument } from "../support/dashboard.ts";
import { connectUi, uiClient } from "../support/plan_view.ts";

const VIEW_GROUP_TOOLS = [
  "createTask",
  "getTask",
  "listTasks",
  "updateTask",
  "deleteTask",
  "startTask",
  "claimTask",
  "checkPaths",
  "completeTask",
  "update_tasks",
  "get_all_tasks",
  "mark_task_as_done",
  "task_history",
  "restore_tasks",
];
const VIEW_TOOLS = ["view_session", "view_rows"];
const MAX_READ = 64 * 1024;

type Meta = { ui?: { resourceUri?: string; visibility?: string[]; csp?: Record<string, string[]> } };

function bytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

async function readView(client: Client) {
  const { contents } = await client.readResource({ uri: PLAN_VIEW_URI });
  assert.equal(contents.length, 1);
  return contents[0] as { uri: string; mimeType: string; text: string; _meta?: Meta };
}

Deno.test("the plan view is a listed resource, readable as one HTML document whose CSP names no domain", async () => {
  await using conn = await connectInMemory();
  const listed = (await conn.client.listResources()).resources.find((r) => r.uri === PLAN_VIEW_URI);
  assert.ok(listed, "listed");
  assert.equal(listed.mimeType, "text/html;profile=mcp-app");
  const content = await readView(conn.client);
  assert.equal(content.mimeType, PLAN_VIEW_MIME);
  assert.equal(content.text, PLAN_HTML);
  assert.match(content.text, /^<!doctype html>/);
  for (const meta of [listed._meta as Meta, content._meta]) {
    const csp = meta?.ui?.csp;
    assert.ok(csp, "a CSP is declared");
    for (const domains of Object.values(csp)) assert.deepEqual(domains, []);
  }
});

Deno.test("every tool of the tasks, checklist and history groups names the view; the others do not", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  for (const tool of tools) {
    const uri = (tool._meta as Meta | undefined)?.ui?.resourceUri;
    if (VIEW_GROUP_TOOLS.includes(tool.name)) assert.equal(uri, PLAN_VIEW_URI, tool.name);
    else assert.equal(tool._meta, undefined, tool.name);
  }
  assert.deepEqual(tools.filter((t) => VIEW_GROUP_TOOLS.includes(t.name)).length, VIEW_GROUP_TOOLS.length);
});

Deno.test("without the view's groups there is no view: no resource, no view tools", async () => {
  await using conn = await connectInMemory({ groups: ["works", "progress"] });
  const { resources } = await conn.client.listResources();
  assert.ok(!resources.some((r) => r.uri === PLAN_VIEW_URI));
  const result = await conn.client.callTool({ name: "view_session", arguments: {} }).catch((e) => e);
  assert.ok(result instanceof Error, "view_session is unknown");
});

for (const era of ["legacy", "modern"] as const) {
  Deno.test(`the view-only tools are listed, app-only and read-only, to clients that show MCP Apps and to no model (${era})`, async () => {
    await using plain = await connectInMemory({ era });
    const plainNames = (await plain.client.listTools()).tools.map((t) => t.name);
    for (const name of VIEW_TOOLS) {
      assert.ok(!plainNames.includes(name), `${name} hidden from a plain client`);
    }

    await using ui = await connectUi({ era });
    const { tools } = await ui.client.listTools();
    const viewTools = tools.filter((t) => VIEW_TOOLS.includes(t.name));
    assert.equal(viewTools.length, VIEW_TOOLS.length);
    for (const tool of viewTools) {
      assert.deepEqual((tool._meta as Meta).ui?.visibility, ["app"]);
      assert.equal(tool.annotations?.readOnlyHint, true);
      assert.equal(tool.annotations?.destructiveHint, false);
    }
    // Apart from them, both clients see the same listing.
    assert.deepEqual(tools.filter((t) => !VIEW_TOOLS.includes(t.name)).map((t) => t.name), plainNames);
  });
}

Deno.test("in 2026-07-28 the extension is negotiated per request: one server, the view tools only where the request asks", async () => {
  const { createMcpHandler } = await import("../../lib/mcp/sdk.ts");
  const { createServer } = await import("../../lib/mcp/server.ts");
  const { PLAN_VIEW } = await import("../../lib/plan_view/server/plan_feature.ts");
  const { MemoryStore } = await import("../../lib/store/memory_store.ts");
  const { quietLogger } = await import("../support/logs.ts");
  const { UI_CAPABILITIES } = await import("../support/plan_view.ts");
  const store = new MemoryStore();
  const handler = createMcpHandler(
    () => createServer({ store, log: quietLogger(), era: "modern", features: [PLAN_VIEW] }),
    {
      legacy: "reject",
    },
  );
  const list = async (capabilities: Record<string, unknown>) => {
    const { modernRequest } = await import("../support/http.ts");
    const request = modernRequest("tools/list", {}, {
      meta: { "io.modelcontextprotocol/clientCapabilities": capabilities },
    });
    const response = await handler.fetch(new Request("http://127.0.0.1/mcp", { method: "POST", ...request }));
    const body = await response.json() as { result: { tools: { name: string }[] } };
    return body.result.tools.map((t) => t.name);
  };
  try {
    const withView = await list(UI_CAPABILITIES);
    const without = await list({});
    for (const name of VIEW_TOOLS) {
      assert.ok(withView.includes(name), `${name} listed where the request shows views`);
      assert.ok(!without.includes(name), `${name} not listed where it does not`);
    }
  } finally {
    await handler.close();
  }
});

Deno.test("tools/list as the model sees it plus instructions stays under 19,500 characters, _meta included", async () => {
  for (const connect of [connectInMemory, connectUi]) {
    await using conn = await connect();
    const { tools } = await conn.client.listTools();
    const modelSees = tools.filter((t) =>
      !(t._meta as Meta | undefined)?.ui?.visibility?.every((v) => v === "app")
    );
    assert.ok(modelSees.some((t) => t._meta), "the _meta is counted");
    const total = JSON.stringify(modelSees).length + (conn.client.getInstructions() ?? "").length;
    assert.ok(total < LISTING_BUDGET, `${total} characters`);
  }
});

Deno.test("tool replies are what they were: content, structuredContent and the effect in _meta, no view data added", async () => {
  await using conn = await connectUi();
  const reply = await conn.client.callTool({ name: "createTask", arguments: { name: "A" } });
  const id = (reply.structuredContent as { task: { id: string } }).task.id;
  assert.deepEqual(Object.keys(reply).sort(), ["_meta", "content", "structuredContent"]);
  assert.deepEqual(reply._meta, {
    [EFFECT_META_KEY]: { tool: "createTask", sessionId: "default", added: [id] },
  });
  const started = await conn.client.callTool({ name: "startTask", arguments: { id } });
  assert.deepEqual(Object.keys(started).sort(), ["_meta", "content", "structuredContent"]);
  assert.deepEqual(started._meta, {
    [EFFECT_META_KEY]: { tool: "startTask", sessionId: "default", started: [id], focus: id },
  });
});

Deno.test("view_session answers the shared view model with the call's changes marked, and changes nothing", async () => {
  await using conn = await connectUi();
  await ok(conn.client, "createTask", {
    sessionId: "s",
    id: "a",
    name: "A",
    tasks: [{ id: "a1", name: "A1", completion_criteria: ["tested"] }, { id: "a2", name: "A2" }],
  });
  await ok(conn.client, "startTask", { sessionId: "s", id: "a" });
  const history = await ok<{ revision: number }>(conn.client, "task_history", { sessionId: "s" });
  const result = await conn.client.callTool({
    name: "view_session",
    arguments: { sessionId: "s", changes: [{ id: "a1", change: "started" }] },
  }) as ToolResult;
  assert.ok(!result.isError);
  const view = SessionViewSchema.parse(result.structuredContent);
  assert.deepEqual([view.done, view.total], [0, 3]);
  assert.equal(view.focus?.id, "a1");
  assert.deepEqual(view.focus?.criteria.map((r) => r.text), ["tested"]);
  assert.equal((view.rows.find((r) => r.kind === "task" && r.id === "a1") as TaskRow).change, "started");
  const rows = await conn.client.callTool({
    name: "view_rows",
    arguments: { sessionId: "s", parentId: "a", offset: 1, count: 1 },
  }) as ToolResult;
  assert.deepEqual((rows.structuredContent as { rows: TaskRow[] }).rows.map((r) => r.id), ["a2"]);
  const after = await ok<{ revision: number }>(conn.client, "task_history", { sessionId: "s" });
  assert.equal(after.revision, history.revision, "reading changed nothing");

  const missing = await conn.client.callTool({
    name: "view_session",
    arguments: { sessionId: "nope" },
  }) as ToolResult;
  assert.equal(missing.isError, true);
  assert.equal((missing.structuredContent as { error: { code: string } }).error.code, "NOT_FOUND");
  const badParent = await conn.client.callTool({
    name: "view_rows",
    arguments: { sessionId: "s", parentId: "zz", offset: 0, count: 5 },
  }) as ToolResult;
  assert.equal((badParent.structuredContent as { error: { code: string } }).error.code, "NOT_FOUND");
});

Deno.test("no read of the view returns more than 64 KiB, for a 10,000-task session and at the length limits", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/tasks.json`;
    const doc = bigPlanDocument("big") as {
      sessions: Record<string, { name: string; tasks: { name: string }[] }[]>;
    };
    // Longest names on the way to the task in progress and in a folded part.
    for (const phase of doc.sessions.big!) {
      phase.name = "界".repeat(LIMITS.nameLength);
      for (const milestone of phase.tasks) milestone.name = "\u0001".repeat(LIMITS.nameLength);
    }
    await Deno.writeTextFile(file, JSON.stringify(doc));
    await using conn = await connectUi({ store: await JsonFileStore.open(file) });
    const read = async (name: string, args: Record<string, unknown>) => {
      const result = await conn.client.callTool({ name, arguments: args }) as ToolResult;
      assert.ok(!result.isError, JSON.stringify(result.content));
      assert.ok(bytes(result) <= MAX_READ, `${name} returned ${bytes(result)} bytes`);
      return result.structuredContent!;
    };
    const view = SessionViewSchema.parse(await read("view_session", { sessionId: "big" }));
    assert.equal(view.total, 10_000);
    assert.equal(view.focus?.id, "s5-4-50");
    await read("view_rows", { sessionId: "big", offset: 0, count: 1000 });
    await read("view_rows", { sessionId: "big", parentId: "p7", offset: 0, count: 1000 });
    await read("view_rows", { sessionId: "big", parentId: "m7-2", offset: 0, count: 1000 });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the plan view is read over stdio from a real child process", async () => {
  await using conn = await spawnStdio();
  const content = await readView(conn.client);
  assert.equal(content.text, PLAN_HTML);
  const names = (await conn.client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes("view_session"));
});

Deno.test("over HTTP the view works alike; stateless, its tools are callable but not listed", async (t) => {
  for (const stateless of [false, true]) {
    await t.step(stateless ? "stateless" : "stateful", async () => {
      await using server = await startHttp({ env: stateless ? { STATELESS: "1" } : {} });
      const client = uiClient();
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      try {
        assert.equal((await readView(client)).text, PLAN_HTML);
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.equal(names.includes("view_session"), !stateless);
        await ok(client, "createTask", { sessionId: "h", id: "a", name: "A" });
        const view = await client.callTool({
          name: "view_session",
          arguments: { sessionId: "h" },
        }) as ToolResult;
        assert.equal(SessionViewSchema.parse(view.structuredContent).total, 1);
      } finally {
        await client.close();
      }
    });
  }
});
