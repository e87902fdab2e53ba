/**
 * Bad input, sent on purpose: random and malformed JSON-RPC bodies and random tool arguments, over
 * HTTP (a real server process) and over stdio. The server never crashes, every reply is a JSON-RPC
 * error or a tool result (a failed call always carries a known error code), and it still answers
 * afterwards. Run counts are bounded; fast-check prints the seed of any failure.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ERROR_CODES } from "../../lib/domain/errors.ts";
import { ALL_TOOLS } from "../../lib/mcp/server.ts";
import { call } from "../support/harness.ts";
import { spawnChild } from "../support/processes.ts";
import { mainCommand, spawnServer } from "../support/server_process.ts";
import { messagesOf } from "../support/sse.ts";
import { lines } from "../support/streams.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";
import { connectHttp, initializeBody, MCP_HEADERS } from "../support/http.ts";

const METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "logging/setLevel",
  "resources/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "notifications/initialized",
  "notifications/cancelled",
  "no/such/method",
];
const TOOL_NAMES = ALL_TOOLS.map((t) => t.name);

/** Arbitrary JSON-RPC-ish messages: right and wrong field types, real and made-up methods. */
const message = fc.record({
  jsonrpc: fc.constantFrom("2.0", "2.0", "2.0", "1.0", 2, null),
  id: fc.oneof(
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.constant(null),
    fc.double(),
    fc.object({ maxDepth: 1 }),
  ),
  method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 12 })),
  params: fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.record({
      name: fc.oneof(fc.constantFrom(...TOOL_NAMES), fc.string({ maxLength: 10 })),
      arguments: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })),
      ),
      level: fc.oneof(fc.constantFrom("debug", "info", "warning", "error"), fc.string({ maxLength: 6 })),
    }, { requiredKeys: [] }),
  ),
}, { requiredKeys: [] });

const MALFORMED = [
  "",
  "{",
  "}",
  "[]",
  "[{}]",
  "null",
  "1",
  '"text"',
  '{"jsonrpc":"2.0"}',
  '{"jsonrpc":"2.0","id":1}',
  '{"jsonrpc":"2.0","id":1,"method":null}',
  '{"jsonrpc":"2.0","id":{},"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"createTask","arguments":"not an object"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"__proto__","arguments":{"__proto__":{"x":1}}}}',
  "\uFEFF{}",
  "[".repeat(50_000) + "]".repeat(50_000),
  JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }))),
];

/** A body: garbage text, any JSON, one message, or a batch. */
const body = fc.oneof(
  fc.constantFrom(...MALFORMED),
  fc.string({ maxLength: 60 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { minLength: 1, maxLength: 4 }).map((ms) => JSON.stringify(ms)),
);

type Json = Record<string, unknown>;

/** Asserts that a message the server sent is a JSON-RPC error, a result, or a notification. */
function assertWellFormedReply(reply: Json, context: string): void {
  assert.equal(reply.jsonrpc, "2.0", context);
  if ("method" in reply) return; // a notification (log messages)
  if ("error" in reply) {
    const error = reply.error as Json;
    assert.equal(typeof error.code, "number", context);
    assert.equal(typeof error.message, "string", context);
    return;
  }
  assert.ok("result" in reply, `neither result nor error: ${context}`);
  const result = reply.result as Json;
  if (result && result.isError === true) {
    const coded = (result.structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code;
    assert.ok(
      (ERROR_CODES as readonly unknown[]).includes(coded),
      `isError without a known code: ${context}`,
    );
  }
}

Deno.test("fuzz over HTTP: malformed and random bodies get JSON-RPC errors; the server keeps answering", async () => {
  await using server = await spawnServer({ args: ["--http"], env: { LOG_LEVEL: "error" } });
  const endpoint = `${server.url}/mcp`;
  const init = await fetch(endpoint, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify(initializeBody()),
  });
  const session = init.headers.get("mcp-session-id")!;
  assert.ok(session);
  await init.body?.cancel();

  await fc.assert(
    fc.asyncProperty(body, fc.boolean(), async (text, inSession) => {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { ...MCP_HEADERS, ...(inSession ? { "mcp-session-id": session } : {}) },
        body: text,
      });
      const context = `${response.status} for ${text.slice(0, 200)}`;
      assert.ok(response.status < 500, context);
      const messages = await messagesOf(response);
      if (response.status >= 400) assert.equal(messages.length, 1, context);
      for (const reply of messages) assertWellFormedReply(reply, context);
    }),
    { numRuns: fuzzRuns(250), seed: FUZZ_SEED },
  );

  await using handle = await connectHttp(endpoint);
  assert.deepEqual(await handle.client.ping(), {});
  await call(handle.client, "createTask", { name: "still answering" });
  await handle.client.close();
  // Whatever came in, stderr holds structured log lines only.
  const { stderr } = await server.stop();
  for (const line of stderr.split("\n").filter((l) => l.trim() !== "")) {
    assert.equal(typeof JSON.parse(line).msg, "string", line);
  }
});

