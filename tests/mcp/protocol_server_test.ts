/**
 * The server's own JSON-RPC exchange and MCP edges (lib/mcp/protocol_server.ts), which replaced the
 * SDK's `Protocol`, `Server` and `McpServer`: what those did must still hold (cancellation, close,
 * unknown methods, refused params, version negotiation, capabilities, completion and prompt
 * errors), and a bad resource URI is now invalid params.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { ProtocolServer } from "../../lib/mcp/protocol_server.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { quietLogger } from "../support/logs.ts";
import { InMemoryTransport } from "../support/sdk_client.ts";

type Reply = { id: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** A server in memory spoken to in raw JSON-RPC: each request's reply, in order. */
async function exchange(requests: { method: string; params?: unknown }[]): Promise<Reply[]> {
  const server = createServer({ log: quietLogger(), store: new MemoryStore() });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const replies = new Map<number, Reply>();
  let arrived = () => {};
  clientSide.onmessage = (message) => {
    const reply = message as unknown as Reply;
    if (typeof reply.id === "number") replies.set(reply.id, reply);
    arrived();
  };
  await server.connect(serverSide);
  await clientSide.start();
  try {
    for (const [i, request] of requests.entries()) {
      await clientSide.send({ jsonrpc: "2.0", id: i, ...request } as Parameters<typeof clientSide.send>[0]);
      while (!replies.has(i)) await new Promise<void>((resolve) => (arrived = resolve));
    }
    return requests.map((_, i) => replies.get(i)!);
  } finally {
    await clientSide.close();
    await server.close();
  }
}

const initialize = (protocolVersion: string) => ({
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "0" } },
});

Deno.test("initialize answers a supported protocol version with itself and any other with the latest", async () => {
  const [older, unknown] = await exchange([initialize("2025-06-18"), initialize("1999-01-01")]);
  assert.equal(older!.result!.protocolVersion, "2025-06-18");
  assert.equal(unknown!.result!.protocolVersion, "2025-11-25");
  assert.deepEqual(older!.result!.serverInfo, { name: "checklist-mcp", version: "0.1.0" });
  assert.match(String(older!.result!.instructions), /^Task tree and handoff server/);
  // The capabilities the SDK's McpServer declared for the same registrations.
  assert.deepEqual(older!.result!.capabilities, {
    tools: { listChanged: true },
    logging: {},
    resources: { listChanged: true },
    completions: {},
    prompts: { listChanged: true },
  });
});

Deno.test("a resource URI that is not a URI is invalid params, not an internal error", async () => {
  const [, reply] = await exchange([initialize("2025-11-25"), {
    method: "resources/read",
    params: { uri: "not a uri" },
  }]);
  assert.equal(reply!.error?.code, -32602);
  assert.match(reply!.error!.message, /Invalid resource URI "not a uri"/);
});

Deno.test("resources/read of an unknown URI, and completion of unknown references, are invalid params", async () => {
  const [, read, template, prompt] = await exchange([
    initialize("2025-11-25"),
    { method: "resources/read", params: { uri: "checklist://unknown/x" } },
    {
      method: "completion/complete",
      params: { ref: { type: "ref/resource", uri: "checklist://x/{y}" }, argument: { name: "y", value: "" } },
    },
    {
      method: "completion/complete",
      params: { ref: { type: "ref/prompt", name: "nope" }, argument: { name: "y", value: "" } },
    },
  ]);
  assert.deepEqual(read!.error, {
    code: -32602,
    message: "MCP error -32602: Resource checklist://unknown/x not found",
  });
  assert.deepEqual(template!.error, {
    code: -32602,
    message: "MCP error -32602: Resource template checklist://x/{y} not found",
  });
  assert.deepEqual(prompt!.error, { code: -32602, message: "MCP error -32602: Prompt nope not found" });
});

Deno.test("completion of a fixed resource is empty; of a template variable, the matching names", async () => {
  const [, , fixed, sessions, none] = await exchange([
    initialize("2025-11-25"),
    { method: "tools/call", params: { name: "createTask", arguments: { sessionId: "s1", name: "A" } } },
    {
      method: "completion/complete",
      params: {
        ref: { type: "ref/resource", uri: "ui://checklist/plan.html" },
        argument: { name: "y", value: "" },
      },
    },
    {
      method: "completion/complete",
      params: {
        ref: { type: "ref/resource", uri: "checklist://sessions/{sessionId}" },
        argument: { name: "sessionId", value: "S" },
      },
    },
    {
      method: "completion/complete",
      params: { ref: { type: "ref/prompt", name: "resume" }, argument: { name: "other", value: "" } },
    },
  ]);
  assert.deepEqual(fixed!.result, { completion: { values: [], hasMore: false } });
  assert.deepEqual(sessions!.result, { completion: { values: ["s1"], total: 1, hasMore: false } });
  assert.deepEqual(none!.result, { completion: { values: [], hasMore: false } });
});

