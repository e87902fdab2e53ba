/**
 * A 2025 client sees no difference: a scripted exchange of the handshake era (initialize, every
 * listing, reads, prompts, completions, tool calls and errors of every kind) is sent to a real
 * `main.ts` over stdio (one line each) and over HTTP (one POST each, in one MCP session), and every
 * reply is compared with the replies recorded in `fixtures/handshake_era_transcript.json`, which were
 * taken from the server before it moved onto the official SDK v2 (main ef69d98).
 *
 * Times, UUIDs and the `Mcp-Session-Id` are replaced by placeholders before comparing. A reply that
 * changes on purpose is re-recorded with
 * `WRITE_TRANSCRIPT=1 deno test --allow-all tests/mcp/handshake_era_transcript_test.ts`, and the
 * fixture's diff shows what a 2025 client would see change.
 */
import assert from "node:assert/strict";
import { freePort, spawnChild } from "../support/processes.ts";
import { mainCommand, startHttpProcess } from "../support/server_process.ts";
import { lines } from "../support/streams.ts";
import { jsonRpcMessages } from "../support/sse.ts";

const FIXTURE = new URL("./fixtures/handshake_era_transcript.json", import.meta.url);
const WRITE = Deno.env.get("WRITE_TRANSCRIPT") === "1";

/** One step: a label and the JSON-RPC message (or raw line) sent. */
type Step = [label: string, message: unknown];

const CLIENT = { name: "transcript", version: "1.0.0" };

/** The exchange after `initialize`; ids are unique, so replies are matched by id. */
function exchange(): Step[] {
  let id = 1;
  const req = (method: string, params?: unknown) => ({
    jsonrpc: "2.0",
    id: ++id,
    method,
    ...(params === undefined ? {} : { params }),
  });
  const tool = (name: string, args: unknown) => req("tools/call", { name, arguments: args });
  const plan = {
    sessionId: "t",
    id: "a",
    name: "Ship",
    completion_criteria: ["tests pass"],
    tasks: [{ id: "a1", name: "Build", constraints: ["no new deps"] }, { id: "a2", name: "Test" }],
  };
  return [
    ["initialized", { jsonrpc: "2.0", method: "notifications/initialized" }],
    ["ping", req("ping")],
    ["tools/list", req("tools/list")],
    ["resources/list (empty store)", req("resources/list")],
    ["resources/templates/list", req("resources/templates/list")],
    ["prompts/list", req("prompts/list")],
    ["createTask", tool("createTask", plan)],
    ["getTask", tool("getTask", { sessionId: "t", id: "a" })],
    ["listTasks", tool("listTasks", { sessionId: "t" })],
    ["startTask", tool("startTask", { sessionId: "t", id: "a" })],
    ["startTask out of order", tool("startTask", { sessionId: "t", id: "a2" })],
    ["completeTask", tool("completeTask", { sessionId: "t", id: "a1", resolution: "built" })],
    ["completeTask unfinished parent", tool("completeTask", { sessionId: "t", id: "a", resolution: "x" })],
    ["get_all_tasks", tool("get_all_tasks", { sessionId: "t" })],
    ["mark_task_as_done", tool("mark_task_as_done", { sessionId: "t", taskIds: ["a2", "zz"] })],
    ["task_history", tool("task_history", { sessionId: "t", limit: 1 })],
    ["getTask unknown", tool("getTask", { sessionId: "t", id: "nope" })],
    ["createTask blank name", tool("createTask", { name: "  " })],
    ["createTask wrong type", tool("createTask", { name: 5 })],
    ["tool arguments not an object", tool("getTask", [1, 2])],
    ["tool arguments absent", req("tools/call", { name: "listTasks" })],
    ["unknown tool", tool("noSuchTool", {})],
    ["tools/call without a name", req("tools/call", { arguments: {} })],
    ["tools/call without params", req("tools/call")],
    ["mem_progress none", tool("mem_progress", { project: "p" })],
    ["mem_progress bad JSON", tool("mem_progress", { project: "p", content: "{" })],
    ["get_recent_works_info", tool("get_recent_works_info", {})],
    ["get_work_by_id unknown", tool("get_work_by_id", { workId: "12345678" })],
    ["resources/list", req("resources/list")],
    ["resources/list bad cursor", req("resources/list", { cursor: "not-ours" })],
    ["resources/read session", req("resources/read", { uri: "checklist://sessions/t" })],
    ["resources/read unknown session", req("resources/read", { uri: "checklist://sessions/none" })],
    ["resources/read unknown work", req("resources/read", { uri: "checklist://works/00000000" })],
    ["resources/read bad work id", req("resources/read", { uri: "checklist://works/abc" })],
    ["resources/read unknown scheme", req("resources/read", { uri: "other://x" })],
    ["resources/read not a URI", req("resources/read", { uri: "not a uri" })],
    ["resources/read without uri", req("resources/read", {})],
    ["resources/read plan view", req("resources/read", { uri: "ui://checklist/plan.html" })],
    ["prompts/get resume", req("prompts/get", { name: "resume", arguments: { sessionId: "t" } })],
    ["prompts/get unknown", req("prompts/get", { name: "nope" })],
    ["prompts/get bad argument", req("prompts/get", { name: "resume", arguments: { sessionId: "" } })],
    [
      "completion of a prompt argument",
      req("completion/complete", {
        ref: { type: "ref/prompt", name: "resume" },
        argument: { name: "sessionId", value: "" },
      }),
    ],
    [
      "completion of a template variable",
      req("completion/complete", {
        ref: { type: "ref/resource", uri: "checklist://sessions/{sessionId}" },
        argument: { name: "sessionId", value: "t" },
      }),
    ],
    [
      "completion of an unknown prompt",
      req("completion/complete", {
        ref: { type: "ref/prompt", name: "nope" },
        argument: { name: "a", value: "" },
      }),
    ],
    [
      "completion of an unknown template",
      req("completion/complete", {
        ref: { type: "ref/resource", uri: "x://{y}" },
        argument: { name: "y", value: "" },
      }),
    ],
    ["logging/setLevel", req("logging/setLevel", { level: "debug" })],
    ["logging/setLevel bad level", req("logging/setLevel", { level: "loud" })],
    ["a failed call after setLevel debug", tool("getTask", { sessionId: "t", id: "nope" })],
    ["unknown method", req("no/such/method")],
    ["resources/subscribe", req("resources/subscribe", { uri: "checklist://sessions/t" })],
    ["string id", { jsonrpc: "2.0", id: "s-1", method: "ping" }],
    ["cancelled notification for nothing", {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 999 },
    }],
    ["deleteTask", tool("deleteTask", { sessionId: "t", id: "a" })],
  ];
}

