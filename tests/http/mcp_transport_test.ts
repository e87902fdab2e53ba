/**
 * Our Streamable HTTP transport (lib/http/mcp_transport.ts): each rule it keeps from the SDK's
 * transport, through the Hono app with raw requests, through the real listener with the SDK's own
 * client, and on the transport alone where the app never lets a request through (a wrong session).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
// @ts-types="@modelcontextprotocol/sdk/shared/mediaType"
import { isJsonContentType as sdkIsJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { createApp } from "../../lib/http/app.ts";
import { isJsonContentType, MAX_BATCH_MESSAGES, McpHttpTransport } from "../../lib/http/mcp_transport.ts";
import { serveHttp } from "../../lib/http/serve.ts";
import type { ProtocolServer } from "../../lib/mcp/protocol_server.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../lib/mcp/request_schemas.ts";
import type { JSONRPCMessage } from "../../lib/mcp/sdk.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { call, ok } from "../support/harness.ts";
import {
  connectHttp,
  initializeBody,
  LoggingMessageNotificationSchema,
  MCP_HEADERS,
  openRawConnection,
  post,
  send,
} from "../support/http.ts";
import { quietLogger } from "../support/logs.ts";
import { messagesOf, readSse, type SseEvent } from "../support/sse.ts";
import { withTimeout } from "../support/time.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

/** An app whose MCP servers the test can reach (to send what a server sends unasked). */
function appWithServers(config: { stateless?: boolean } = {}) {
  const store = new MemoryStore();
  const log = quietLogger();
  const servers: ProtocolServer[] = [];
  const { app, close } = createApp({
    store,
    log,
    config,
    makeServer: (namespace, access) => {
      const server = createServer({ store, log, namespace, access });
      servers.push(server);
      return server;
    },
  });
  return { app, servers, close, [Symbol.asyncDispose]: close };
}

/** A transport with its server connected, for requests the app would not pass on. */
async function connectedTransport(options: ConstructorParameters<typeof McpHttpTransport>[0] = {}) {
  const transport = new McpHttpTransport(options);
  const server = createServer({ store: new MemoryStore(), log: quietLogger() });
  await server.connect(transport);
  return { transport, server };
}

/** A transport with nothing connected: the test plays the server. */
async function bareTransport(options: ConstructorParameters<typeof McpHttpTransport>[0] = {}) {
  const transport = new McpHttpTransport(options);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => void received.push(message);
  await transport.start();
  return { transport, received };
}

/** Initializes `transport` as a server would answer it. */
async function initialize(transport: McpHttpTransport): Promise<void> {
  const init = await transport.handleRequest(request("POST", MCP_HEADERS, initializeBody()), {
    parsedBody: initializeBody(),
  });
  await transport.send({ jsonrpc: "2.0", id: 1, result: {} } as JSONRPCMessage);
  await init.text();
}

