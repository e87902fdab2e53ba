/**
 * The server runs on the SDK's base `Protocol` (lib/mcp/protocol_server.ts), not on its `Server` and
 * `McpServer`. What those classes did at the protocol's edges must still hold: version negotiation,
 * the capabilities, completion and prompt errors, and a bad resource URI as invalid params.
 */
import assert from "node:assert/strict";
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