Deno.test("fuzz over HTTP: random tool arguments get a result or a coded isError", async () => {
  await using server = await spawnServer({ args: ["--http"], env: { LOG_LEVEL: "error" } });
  await using handle = await connectHttp(`${server.url}/mcp`);
  const keys = new Map(ALL_TOOLS.map((t) => [t.name, Object.keys(t.input.shape)]));
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.string({ maxLength: 30 }),
    fc.constantFrom("default", "", "/", "/a/", "TODO", "DONE", "done", "x".repeat(5000)),
    fc.array(
      fc.record({ name: fc.string(), taskId: fc.string(), description: fc.string() }, { requiredKeys: [] }),
      {
        maxLength: 3,
      },
    ),
  );
  const invocation = fc.constantFrom(...TOOL_NAMES).chain((name) =>
    fc.tuple(
      fc.constant(name),
      fc.oneof(
        {
          weight: 9,
          arbitrary: fc.dictionary(
            fc.oneof(fc.constantFrom(...keys.get(name)!, "extra"), fc.string({ maxLength: 6 })),
            value,
            { maxKeys: 6 },
          ),
        },
        // Arguments that are no object at all, or nested past every limit.
        {
          weight: 1,
          arbitrary: fc.oneof(
            fc.string({ maxLength: 8 }),
            fc.array(fc.integer(), { maxLength: 3 }),
            fc.integer(),
          ),
        },
        {
          weight: 1,
          arbitrary: fc.integer({ min: 60, max: 2000 }).map((n) => ({
            tasks: JSON.parse("[".repeat(n) + "]".repeat(n)),
          })),
        },
      ),
    )
  );
  await fc.assert(
    fc.asyncProperty(invocation, async ([name, args]) => {
      // Checks a success's output schema and a failure's code.
      await call(handle.client, name, args as Record<string, unknown>);
    }),
    { numRuns: fuzzRuns(200), seed: FUZZ_SEED },
  );
  await assert.rejects(() => handle.client.callTool({ name: "no_such_tool", arguments: {} }), /Unknown tool/);
  await call(handle.client, "createTask", { name: "still answering" });
});

Deno.test("fuzz over stdio: every line gets its answer, the server never crashes and answers afterwards", async () => {
  // Each line that is a JSON object gets a unique string id, so its answer can be told apart; every
  // other line (not JSON, a batch, a scalar) is answered with id null. Blank lines are skipped.
  const sample = fc.sample(body, { numRuns: fuzzRuns(300), seed: FUZZ_SEED }).map((text, i) => {
    const line = text.replaceAll("\n", " ");
    try {
      const value = JSON.parse(line);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        const { result: _result, error: _error, ...rest } = value;
        return { line: JSON.stringify({ ...rest, id: `f-${i}` }), id: `f-${i}` };
      }
    } catch {
      // Not JSON: answered with id null.
    }
    return { line, id: line.trim() === "" ? undefined : null };
  });
  const child = spawnChild(mainCommand(["--stdio"], { LOG_LEVEL: "error" }), {
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const finals = ["final-init", "final-call", "final-ping"];
  const answers = new Map<unknown, Json[]>();
  const reading = (async () => {
    for await (const line of lines(child.stdout)) {
      if (!line.trim()) continue;
      const reply = JSON.parse(line) as Json;
      assertWellFormedReply(reply, line.slice(0, 200));
      if ("method" in reply) continue; // a notification (log message)
      answers.set(reply.id, [...(answers.get(reply.id) ?? []), reply]);
      if (finals.every((id) => answers.has(id))) break;
    }
  })();
  try {
    for (const { line } of sample) await writer.write(encoder.encode(line + "\n"));
    const send = (m: Json) => writer.write(encoder.encode(JSON.stringify(m) + "\n"));
    await send(initializeBody("final-init"));
    await send({
      jsonrpc: "2.0",
      id: "final-call",
      method: "tools/call",
      params: { name: "getTask", arguments: { id: "missing" } },
    });
    await send({ jsonrpc: "2.0", id: "final-ping", method: "ping" });
    await reading;
  } finally {
    await writer.close().catch(() => {});
  }
  const status = await child.status;
  await child.stdout.cancel().catch(() => {});
  assert.equal(status.code, 0, "the server exited cleanly when stdin closed");
  for (const { line, id } of sample) {
    if (typeof id === "string") {
      assert.equal(answers.get(id)?.length, 1, `one answer to ${line.slice(0, 200)}`);
    }
  }
  const unattributable = sample.filter((s) => s.id === null).length;
  assert.equal(
    answers.get(null)?.length ?? 0,
    unattributable,
    "one id-null answer per line that is no object",
  );
  assert.ok((answers.get("final-init")![0]!.result as Json).serverInfo);
  const result = answers.get("final-call")![0]!.result as Json;
  assert.equal(result.isError, true);
  assert.equal((result.structuredContent as { error: { code: string } }).error.code, "NOT_FOUND");
  assert.deepEqual(answers.get("final-ping")![0]!.result, {});
  for (const line of (await stderr).split("\n").filter((l) => l.trim() !== "")) {
    assert.equal(typeof JSON.parse(line).msg, "string", line);
  }
});