function request(method: string, headers: Record<string, string> = {}, body?: unknown): Request {
  return new Request("http://127.0.0.1:8585/mcp", {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function assertRefused(response: Response, status: number, code: number, message: string) {
  assert.equal(response.status, status);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.deepEqual(await response.json(), { jsonrpc: "2.0", id: null, error: { code, message } });
}

const ping = (id: number | string) => ({ jsonrpc: "2.0", id, method: "ping" });

/** The next event of an event stream, within 2 s. */
async function nextEvent(events: AsyncGenerator<SseEvent>, what: string): Promise<SseEvent> {
  const next = await withTimeout(events.next(), 2000, what);
  assert.equal(next.done, false, `${what}: the stream ended`);
  return next.value as SseEvent;
}

Deno.test("POST: Accept must list both application/json and text/event-stream (406)", async () => {
  await using app = appWithServers();
  for (const accept of ["application/json", "text/event-stream", "*/*"]) {
    await assertRefused(
      await post(app.app, initializeBody(), { accept }),
      406,
      -32000,
      "Not Acceptable: Client must accept both application/json and text/event-stream",
    );
  }
});

Deno.test("POST: Content-Type must be application/json as a parsed media type (415)", async () => {
  await using app = appWithServers();
  for (const type of ["text/plain", "text/plain; a=application/json", "application/json, text/plain"]) {
    await assertRefused(
      await post(app.app, initializeBody(), { "content-type": type }),
      415,
      -32000,
      "Unsupported Media Type: Content-Type must be application/json",
    );
  }
  const accepted = await post(app.app, initializeBody(), {
    "content-type": "Application/JSON; charset=utf-8",
  });
  assert.equal(accepted.status, 200);
  await accepted.body?.cancel();
});

Deno.test("Content-Type: our media-type check answers as the SDK's over arbitrary headers", () => {
  // Found by this property once: an unterminated quote makes the header malformed, so its comma counts.
  for (
    const header of [
      'application/json;",',
      'application/json; charset="a,b"',
      "application/json, text/plain",
      "application/json;=,",
      "application/json; charset=utf-8",
    ]
  ) {
    assert.equal(isJsonContentType(header), sdkIsJsonContentType(header), header);
  }
  const piece = fc.constantFrom(
    "application/json",
    "APPLICATION/Json",
    "text/plain",
    "application/jsonx",
    ";",
    ",",
    " ",
    "=",
    '"',
    "\\",
    "charset",
    "utf-8",
    "a=application/json",
    "\t",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 6 }).map((parts) => parts.join("")), (header) => {
      // Headers carry no leading or trailing whitespace (Fetch normalizes them).
      const value = header.trim();
      assert.equal(isJsonContentType(value === "" ? null : value), sdkIsJsonContentType(value), value);
    }),
    { numRuns: fuzzRuns(3000), seed: FUZZ_SEED },
  );
});

Deno.test("POST of only notifications or responses: 202 with no body", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  const headers = { "mcp-session-id": id };
  const notified = await post(app.app, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
  assert.equal(notified.status, 202);
  assert.equal(notified.body, null);
  assert.equal(notified.headers.get("content-type"), null);
  const batch = await post(app.app, [
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 7, result: {} },
  ], headers);
  assert.equal(batch.status, 202);
  assert.equal(await batch.text(), "");
});

Deno.test("POST of a request: an event stream with the session id, its answer framed as event: message", async () => {
  await using app = appWithServers();
  const init = await post(app.app, initializeBody());
  assert.equal(init.status, 200);
  const id = init.headers.get("mcp-session-id");
  assert.match(id ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(init.headers.get("content-type"), "text/event-stream");
  assert.equal(init.headers.get("cache-control"), "no-cache, no-transform");
  assert.equal(init.headers.get("x-accel-buffering"), "no");
  const text = await init.text();
  assert.match(text, /^event: message\ndata: \{"result":\{"protocolVersion":"2025-11-25",.*\}\n\n$/);

  const pong = await post(app.app, ping(2), { "mcp-session-id": id! });
  assert.equal(pong.headers.get("mcp-session-id"), id);
  assert.equal(await pong.text(), 'event: message\ndata: {"result":{},"jsonrpc":"2.0","id":2}\n\n');
});

Deno.test("stateless: the event stream carries no session id", async () => {
  await using app = appWithServers({ stateless: true });
  const init = await post(app.app, initializeBody());
  assert.equal(init.headers.get("content-type"), "text/event-stream");
  assert.equal(init.headers.get("mcp-session-id"), null);
  assert.equal((await messagesOf(init))[0]!.id, 1);
});

Deno.test("a batch of requests: one stream carries every answer and ends after the last", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  const response = await post(app.app, [ping("a"), ping("b"), { jsonrpc: "2.0", id: "c", method: "nope" }], {
    "mcp-session-id": id,
  });
  assert.equal(response.status, 200);
  const messages = await withTimeout(messagesOf(response), 2000, "the batch's stream ends");
  assert.deepEqual(messages.map((m) => m.id).sort(), ["a", "b", "c"]);
  assert.equal((messages.find((m) => m.id === "c")!.error as { code: number }).code, -32601);
});

Deno.test(`a batch of more than ${MAX_BATCH_MESSAGES} messages is refused (400, -32600)`, async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  const many = Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => ping(i));
  await assertRefused(
    await post(app.app, many, { "mcp-session-id": id }),
    400,
    -32600,
    `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages`,
  );
  const most = await post(app.app, many.slice(1), { "mcp-session-id": id });
  assert.equal(most.status, 200);
  assert.equal((await messagesOf(most)).length, MAX_BATCH_MESSAGES);
});

