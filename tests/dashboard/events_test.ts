/** The dashboard's event streams: a change arrives, the cap holds, heartbeats beat, shutdown ends them. */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { LOCAL_CREDENTIAL } from "../../lib/auth/credential.ts";
import { createApp } from "../../lib/http/app.ts";
import { EventHub } from "../../lib/dashboard/server/events.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { ok } from "../support/harness.ts";
import { quietLogger } from "../support/logs.ts";
import { readUntil } from "../support/streams.ts";
import { connectHttp, send, viaApp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";

function appWith(events: { maxStreams?: number; heartbeatMs?: number } = {}) {
  const store = new MemoryStore();
  const log = quietLogger();
  const made = createApp({
    store,
    log,
    makeServer: () => createServer({ store, log, features: [PLAN_VIEW] }),
    events,
  });
  return { ...made, store, [Symbol.asyncDispose]: made.close };
}

Deno.test("a change made through MCP reaches an open event stream as a change event", async () => {
  await using app = appWith();
  const response = await send(app.app, { path: "/events" });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const reader = response.body!.getReader();
  await readUntil(reader, (t) => t.includes("event: ready"));
  await using mcp = await connectHttp("http://127.0.0.1:8585/mcp", { fetch: viaApp(app.app) });
  await ok(mcp.client, "createTask", { sessionId: "s", name: "One" });
  const text = await readUntil(reader, (t) => t.includes("event: change"));
  assert.match(text, /event: change\ndata: \{"seq":\d+\}/);
  await reader.cancel();
});

Deno.test("past the cap on open event streams the same caller's oldest stream ends to admit the next", async () => {
  // Without access control every caller is the one local credential, whose share is the whole cap.
  await using app = appWith({ maxStreams: 2 });
  const readers = [];
  for (let i = 0; i < 2; i++) {
    const response = await send(app.app, { path: "/events" });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    await readUntil(reader, (t) => t.includes("event: ready"));
    readers.push(reader);
  }
  const third = await send(app.app, { path: "/events" });
  assert.equal(third.status, 200);
  await readUntil(readers[0]!, () => false); // the oldest ended
  const reader = third.body!.getReader();
  await readUntil(reader, (t) => t.includes("event: ready"));
  await reader.cancel();
  await readers[1]!.cancel();
});

Deno.test("an open event stream receives heartbeats", async () => {
  await using app = appWith({ heartbeatMs: 30 });
  const response = await send(app.app, { path: "/events" });
  const reader = response.body!.getReader();
  const text = await readUntil(reader, (t) => (t.match(/: ping/g) ?? []).length >= 2);
  assert.ok(text.includes(": ping\n\n"));
  await reader.cancel();
});

Deno.test("closing the app ends every open event stream", async () => {
  const app = appWith();
  const readers = [];
  for (let i = 0; i < 3; i++) {
    const reader = (await send(app.app, { path: "/events" })).body!.getReader();
    await readUntil(reader, (t) => t.includes("event: ready"));
    readers.push(reader);
  }
  await app.close();
  for (const reader of readers) {
    await readUntil(reader, () => false).catch((e) => assert.fail(e));
  }
  const after = await send(app.app, { path: "/events" });
  assert.equal(after.status, 503);
  await after.body?.cancel();
});

Deno.test("a server process with open dashboards stops at SIGTERM at once, ending their streams", async () => {
  const server = await spawnServer();
  const readers = [];
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`${server.url}/events`);
    const reader = response.body!.getReader();
    await readUntil(reader, (t) => t.includes("event: ready"));
    readers.push(reader);
  }
  const started = performance.now();
  const { code } = await server.stop();
  assert.equal(code, 0);
  assert.ok(performance.now() - started < 5000, "stopped without waiting for the kill");
  for (const reader of readers) await readUntil(reader, () => false).catch(() => {});
});

Deno.test("a stream ended before its body has started still ends, without a ready event", async () => {
  const hub = new EventHub({ log: quietLogger() });
  const app = new Hono();
  app.get("/events", (c) => {
    const response = hub.open(c, { credential: LOCAL_CREDENTIAL, namespace: "default" });
    hub.endWhere(() => true); // as a revocation found right away would
    return response;
  });
  const response = await app.request("http://127.0.0.1/events");
  assert.equal(response.status, 200);
  const text = await readUntil(response.body!.getReader(), () => false, 1000);
  assert.doesNotMatch(text, /event: ready/);
  assert.equal(hub.size, 0);
  hub.close();
});
