/**
 * docs/protocol.md "Protocol eras": one server, both eras. The SDK v2 client connects pinned to 2026-07-28,
 * on `auto` and on the handshake, over stdio (the SDK's own stdio transport, sibling probe included),
 * HTTP and in process, and gets the same tools, instructions and replies in each; what only the
 * modern era has (`server/discover`, `resultType`, caching hints, the unsupported-version error,
 * per-request log levels, the standard headers) is checked on the wire.
 */
import assert from "node:assert/strict";
import { INSTRUCTIONS } from "../../lib/mcp/server.ts";
import { call, connectInMemory, type Connection } from "../support/harness.ts";
import { makeApp, modernRequest, send } from "../support/http.ts";
import { mainArgs, spawnServer } from "../support/server_process.ts";
import { serverEnv } from "../support/env.ts";
import { ROOT } from "../support/paths.ts";
import { messagesOf } from "../support/sse.ts";
import {
  type ClientEra,
  newClient,
  StdioClientTransport,
  StreamableHTTPClientTransport,
} from "../support/sdk_client.ts";

type Json = Record<string, unknown>;

const MODERN = "2026-07-28";

/** A 2026-07-28 request over HTTP, with its standard headers (overridable) and `_meta` envelope. */
function modern(
  app: Parameters<typeof send>[0],
  method: string,
  params: Json = {},
  options: { headers?: Record<string, string>; meta?: Json; id?: number } = {},
): Promise<Response> {
  const request = modernRequest(method, params, options);
  return send(app, {
    method: "POST",
    headers: { ...request.headers, ...options.headers },
    body: request.body,
  });
}

/** The client of `era` over the SDK's own stdio transport (a real child process). */
async function stdioClient(era: ClientEra): Promise<Connection> {
  const client = newClient(era);
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: mainArgs(["--stdio"]),
      env: serverEnv({ LOG_LEVEL: "error" }),
      cwd: ROOT,
      stderr: "ignore",
    }),
  );
  const close = () => client.close();
  return { client, close, [Symbol.asyncDispose]: close };
}

/** The client of `era` over HTTP to a real process. */
async function httpClient(url: string, era: ClientEra): Promise<Connection> {
  const client = newClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const close = () => client.close();
  return { client, close, [Symbol.asyncDispose]: close };
}

/**
 * A short run of tools in session `sessionId`, its replies with times blanked and the era's envelope
 * (2026-07-28 stamps the server's identity on every result's `_meta`) taken off.
 */
async function run(conn: Connection, sessionId: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const step = async (tool: string, args: Json) => {
    const result = await call(conn.client, tool, { sessionId, ...args }) as unknown as Json & {
      _meta?: Json;
    };
    const { "io.modelcontextprotocol/serverInfo": _envelope, ...meta } = result._meta ?? {};
    const reply = { ...result, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
    if (Object.keys(meta).length === 0) delete reply._meta;
    const text = JSON.stringify(reply).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>")
      .replaceAll(sessionId, "<session>");
    out.push(JSON.parse(text));
  };
  await step("createTask", {
    id: "a",
    name: "A",
    tasks: [{ id: "a1", name: "A1" }, { id: "a2", name: "A2" }],
  });
  await step("startTask", { id: "a" });
  await step("startTask", { id: "a2" });
  await step("completeTask", { id: "a1", resolution: "done" });
  await step("getTask", { id: "missing" });
  await step("createTask", { name: " " });
  await step("get_all_tasks", {});
  await step("mem_progress", { project: "p", content: "{" });
  return out;
}

Deno.test("every era and transport gets the same tools, instructions and replies", async (t) => {
  await using http = await spawnServer({ env: { LOG_LEVEL: "error" } });
  const cases: [string, () => Promise<Connection>, "modern" | "legacy"][] = [
    ["in process, handshake", () => connectInMemory(), "legacy"],
    ["in process, 2026-07-28", () => connectInMemory({ era: "modern" }), "modern"],
    ["stdio, pinned to 2026-07-28 (the SDK's stdio transport)", () => stdioClient("modern"), "modern"],
    ["stdio, auto", () => stdioClient("auto"), "modern"],
    ["stdio, handshake", () => stdioClient("legacy"), "legacy"],
    ["HTTP, pinned to 2026-07-28", () => httpClient(http.url, "modern"), "modern"],
    ["HTTP, auto", () => httpClient(http.url, "auto"), "modern"],
    ["HTTP, handshake", () => httpClient(http.url, "legacy"), "legacy"],
  ];
  let reference: { tools: unknown; replies: unknown[] } | undefined;
  for (const [label, connect, era] of cases) {
    await t.step(label, async () => {
      await using conn = await connect();
      assert.equal(conn.client.getProtocolEra(), era);
      assert.equal(conn.client.getInstructions(), INSTRUCTIONS);
      const tools = (await conn.client.listTools()).tools;
      // Each run its own session: the HTTP and stdio cases share a server or a store.
      const replies = await run(conn, `eras-${cases.findIndex((c) => c[0] === label)}`);
      reference ??= { tools, replies };
      assert.deepEqual(tools, reference.tools, "the same tools");
      assert.deepEqual(replies, reference.replies, "the same replies");
    });
  }
});

Deno.test("server/discover answers 2026-07-28, the capabilities, and the instructions initialize gives", async () => {
  await using app = makeApp();
  const response = await modern(app.app, "server/discover");
  assert.equal(response.status, 200);
  const [reply] = await messagesOf(response);
  const result = (reply as { result: Json }).result;
  assert.ok((result.supportedVersions as string[]).includes(MODERN));
  assert.equal(result.instructions, INSTRUCTIONS);
  assert.equal(result.resultType, "complete");
  const capabilities = result.capabilities as Json;
  for (const family of ["tools", "resources", "prompts", "completions", "logging"]) {
    assert.ok(family in capabilities, `declares ${family}`);
  }
});

Deno.test("2026-07-28 results carry resultType; the four lists carry ttlMs and cacheScope", async (t) => {
  await using app = makeApp();
  for (const method of ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]) {
    await t.step(method, async () => {
      const [reply] = await messagesOf(await modern(app.app, method));
      const result = (reply as { result: Json }).result;
      assert.equal(result.resultType, "complete");
      assert.equal(typeof result.ttlMs, "number");
      assert.ok(["private", "public"].includes(result.cacheScope as string), String(result.cacheScope));
    });
  }
  await t.step("tools/call", async () => {
    const [reply] = await messagesOf(
      await modern(app.app, "tools/call", { name: "listTasks", arguments: {} }),
    );
    assert.equal((reply as { result: Json }).result.resultType, "complete");
  });
});