Deno.test("initialize on an initialized session is refused (400, -32600)", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  await assertRefused(
    await post(app.app, initializeBody(2), { "mcp-session-id": id }),
    400,
    -32600,
    "Invalid Request: Server already initialized",
  );
  await assertRefused(
    await post(app.app, [initializeBody(3), ping(4)], { "mcp-session-id": id }),
    400,
    -32600,
    "Invalid Request: Server already initialized",
  );
});

Deno.test("initialize in a batch with anything else is refused (400, -32600)", async () => {
  await using app = appWithServers({ stateless: true });
  await assertRefused(
    await post(app.app, [initializeBody(1), ping(2)]),
    400,
    -32600,
    "Invalid Request: Only one initialization request is allowed",
  );
});

Deno.test("after initialize: an unsupported Mcp-Protocol-Version is refused (400, -32000)", async () => {
  const expected = `Bad Request: Unsupported protocol version: 1999-01-01 (supported versions: ${
    SUPPORTED_PROTOCOL_VERSIONS.join(", ")
  })`;
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  const headers = { "mcp-session-id": id, "mcp-protocol-version": "1999-01-01" };
  await assertRefused(await post(app.app, ping(2), headers), 400, -32000, expected);
  await assertRefused(
    await send(app.app, { method: "GET", headers: { ...headers, accept: "text/event-stream" } }),
    400,
    -32000,
    expected,
  );
  await assertRefused(await send(app.app, { method: "DELETE", headers }), 400, -32000, expected);
  const supported = await post(app.app, ping(3), { ...headers, "mcp-protocol-version": "2025-06-18" });
  assert.equal(supported.status, 200);
  await supported.body?.cancel();
  // Stateless too: each request is checked.
  await using alone = appWithServers({ stateless: true });
  await assertRefused(
    await post(alone.app, ping(2), { "mcp-protocol-version": "1999-01-01" }),
    400,
    -32000,
    expected,
  );
});

Deno.test("a session's transport refuses requests before initialize, without or with another session id", async () => {
  const { transport, server } = await connectedTransport({ sessionIdGenerator: () => "s-1" });
  await assertRefused(
    await transport.handleRequest(request("POST", MCP_HEADERS, ping(1)), { parsedBody: ping(1) }),
    400,
    -32000,
    "Bad Request: Server not initialized",
  );
  const init = await transport.handleRequest(request("POST", MCP_HEADERS, initializeBody()), {
    parsedBody: initializeBody(),
  });
  assert.equal(init.headers.get("mcp-session-id"), "s-1");
  await init.body?.cancel();
  await assertRefused(
    await transport.handleRequest(request("POST", MCP_HEADERS, ping(2)), { parsedBody: ping(2) }),
    400,
    -32000,
    "Bad Request: Mcp-Session-Id header is required",
  );
  await assertRefused(
    await transport.handleRequest(request("GET", { accept: "text/event-stream", "mcp-session-id": "s-2" })),
    404,
    -32001,
    "Session not found",
  );
  await assertRefused(
    await transport.handleRequest(request("DELETE", { "mcp-session-id": "s-2" })),
    404,
    -32001,
    "Session not found",
  );
  await server.close();
  await assertRefused(
    await transport.handleRequest(request("DELETE", { "mcp-session-id": "s-1" })),
    404,
    -32001,
    "Session not found",
  );
});

