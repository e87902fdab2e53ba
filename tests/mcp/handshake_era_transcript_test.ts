/**
 * A 2025 client sees no difference: a scripted exchange of the handshake era (initialize, every
 * listing, reads, prompts, completions, tool calls and errors of every kind) is sent to a real
 * `main.ts` over stdio (one line each) and over HTTP (one POST each, in one MCP session), and every
 * reply is compared with the replies recorded in `fixtures/handshake_era_transcript.json`, which were
 * taken from the server before it moved onto the official SDK v2 (main ef69d98). One change since was
 * made by hand, on purpose: `get_recent_works_info`, which takes no arguments, lists its input schema
 * as `{"type":"object","additionalProperties":false}` (issue 36; strict clients refuse an empty
 * `properties`).
 *
 * Times, UUIDs and the `Mcp-Session-Id` are replaced by placeholders before comparing. The one
 * difference allowed is {@link ALLOWED}'s, each with why. A reply that changes on purpose is
 * re-recorded with
 * `WRITE_TRANSCRIPT=1 deno test --allow-all tests/mcp/handshake_era_transcript_test.ts`, and the
 * fixture's diff shows what a 2025 client would see change.
 */
import assert from "node:assert/strict";
import { isDeepStrictEqual as equal } from "node:util";
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
    ["resources/subscribe", req("resources/subscribe", { uri: "checklist://sessions/elsewhere" })],
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

/** A recorded reply as it reads now, under one documented difference. */
type Change = (recorded: Record<string, unknown>, step: string) => Record<string, unknown>;

const NOT_FOUND_URIS: Record<string, string> = {
  "resources/read unknown session": "checklist://sessions/none",
  "resources/read unknown work": "checklist://works/00000000",
  "resources/read unknown scheme": "other://x",
};

/**
 * The documented differences: the steps each applies to, why, and the recorded reply as it reads
 * now. Nothing else may differ.
 */
const ALLOWED: { steps: readonly string[]; why: string; now: Change }[] = [
  {
    steps: Object.keys(NOT_FOUND_URIS),
    why: "A resource that does not exist is -32602 with data { uri } (MCP 2026-07-28 requires it; the SDK " +
      "v2 answers it so in every era, and the specification asks clients to accept -32002 and -32602 alike)",
    now: (recorded, step) => {
      const error = recorded.error as { message: string };
      const message = error.message.replace("-32002", "-32602");
      return { ...recorded, error: { code: -32602, message, data: { uri: NOT_FOUND_URIS[step] } } };
    },
  },
  {
    steps: ["initialize 2025-11-25", "initialize 2024-11-05", "initialize unknown version"],
    why: "The handshake era gained resources/subscribe (a lead hears its workers' changes), so " +
      "initialize declares resources.subscribe; nothing else in the answer moved",
    now: (recorded) => {
      const result = recorded.result as { capabilities: { resources: Record<string, unknown> } };
      const capabilities = {
        ...result.capabilities,
        resources: { ...result.capabilities.resources, subscribe: true },
      };
      return { ...recorded, result: { ...result, capabilities } };
    },
  },
  {
    steps: ["resources/subscribe"],
    why: "resources/subscribe is answered (it was -32601 Method not found); see the rule above",
    now: (recorded) => ({ jsonrpc: "2.0", id: recorded.id, result: {} }),
  },
];

/** The recorded reply with the documented differences applied (HTTP replies carry it in `messages`). */
function allowed(step: string, recorded: unknown): unknown {
  const rule = ALLOWED.find((r) => r.steps.includes(step));
  if (!rule) return recorded;
  const reply = recorded as Record<string, unknown>;
  if (Array.isArray(reply.messages)) {
    return { ...reply, messages: reply.messages.map((m) => rule.now(m as Record<string, unknown>, step)) };
  }
  return rule.now(reply, step);
}

/**
 * Placeholders for what differs between runs. The plan view's document is one: it is built from
 * lib/plan_view (tests/plan_view test it), so only its place in the reply is compared.
 */
function normalize(value: unknown): unknown {
  const text = JSON.stringify(
    value,
    (_key, v) => typeof v === "string" && v.startsWith("<!doctype html") ? "<the plan view document>" : v,
  )
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\\"ms\\":[0-9.]+/g, '\\"ms\\":0')
    .replace(/"ms":[0-9.]+/g, '"ms":0');
  return JSON.parse(text);
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
  return normalize(replies) as Record<string, unknown>;
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
  return normalize(replies) as Record<string, unknown>;
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
  const changed: string[] = [];
  for (const part of Object.keys(expected)) {
    const want = expected[part] as Record<string, unknown>;
    const have = got[part] as Record<string, unknown>;
    if ("jsonrpc" in want) {
      if (!equal(have, allowed(part, want))) changed.push(part);
      continue;
    }
    assert.deepEqual(Object.keys(have), Object.keys(want), `${part}: the steps changed`);
    for (const label of Object.keys(want)) {
      if (!equal(have[label], allowed(label, want[label]))) changed.push(`${part}: ${label}`);
    }
  }
  const details = changed.map((label) => {
    const [part, step] = label.split(": ", 2) as [string, string | undefined];
    const pick = (t: Record<string, unknown>) =>
      step === undefined ? t[part] : (t[part] as Record<string, unknown>)[step];
    return `${label}\n  recorded: ${JSON.stringify(pick(expected)).slice(0, 600)}\n  now:      ${
      JSON.stringify(pick(got)).slice(0, 600)
    }`;
  });
  assert.deepEqual(changed, [], `replies a 2025 client would see change:\n${details.join("\n")}`);
});