/** The `initialize` requests: a current one, an older one, and an unknown version. */
function initializes(): Step[] {
  const init = (protocolVersion: string) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: CLIENT },
  });
  return [
    ["initialize 2025-11-25", init("2025-11-25")],
    ["initialize 2024-11-05", init("2024-11-05")],
    ["initialize unknown version", init("1999-01-01")],
  ];
}

/** Placeholders for what differs between runs; a text past 4,000 characters by its length and hash. */
async function normalize(value: unknown): Promise<unknown> {
  const long: string[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (typeof v !== "string" || v.length <= 4000) return v;
    long.push(v);
    return `<long ${long.length - 1}>`;
  })
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\\"ms\\":[0-9.]+/g, '\\"ms\\":0')
    .replace(/"ms":[0-9.]+/g, '"ms":0');
  const digests = await Promise.all(long.map(async (v) => {
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(v)));
    return `<${v.length} characters, sha256 ${
      Array.from(hash.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("")
    }>`;
  }));
  return JSON.parse(text.replace(/<long (\d+)>/g, (_m, i) => digests[Number(i)]!));
}

/** Over stdio: each line written, then every line the server wrote, grouped by the request it answers. */
async function overStdio(initialize: Step, steps: Step[]): Promise<Record<string, unknown>> {
  const cmd = mainCommand(["--stdio"], { LOG_LEVEL: "error" });
  const child = spawnChild(cmd, { stdin: "piped", stdout: "piped" });
  const writer = child.stdin.getWriter();
  const out = lines(child.stdout);
  const encoder = new TextEncoder();
  const send = (message: unknown) =>
    writer.write(encoder.encode((typeof message === "string" ? message : JSON.stringify(message)) + "\n"));
  const next = async () => {
    const line = await out.next();
    if (line.done) throw new Error("stdout ended");
    return JSON.parse(line.value);
  };
  const replies: Record<string, unknown> = {};
  try {
    await send(initialize[1]);
    replies[initialize[0]] = await next();
    for (const [label, message] of steps) {
      await send(message);
      const hasId = typeof message === "object" && message !== null && "id" in message;
      if (!hasId) {
        replies[label] = null;
        continue;
      }
      // Notifications tied to the request (log messages) come before its answer.
      const got: unknown[] = [];
      for (;;) {
        const reply = await next();
        got.push(reply);
        if ("id" in reply) break;
      }
      replies[label] = got.length === 1 ? got[0] : got;
    }
    for (const [label, line] of RAW_LINES) {
      await send(line);
      replies[label] = await next();
    }
  } finally {
    await writer.close().catch(() => {});
    await child.status;
  }
  return await normalize(replies) as Record<string, unknown>;
}