Deno.test("a stateless transport answers one request only", async () => {
  const { transport, server } = await connectedTransport();
  const first = await transport.handleRequest(request("POST", MCP_HEADERS, ping(1)), { parsedBody: ping(1) });
  assert.equal(first.status, 200);
  await first.body?.cancel();
  await assert.rejects(
    transport.handleRequest(request("POST", MCP_HEADERS, ping(2)), { parsedBody: ping(2) }),
    /cannot be reused/,
  );
  await server.close();
});

Deno.test("GET: Accept must list text/event-stream (406); a second standalone stream is a conflict (409)", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  await assertRefused(
    await send(app.app, { method: "GET", headers: { "mcp-session-id": id, accept: "application/json" } }),
    406,
    -32000,
    "Not Acceptable: Client must accept text/event-stream",
  );
  const headers = { "mcp-session-id": id, accept: "text/event-stream" };
  const stream = await send(app.app, { method: "GET", headers });
  assert.equal(stream.status, 200);
  assert.equal(stream.headers.get("content-type"), "text/event-stream");
  assert.equal(stream.headers.get("mcp-session-id"), id);
  await assertRefused(
    await send(app.app, { method: "GET", headers }),
    409,
    -32000,
    "Conflict: Only one SSE stream is allowed per session",
  );
  // Closing it client-side frees the place for the next one.
  await stream.body!.cancel();
  const again = await send(app.app, { method: "GET", headers });
  assert.equal(again.status, 200);
  await again.body!.cancel();
});

Deno.test("the standalone stream carries what the server sends unasked; without it, that is dropped", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  const server = app.servers[0]!;
  const listChanged = { method: "notifications/resources/list_changed" } as const;
  await server.notification(listChanged); // no stream open: dropped, no error
  const stream = await send(app.app, {
    method: "GET",
    headers: { "mcp-session-id": id, accept: "text/event-stream" },
  });
  const events = readSse(stream.body!);
  await server.notification(listChanged);
  const event = await nextEvent(events, "the notification on the GET stream");
  assert.equal(event.event, "message");
  assert.deepEqual(JSON.parse(event.data), { ...listChanged, jsonrpc: "2.0" });
  await assert.rejects(
    server.transport!.send({ jsonrpc: "2.0", id: 99, result: {} }),
    /No connection established for request ID: 99/,
    "a response to no request of this connection's",
  );
  await events.return(undefined);
});

Deno.test("a notification tied to a request goes on that request's stream, ahead of its answer", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  const headers = { "mcp-session-id": id };
  const getStream = await send(app.app, {
    method: "GET",
    headers: { ...headers, accept: "text/event-stream" },
  });
  const call = {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "getTask", arguments: { sessionId: "s", id: "missing" } },
  };
  const messages = await messagesOf(await post(app.app, call, headers));
  assert.deepEqual(messages.map((m) => m.method ?? `answer ${m.id}`), ["notifications/message", "answer 5"]);
  assert.equal((messages[0]!.params as { level: string }).level, "warning");
  // Nothing of it went to the standalone stream.
  await app.close();
  assert.equal(await getStream.text(), "");
});

Deno.test("DELETE ends the session: 200, the connection is forgotten and closed once", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  let closes = 0;
  const server = app.servers[0]!;
  const onclose = server.onclose;
  server.onclose = () => {
    closes++;
    onclose?.();
  };
  const stream = await send(app.app, {
    method: "GET",
    headers: { "mcp-session-id": id, accept: "text/event-stream" },
  });
  const deleted = await send(app.app, { method: "DELETE", headers: { "mcp-session-id": id } });
  assert.equal(deleted.status, 200);
  assert.equal(await deleted.text(), "");
  assert.equal(await withTimeout(stream.text(), 2000, "the GET stream ends"), "");
  assert.equal(closes, 1);
  const after = await post(app.app, ping(3), { "mcp-session-id": id });
  assert.equal(after.status, 404);
  await after.body?.cancel();
});