Deno.test("a version the server does not speak is the unsupported-version error naming the supported ones, HTTP 400", async () => {
  await using app = makeApp();
  const response = await modern(app.app, "tools/list", {}, {
    headers: { "mcp-protocol-version": "2099-01-01" },
    meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
  });
  assert.equal(response.status, 400);
  const body = await response.json() as { error: { code: number; data: { supported: string[] } } };
  assert.equal(body.error.code, -32022);
  assert.ok(body.error.data.supported.includes(MODERN));
});

Deno.test("the standard headers must agree with the body: a wrong Mcp-Method, Mcp-Name or version is 400", async (t) => {
  await using app = makeApp();
  const cases: [string, Record<string, string>][] = [
    ["Mcp-Method", { "mcp-method": "tools/list" }],
    ["Mcp-Name", { "mcp-name": "getTask" }],
    ["MCP-Protocol-Version", { "mcp-protocol-version": "2025-11-25" }],
  ];
  for (const [header, headers] of cases) {
    await t.step(header, async () => {
      const response = await modern(app.app, "tools/call", { name: "listTasks", arguments: {} }, { headers });
      assert.equal(response.status, 400, header);
      await response.body?.cancel();
    });
  }
  await t.step("the same request with agreeing headers is served", async () => {
    const response = await modern(app.app, "tools/call", { name: "listTasks", arguments: {} });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
});

Deno.test("2026-07-28 log notifications go only to a request whose _meta asks for a level", async () => {
  await using app = makeApp();
  const failing = { name: "getTask", arguments: { id: "nope" } };
  const silent = await messagesOf(await modern(app.app, "tools/call", failing));
  assert.deepEqual(silent.filter((m) => m.method === "notifications/message"), [], "none asked, none sent");
  const asked = await messagesOf(
    await modern(app.app, "tools/call", failing, { meta: { "io.modelcontextprotocol/logLevel": "warning" } }),
  );
  const logs = asked.filter((m) => m.method === "notifications/message");
  assert.equal(logs.length, 1, JSON.stringify(asked));
  assert.equal((logs[0]!.params as Json).level, "warning");
  const above = await messagesOf(
    await modern(app.app, "tools/call", failing, { meta: { "io.modelcontextprotocol/logLevel": "error" } }),
  );
  assert.deepEqual(above.filter((m) => m.method === "notifications/message"), [], "a warning is below error");
});

Deno.test("2026-07-28 requests need no Mcp-Session-Id, and the server sends none", async () => {
  await using app = makeApp();
  const response = await modern(app.app, "tools/call", { name: "createTask", arguments: { name: "x" } });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("mcp-session-id"), null);
  await response.body?.cancel();
});

Deno.test("the maintenance line's client (SDK v1) still connects and works, over HTTP and stdio", async () => {
  const v1 = await import("../support/sdk_v1_client.ts");
  await using http = await spawnServer({ env: { LOG_LEVEL: "error" } });
  const clients = [
    [
      new v1.Client({ name: "v1", version: "0" }),
      new v1.StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)),
    ],
    [
      new v1.Client({ name: "v1", version: "0" }),
      new v1.StdioClientTransport({
        command: Deno.execPath(),
        args: mainArgs(["--stdio"]),
        env: serverEnv({ LOG_LEVEL: "error" }),
        cwd: ROOT,
        stderr: "ignore",
      }),
    ],
  ] as const;
  for (const [client, transport] of clients) {
    await client.connect(transport);
    try {
      assert.equal(client.getInstructions(), INSTRUCTIONS);
      const made = await client.callTool({
        name: "createTask",
        arguments: { sessionId: "v1", name: "From v1" },
      });
      assert.ok(!made.isError, JSON.stringify(made));
      const listed = await client.callTool({ name: "listTasks", arguments: { sessionId: "v1" } });
      assert.match(JSON.stringify(listed.structuredContent), /From v1/);
    } finally {
      await client.close();
    }
  }
});