/** Lines that are not a single well-formed request (stdio only: HTTP refuses them before MCP). */
const RAW_LINES: [string, string][] = [
  ["stdio: not JSON", "{nope"],
  ["stdio: a batch", JSON.stringify([{ jsonrpc: "2.0", id: 900, method: "ping" }])],
  ["stdio: not a message", JSON.stringify({ hello: 1 })],
];

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** Over HTTP: one session; each POST's status, content type and messages. */
async function overHttp(initialize: Step, steps: Step[]): Promise<Record<string, unknown>> {
  const port = freePort();
  await using server = await startHttpProcess(
    mainCommand([], { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "error" }),
    { port, stderr: "null" },
  );
  const endpoint = `${server.url}/mcp`;
  const replies: Record<string, unknown> = {};
  const record = async (label: string, response: Response) => {
    const type = response.headers.get("content-type") ?? "";
    const text = await response.text();
    let messages: unknown;
    try {
      messages = jsonRpcMessages(text, type);
    } catch {
      messages = text;
    }
    replies[label] = {
      status: response.status,
      type: type.split(";")[0],
      session: response.headers.has("mcp-session-id"),
      messages,
    };
  };
  const first = await fetch(endpoint, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify(initialize[1]),
  });
  const session = first.headers.get("mcp-session-id") ?? "";
  await record(initialize[0], first);
  const headers = { ...MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
  for (const [label, message] of steps) {
    await record(label, await fetch(endpoint, { method: "POST", headers, body: JSON.stringify(message) }));
  }
  const ping = JSON.stringify({ jsonrpc: "2.0", id: 901, method: "ping" });
  const http: [string, RequestInit][] = [
    ["http: no session id", { method: "POST", headers: MCP_HEADERS, body: ping }],
    ["http: unknown session id", {
      method: "POST",
      headers: { ...headers, "mcp-session-id": "00000000-0000-4000-8000-000000000000" },
      body: ping,
    }],
    ["http: unsupported protocol version header", {
      method: "POST",
      headers: { ...headers, "mcp-protocol-version": "1999-01-01" },
      body: ping,
    }],
    ["http: wrong content type", {
      method: "POST",
      headers: { ...headers, "content-type": "text/plain" },
      body: ping,
    }],
    ["http: accepts no event stream", {
      method: "POST",
      headers: { ...headers, accept: "application/json" },
      body: ping,
    }],
    ["http: not JSON", { method: "POST", headers, body: "{nope" }],
    ["http: not a message", { method: "POST", headers, body: JSON.stringify({ hello: 1 }) }],
    ["http: initialize again in a session", { method: "POST", headers, body: JSON.stringify(initialize[1]) }],
    ["http: DELETE ends the session", { method: "DELETE", headers }],
    ["http: the ended session", { method: "POST", headers, body: ping }],
  ];
  for (const [label, init] of http) await record(label, await fetch(endpoint, init));
  return await normalize(replies) as Record<string, unknown>;
}

async function transcript(): Promise<Record<string, unknown>> {
  const [first, ...others] = initializes();
  const steps = exchange();
  const out: Record<string, unknown> = {
    stdio: await overStdio(first!, steps),
    http: await overHttp(first!, steps),
  };
  // The other versions: just the initialize answer, over stdio.
  for (const step of others) out[step[0]] = (await overStdio(step, []))[step[0]];
  return out;
}

Deno.test("a 2025 client sees the replies recorded before the move to SDK v2, over stdio and HTTP", async () => {
  const got = await transcript();
  if (WRITE) await Deno.writeTextFile(FIXTURE, JSON.stringify(got, null, 2) + "\n");
  const expected = JSON.parse(await Deno.readTextFile(FIXTURE));
  assert.deepEqual(Object.keys(got), Object.keys(expected), "the parts changed");
  for (const part of Object.keys(expected)) {
    const want = expected[part] as Record<string, unknown>;
    const have = got[part] as Record<string, unknown>;
    if ("jsonrpc" in want) {
      assert.deepEqual(have, want, part);
      continue;
    }
    assert.deepEqual(Object.keys(have), Object.keys(want), `${part}: the steps changed`);
    for (const label of Object.keys(want)) assert.deepEqual(have[label], want[label], `${part}: ${label}`);
  }
});