Deno.test("DELETE calls onsessionclosed with the session id, then closes", async () => {
  const order: string[] = [];
  const { transport } = await bareTransport({
    sessionIdGenerator: () => "s-1",
    onsessionclosed: (id) => void order.push(`closed ${id}`),
  });
  transport.onclose = () => void order.push("onclose");
  await initialize(transport);
  const deleted = await transport.handleRequest(request("DELETE", { "mcp-session-id": "s-1" }));
  assert.equal(deleted.status, 200);
  assert.deepEqual(order, ["closed s-1", "onclose"]);
});

Deno.test("other methods: 405 with Allow", async () => {
  await using app = appWithServers();
  const id = await openRawConnection(app.app);
  for (const method of ["PUT", "PATCH"]) {
    const response = await send(app.app, { method, headers: { "mcp-session-id": id } });
    assert.equal(response.headers.get("allow"), "GET, POST, DELETE");
    await assertRefused(response, 405, -32000, "Method not allowed.");
  }
});

Deno.test("close() ends every open stream and calls onclose once", async () => {
  const { transport, received } = await bareTransport({ sessionIdGenerator: () => "s-1" });
  let closes = 0;
  transport.onclose = () => void closes++;
  await initialize(transport);
  const headers = { "mcp-session-id": "s-1" };
  const get = await transport.handleRequest(request("GET", { ...headers, accept: "text/event-stream" }));
  // A request never answered: its stream stays open until the close.
  const post = await transport.handleRequest(request("POST", { ...MCP_HEADERS, ...headers }, ping(9)), {
    parsedBody: ping(9),
  });
  assert.deepEqual(received.at(-1), ping(9));
  await transport.close();
  await transport.close();
  assert.equal(closes, 1);
  assert.equal(await withTimeout(get.text(), 2000, "the GET stream ends"), "");
  assert.equal(await withTimeout(post.text(), 2000, "the POST stream ends"), "");
  await transport.send({ jsonrpc: "2.0", id: 9, result: {} }); // too late: nowhere to go, no error
});

Deno.test("open streams get a keep-alive comment at the interval", async () => {
  const { transport, server } = await connectedTransport({
    sessionIdGenerator: () => "s-1",
    keepAliveMs: 20,
  });
  const init = await transport.handleRequest(request("POST", MCP_HEADERS, initializeBody()), {
    parsedBody: initializeBody(),
  });
  await init.body?.cancel();
  const get = await transport.handleRequest(
    request("GET", { "mcp-session-id": "s-1", accept: "text/event-stream" }),
  );
  const reader = get.body!.getReader();
  const { value } = await withTimeout(reader.read(), 2000, "a keep-alive");
  assert.equal(new TextDecoder().decode(value), ": keepalive\n\n");
  await reader.cancel();
  await server.close();
});

Deno.test("an idle connection holds no timer: the keep-alive stops once no stream is open", async () => {
  // Counts the intervals the transport arms and clears (the platform's timers, observed, not replaced).
  const armed = new Set<unknown>();
  const { setInterval: arm, clearInterval: clear } = globalThis;
  globalThis.setInterval = ((...args: Parameters<typeof arm>) => {
    const id = arm(...args);
    armed.add(id);
    return id;
  }) as typeof arm;
  globalThis.clearInterval = ((id: Parameters<typeof clear>[0]) => {
    armed.delete(id);
    clear(id);
  }) as typeof clear;
  try {
    const { transport } = await bareTransport({ sessionIdGenerator: () => "s-1", keepAliveMs: 10 });
    await initialize(transport); // its stream opened and ended
    assert.equal(armed.size, 1, "armed while the stream was open, and kept for the next request");
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(armed.size, 0, "an idle tick disarmed it, with the connection still open");
    await transport.close();
  } finally {
    globalThis.setInterval = arm;
    globalThis.clearInterval = clear;
  }
});

