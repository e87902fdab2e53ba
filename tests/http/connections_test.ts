/**
 * Bounded connections: a cap on live connections (least recently used closed first), idle expiry,
 * DELETE, and close(). The clock is passed in, so expiry is tested without waiting.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { connectHttp, ENDPOINT, makeApp, openRawConnection, post, send, viaApp } from "../support/http.ts";
import { recordingLogger } from "../support/logs.ts";
import { messagesOf } from "../support/sse.ts";
import { ConnectionPool } from "../../lib/mcp/connections.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { WebStandardStreamableHTTPServerTransport } from "../../lib/mcp/sdk.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";

async function pingStatus(app: Hono, connection: string): Promise<number> {
  const response = await post(app, { jsonrpc: "2.0", id: 1, method: "ping" }, {
    "mcp-session-id": connection,
  });
  if (response.status === 200) {
    const [reply] = await messagesOf(response);
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 1, result: {} });
  } else {
    await response.body?.cancel();
  }
  return response.status;
}

Deno.test("a full pool closes the least recently used connection to admit a new one", async () => {
  await using app = makeApp({ maxConnections: 2 });
  const first = await openRawConnection(app.app);
  const second = await openRawConnection(app.app);
  assert.equal(await pingStatus(app.app, first), 200); // first is now the most recently used
  const third = await openRawConnection(app.app);
  assert.equal(await pingStatus(app.app, second), 404, "the least recently used connection was closed");
  assert.equal(await pingStatus(app.app, first), 200);
  assert.equal(await pingStatus(app.app, third), 200);
});

Deno.test("a connection idle longer than the limit expires; use keeps it alive", async () => {
  let now = 1_000_000;
  const minute = 60_000;
  await using app = makeApp({ connectionIdleMinutes: 30 }, { now: () => now });
  const idle = await openRawConnection(app.app);
  const busy = await openRawConnection(app.app);
  now += 29 * minute;
  assert.equal(await pingStatus(app.app, busy), 200);
  now += 2 * minute; // idle: 31 minutes since its last request; busy: 2 minutes
  assert.equal(await pingStatus(app.app, idle), 404);
  assert.equal(await pingStatus(app.app, busy), 200);
  now += 30 * minute + 1;
  assert.equal(await pingStatus(app.app, busy), 404);
});

Deno.test("the 404 for a lost connection tells the client to initialize again", async () => {
  await using app = makeApp();
  const response = await post(app.app, { jsonrpc: "2.0", id: 1, method: "ping" }, {
    "mcp-session-id": "gone",
  });
  assert.equal(response.status, 404);
  assert.match((await response.json()).error.message, /Initialize a new session/);
});

Deno.test("DELETE ends a connection", async (t) => {
  await using app = makeApp();

  await t.step("from the SDK client (terminateSession)", async () => {
    await using handle = await connectHttp(ENDPOINT, { fetch: viaApp(app.app) });
    const connection = handle.transport.sessionId;
    assert.ok(connection);
    assert.equal(await pingStatus(app.app, connection), 200);
    await handle.transport.terminateSession();
    assert.equal(await pingStatus(app.app, connection), 404);
  });

  await t.step("as a raw request", async () => {
    const connection = await openRawConnection(app.app);
    const response = await send(app.app, { method: "DELETE", headers: { "mcp-session-id": connection } });
    assert.equal(response.status, 200);
    await response.body?.cancel();
    assert.equal(await pingStatus(app.app, connection), 404);
  });
});

Deno.test("close() ends every live connection, open streams included", async () => {
  const app = makeApp();
  const connection = await openRawConnection(app.app);
  const stream = await send(app.app, {
    method: "GET",
    headers: { accept: "text/event-stream", "mcp-session-id": connection },
  });
  assert.equal(stream.status, 200);
  const body = stream.body!.getReader();
  await app.close();
  assert.equal((await body.read()).done, true, "the standalone SSE stream was closed");
  assert.equal(await pingStatus(app.app, connection), 404);
});

Deno.test("the pool logs connections as connections: opened, closed and evicted, with their id", async () => {
  const { log, records } = recordingLogger();
  await using app = makeApp({ maxConnections: 1 }, { log });
  const first = await openRawConnection(app.app);
  const second = await openRawConnection(app.app); // evicts the first
  const response = await send(app.app, { method: "DELETE", headers: { "mcp-session-id": second } });
  await response.body?.cancel();
  const pool = records.filter((r) => r.msg.startsWith("http connection"));
  assert.deepEqual(pool.map((r) => [r.msg, r.connection]), [
    ["http connection opened", first],
    ["http connection evicted: too many live connections", first],
    ["http connection opened", second],
    ["http connection closed", second],
  ]);
  assert.ok(records.every((r) => !("session" in r)), "no log field says session for a connection");
});

Deno.test("a connection is found only in the namespace it was opened in", async () => {
  const { log } = recordingLogger();
  const pool = new ConnectionPool({ max: 5, idleMs: 60_000, log });
  const server = createServer({ store: new MemoryStore(), log, namespace: "team-a", features: [PLAN_VIEW] });
  const transport = new WebStandardStreamableHTTPServerTransport();
  pool.add("c1", { transport, server, namespace: "team-a" });
  assert.equal(pool.use("c1", "team-b"), undefined, "not through another namespace");
  assert.equal(pool.use("c1", "team-a")?.namespace, "team-a");
  assert.equal(pool.use("c1")?.server, server, "without a namespace: any");
  await pool.closeAll();
});