Deno.test("prompts/list names each argument with its description and optionality; a bad one is refused by name", async () => {
  const [, list, bad] = await exchange([
    initialize("2025-11-25"),
    { method: "prompts/list" },
    { method: "prompts/get", params: { name: "resume", arguments: { project: "\ud800" } } },
  ]);
  const [resume] = list!.result!.prompts as { name: string; arguments: unknown[] }[];
  assert.equal(resume!.name, "resume");
  assert.deepEqual(resume!.arguments, [
    { name: "project", description: "Project of the progress document", required: false },
    { name: "sessionId", description: "Task tree; default: that of the latest work", required: false },
  ]);
  assert.deepEqual(bad!.error, {
    code: -32602,
    message:
      "MCP error -32602: Invalid arguments for prompt resume: holds a lone surrogate: send well-formed Unicode at project",
  });
});

/** A bare server with one slow method, `test/wait`, whose handler waits for its signal. */
async function waitingServer() {
  const server = new ProtocolServer({ name: "t", version: "0" }, { capabilities: {} });
  const seen: { aborted: boolean; reason: unknown }[] = [];
  server.setRequestHandler(
    z.object({ method: z.literal("test/wait"), params: z.unknown() }),
    (_request, extra) =>
      new Promise((resolve) => {
        extra.signal.addEventListener("abort", () => {
          seen.push({ aborted: true, reason: extra.signal.reason });
          resolve({ late: true });
        });
      }),
  );
  const errors: Error[] = [];
  server.onerror = (error) => errors.push(error);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const replies: Reply[] = [];
  clientSide.onmessage = (message) => void replies.push(message as unknown as Reply);
  await server.connect(serverSide);
  await clientSide.start();
  const send = (message: object) =>
    clientSide.send({ jsonrpc: "2.0", ...message } as Parameters<typeof clientSide.send>[0]);
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  };
  return { server, seen, errors, replies, send, until, clientSide };
}

Deno.test("a cancelled request's handler is aborted with the reason and its answer is never sent", async () => {
  const t = await waitingServer();
  await t.send({ id: 1, method: "test/wait" });
  await t.send({ method: "notifications/cancelled", params: { requestId: 1, reason: "no longer needed" } });
  await t.send({ id: 2, method: "ping" });
  await t.until(() => t.replies.length > 0 && t.seen.length > 0);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(t.seen, [{ aborted: true, reason: "no longer needed" }]);
  assert.deepEqual(t.replies, [{ result: {}, jsonrpc: "2.0", id: 2 }]);
  await t.clientSide.close();
});

Deno.test("closing the connection aborts the handlers still running and calls onclose", async () => {
  const t = await waitingServer();
  let closed = false;
  t.server.onclose = () => (closed = true);
  await t.send({ id: 1, method: "test/wait" });
  await new Promise((r) => setTimeout(r, 20));
  await t.clientSide.close();
  await t.until(() => t.seen.length > 0);
  assert.equal(closed, true);
  assert.equal(t.seen.length, 1);
  assert.equal(t.server.transport, undefined);
  assert.deepEqual(t.replies, []);
});

Deno.test("an unknown method is -32601; a response to no request is reported, not answered", async () => {
  const t = await waitingServer();
  await t.send({ id: 7, method: "no/such" });
  await t.send({ id: 8, result: {} });
  await t.until(() => t.replies.length > 0 && t.errors.length > 0);
  assert.deepEqual(t.replies, [{
    jsonrpc: "2.0",
    id: 7,
    error: { code: -32601, message: "Method not found" },
  }]);
  assert.match(t.errors[0]!.message, /response to no request/);
  await t.clientSide.close();
});

Deno.test("params a request's schema refuses are -32602 naming the field", async () => {
  const [, read, level] = await exchange([
    initialize("2025-11-25"),
    { method: "resources/read", params: {} },
    { method: "logging/setLevel", params: { level: "loud" } },
  ]);
  assert.deepEqual(read!.error, {
    code: -32602,
    message: "Invalid params: `uri`: Invalid input: expected string, received undefined",
  });
  assert.equal(level!.error?.code, -32602);
  assert.match(level!.error!.message, /^Invalid params: `level`: Invalid option: expected one of "debug"/);
});