Deno.test("a client that leaves before its answer: its stream ends, the next request is answered", async () => {
  const { transport } = await bareTransport({ sessionIdGenerator: () => "s-1" });
  await initialize(transport);
  const headers = { ...MCP_HEADERS, "mcp-session-id": "s-1" };
  const left = await transport.handleRequest(request("POST", headers, ping(2)), { parsedBody: ping(2) });
  await left.body!.cancel(); // before the answer is sent
  const log = {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: "x" },
  } as const;
  await transport.send(log, { relatedRequestId: 2 }); // dropped: nobody listens
  await assert.rejects(
    transport.send({ jsonrpc: "2.0", id: 2, result: {} }),
    /No connection established for request ID: 2/,
    "an answer that cannot be delivered is reported to the sender",
  );
  const next = await transport.handleRequest(request("POST", headers, ping(3)), { parsedBody: ping(3) });
  await transport.send(log, { relatedRequestId: 3 });
  await transport.send({ jsonrpc: "2.0", id: 3, result: {} });
  assert.deepEqual((await messagesOf(next)).map((m) => m.method ?? m.id), ["notifications/message", 3]);
  await transport.close();
});

Deno.test("over a real socket: a client that drops its GET stream frees it, with no unhandled rejection", async () => {
  await using app = appWithServers();
  const listener = await serveHttp({
    hostname: "127.0.0.1",
    port: 0,
    fetch: app.app.fetch,
    log: quietLogger(),
  });
  try {
    const url = `http://127.0.0.1:${listener.port}/mcp`;
    const init = await fetch(url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify(initializeBody()),
    });
    const id = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const headers = { "mcp-session-id": id, accept: "text/event-stream" };
    const controller = new AbortController();
    const stream = await fetch(url, { headers, signal: controller.signal });
    assert.equal(stream.status, 200);
    controller.abort();
    await stream.body?.cancel().catch(() => {});
    let status = 409;
    for (let i = 0; i < 100 && status === 409; i++) {
      const again = await fetch(url, { headers });
      status = again.status;
      await again.body?.cancel();
      if (status === 409) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(status, 200, "the dropped stream's place is free again");
  } finally {
    await app.close();
    await listener.shutdown();
  }
});

for (const stateless of [false, true]) {
  const mode = stateless ? "stateless" : "stateful";
  Deno.test(`the SDK's client works end to end over a real socket (${mode}), log notifications on the request's stream`, async () => {
    await using app = appWithServers({ stateless });
    const listener = await serveHttp({
      hostname: "127.0.0.1",
      port: 0,
      fetch: app.app.fetch,
      log: quietLogger(),
    });
    try {
      await using handle = await connectHttp(`http://127.0.0.1:${listener.port}/mcp`);
      assert.equal(handle.transport.sessionId === undefined, stateless);
      const seen: unknown[] = [];
      handle.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(n.params));
      const { task } = await ok<{ task: { id: string } }>(handle.client, "createTask", {
        sessionId: "e2e",
        name: "Ship",
        tasks: [{ name: "Build" }],
      });
      await ok(handle.client, "startTask", { sessionId: "e2e", id: task.id });
      assert.equal(seen.length, 0);
      const failed = await call(handle.client, "getTask", { sessionId: "e2e", id: "missing" });
      assert.equal(failed.isError, true);
      // It arrived before the call returned: on the request's own stream, not the standalone one.
      assert.equal(seen.length, 1, JSON.stringify(seen));
      assert.equal((seen[0] as { level: string }).level, "warning");
      assert.ok((await handle.client.listTools()).tools.length > 0);
    } finally {
      await app.close();
      await listener.shutdown();
    }
  });
}
