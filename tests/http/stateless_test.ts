/**
 * Stateless mode: every request stands alone and all state is in the store, so several instances
 * behind one URL behave as one server. In-process: two apps over one store; for real: two processes
 * over one JSON file, the client's requests alternating between them.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../lib/config.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { ok } from "../support/harness.ts";
import { connectHttp, ENDPOINT, initializeBody, makeApp, post, send, viaApp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";

Deno.test("stateless: two instances over one store answer one client as one server", async () => {
  const store = new MemoryStore();
  await using a = makeApp({ stateless: true }, { store });
  await using b = makeApp({ stateless: true }, { store });
  await using handle = await connectHttp(ENDPOINT, { fetch: viaApp(a.app, b.app) });
  assert.equal(handle.transport.sessionId, undefined, "no Mcp-Session-Id in stateless mode");
  const { task } = await ok<{ task: { id: string } }>(handle.client, "createTask", {
    sessionId: "shared",
    name: "Ship it",
    tasks: [{ name: "Build" }, { name: "Test" }],
  });
  // The next calls land on alternating instances; each sees what the other wrote.
  await ok(handle.client, "startTask", { sessionId: "shared", id: task.id });
  const { tasks } = await ok<{ tasks: { id: string; status: string }[] }>(handle.client, "listTasks", {
    sessionId: "shared",
    parentId: task.id,
  });
  assert.deepEqual(tasks.map((t) => t.status), ["in_progress", "todo"]);
  const listed = await handle.client.listTools();
  assert.ok(listed.tools.some((t) => t.name === "createTask"));
});

Deno.test("stateless: GET and DELETE get 405; no session id is issued", async () => {
  await using app = makeApp({ stateless: true });
  for (const method of ["GET", "DELETE"]) {
    const response = await send(app.app, { method, headers: { accept: "text/event-stream" } });
    assert.equal(response.status, 405, method);
    assert.match(response.headers.get("allow") ?? "", /POST/);
    assert.equal((await response.json()).jsonrpc, "2.0");
  }
  const init = await post(app.app, initializeBody());
  assert.equal(init.status, 200);
  assert.equal(init.headers.get("mcp-session-id"), null);
  await init.body?.cancel();
  const ping = await post(app.app, { jsonrpc: "2.0", id: 2, method: "ping" });
  assert.equal(ping.status, 200, "a request without initialize on this instance is answered");
  await ping.body?.cancel();
});

Deno.test("stateless is on by default on Deno Deploy, and STATELESS=0 overrides it", () => {
  assert.equal(loadConfig({}).stateless, false);
  assert.equal(loadConfig({ STATELESS: "1" }).stateless, true);
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc123" }).stateless, true);
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc123", STATELESS: "0" }).stateless, false);
});

Deno.test("stateless: two server processes sharing FILE_PATH behave as one server", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-stateless-" });
  try {
    const env = { STATELESS: "1", FILE_PATH: `${dir}/tasks.json` };
    await using one = await spawnServer({ env });
    await using two = await spawnServer({ env });
    // One URL for the client; requests alternate between the two processes behind it.
    let turn = 0;
    const balancer: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      const target = new URL(request.url);
      const backend = new URL([one.url, two.url][turn++ % 2]!);
      target.host = backend.host;
      return fetch(new Request(target, request));
    };
    await using handle = await connectHttp(`${one.url}/mcp`, { fetch: balancer });
    const { task } = await ok<{ task: { id: string } }>(handle.client, "createTask", {
      name: "Plan",
      tasks: [{ name: "a" }, { name: "b" }],
    });
    await ok(handle.client, "startTask", { id: task.id });
    const first = await firstChild(handle.client, task.id);
    const done = await ok<{ next_task_id?: string }>(handle.client, "completeTask", {
      id: first,
      resolution: "done",
    });
    assert.ok(done.next_task_id, "the other process saw the tree and named the next task");
    assert.ok(turn >= 4, "requests went to both processes");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function firstChild(client: Parameters<typeof ok>[0], parentId: string): Promise<string> {
  const { tasks } = await ok<{ tasks: { id: string }[] }>(client, "listTasks", { parentId });
  return tasks[0]!.id;
}
