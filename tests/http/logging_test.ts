/**
 * MCP logging: `logging/setLevel`, and the server's logs reaching the client that caused them as
 * `notifications/message` (warnings and failures by default). Notifications travel on the request's
 * own stream ahead of its reply, so by the time a call returns its notifications have arrived.
 */
import assert from "node:assert/strict";
import { DEFAULT_CLIENT_LOG_LEVEL, LOGGER_NAME } from "../../lib/mcp/log_bridge.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { call, spawnStdio } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";
import { connectHttp, ENDPOINT, makeApp, viaApp } from "../support/http.ts";

interface LogMessage {
  level: string;
  logger?: string;
  data: Record<string, unknown>;
}

function collect(client: Client): LogMessage[] {
  const seen: LogMessage[] = [];
  client.setNotificationHandler("notifications/message", (notification) => {
    seen.push(notification.params as LogMessage);
  });
  return seen;
}

const missing = { sessionId: "logs", id: "no-such-task" };

Deno.test("before setLevel a client gets warnings: a failed tool call arrives, a good one does not", async () => {
  assert.equal(DEFAULT_CLIENT_LOG_LEVEL, "warning");
  await using app = makeApp();
  await using handle = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
  const seen = collect(handle.client);
  await call(handle.client, "createTask", { sessionId: "logs", name: "fine" });
  assert.equal(seen.length, 0, JSON.stringify(seen));
  const failed = await call(handle.client, "getTask", missing);
  assert.equal(failed.isError, true);
  assert.equal(seen.length, 1, JSON.stringify(seen));
  assert.equal(seen[0]!.level, "warning");
  assert.equal(seen[0]!.logger, LOGGER_NAME);
  assert.equal(seen[0]!.data.message, "tool call failed");
  assert.equal(seen[0]!.data.tool, "getTask");
  assert.equal(seen[0]!.data.error, "NOT_FOUND");
});

Deno.test("logging/setLevel: debug shows every call, error hides warnings", async (t) => {
  await using app = makeApp();
  await using handle = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
  const seen = collect(handle.client);

  await t.step("debug", async () => {
    assert.deepEqual(await handle.client.setLoggingLevel("debug"), {});
    await call(handle.client, "listTasks", { sessionId: "logs" });
    assert.ok(
      seen.some((m) => m.level === "debug" && m.data.message === "tool call" && m.data.tool === "listTasks"),
    );
  });

  await t.step("error", async () => {
    seen.length = 0;
    await handle.client.setLoggingLevel("error");
    await call(handle.client, "getTask", missing);
    await call(handle.client, "listTasks", { sessionId: "logs" });
    assert.equal(seen.length, 0, JSON.stringify(seen));
  });

  await t.step("an unknown level is a JSON-RPC error", async () => {
    await assert.rejects(() => handle.client.setLoggingLevel("loud" as "debug"));
  });
});

Deno.test("the unknown-session warning of save_current_work_info reaches the client", async () => {
  await using app = makeApp();
  await using handle = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
  const seen = collect(handle.client);
  const saved = await call(handle.client, "save_current_work_info", {
    work_summarize: "did things",
    work_description: "a handover",
    sessionId: "never-created",
  });
  assert.ok(!saved.isError);
  const warning = seen.find((m) => m.level === "warning");
  assert.ok(warning, JSON.stringify(seen));
  assert.match(String(warning.data.message), /unknown session/);
  assert.equal(warning.data.sessionId, "never-created");
});

Deno.test("each client gets its own logs at its own level, never another client's", async () => {
  const store = new MemoryStore();
  await using app = makeApp({}, { store });
  await using verbose = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
  await using quiet = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
  const verboseSeen = collect(verbose.client);
  const quietSeen = collect(quiet.client);
  await verbose.client.setLoggingLevel("debug");
  await call(quiet.client, "getTask", missing);
  await call(verbose.client, "listTasks", { sessionId: "logs" });
  assert.deepEqual(quietSeen.map((m) => m.data.tool), ["getTask"]);
  assert.deepEqual(
    verboseSeen.map((m) => m.data.tool),
    ["listTasks"],
    "the quiet client's failure stays its own",
  );
});

Deno.test("stateless mode forwards a request's logs on that request's stream", async () => {
  await using app = makeApp({ stateless: true });
  await using handle = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
  const seen = collect(handle.client);
  await call(handle.client, "getTask", missing);
  assert.deepEqual(seen.map((m) => [m.level, m.data.error]), [["warning", "NOT_FOUND"]]);
});

Deno.test("stdio clients get log notifications too", async () => {
  await using conn = await spawnStdio({ era: "legacy" });
  const seen = collect(conn.client);
  await conn.client.setLoggingLevel("info");
  await call(conn.client, "getTask", missing);
  assert.ok(seen.some((m) => m.level === "warning" && m.data.error === "NOT_FOUND"), JSON.stringify(seen));
});
