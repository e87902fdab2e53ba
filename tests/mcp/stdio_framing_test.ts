/**
 * Why lib/mcp/stdio_transport.ts exists, measured against the SDK's own `StdioServerTransport` it
 * stands in for: the same lines go through both, each under the SDK's `serveStdio` with our server.
 * A well-formed exchange gets the same replies from both (the difference in framing changes nothing
 * a good client sees); where docs/requirements.md "Hostile input" asks more, the SDK's
 * transport falls short and ours does not: a line that is not JSON gets no reply there, a line past
 * its bound closes the connection there, and requests in flight at the end of input go unanswered
 * there.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { serveStdio, type Transport } from "../../lib/mcp/sdk.ts";
import { type BufferReader, StdioTransport } from "../../lib/mcp/stdio_transport.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { quietLogger } from "../support/logs.ts";
import { sleep } from "../support/time.ts";

type Json = Record<string, unknown>;

/** One side of the comparison: write lines, end the input, read what came out. */
interface Side {
  write(text: string): void;
  end(): void;
  /** Every complete line written so far, parsed. */
  out(): Json[];
  /** Whether the transport closed. */
  closed(): boolean;
}

/** Lines in, lines out, over a transport under `serveStdio` with our server. */
function served(transport: Transport, side: Omit<Side, "closed">): Side {
  const store = new MemoryStore();
  let isClosed = false;
  const onclose = () => (isClosed = true);
  serveStdio(({ era }) => createServer({ store, log: quietLogger(), era, features: [PLAN_VIEW] }), {
    transport,
    onerror: () => {},
  });
  const original = transport.onclose;
  transport.onclose = () => {
    original?.();
    onclose();
  };
  return { ...side, closed: () => isClosed };
}

/** The SDK's transport over in-memory node streams. */
function sdkSide(maxBufferSize?: number): Side {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.on("data", (chunk: Uint8Array) => (text += new TextDecoder().decode(chunk)));
  const transport = new StdioServerTransport(input, output, maxBufferSize ? { maxBufferSize } : undefined);
  return served(transport, {
    write: (line) => input.write(line),
    end: () => input.end(),
    out: () => parsed(text),
  });
}

/** Ours over an in-memory reader and a synchronous writer. */
function ourSide(maxLineBytes?: number): Side {
  const chunks: Uint8Array[] = [];
  let ended = false;
  let wake = () => {};
  const input: BufferReader = {
    async read(buffer) {
      while (chunks.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      const chunk = chunks.shift();
      if (!chunk) return null;
      const n = Math.min(chunk.length, buffer.length);
      buffer.set(chunk.subarray(0, n));
      if (n < chunk.length) chunks.unshift(chunk.subarray(n));
      return n;
    },
  };
  let text = "";
  const output = {
    writeSync: (bytes: Uint8Array) => ((text += new TextDecoder().decode(bytes)), bytes.length),
  };
  const transport = new StdioTransport({ input, output, ...(maxLineBytes ? { maxLineBytes } : {}) });
  return served(transport, {
    write: (line) => {
      chunks.push(new TextEncoder().encode(line));
      wake();
    },
    end: () => {
      ended = true;
      wake();
    },
    out: () => parsed(text),
  });
}

function parsed(text: string): Json[] {
  return text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line));
}

const line = (message: Json) => JSON.stringify(message) + "\n";
const INITIALIZE = line({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
});
const PING = (id: number) => line({ jsonrpc: "2.0", id, method: "ping" });

async function settle(): Promise<void> {
  await sleep(150);
}

Deno.test("a well-formed exchange gets the same replies through the SDK's stdio transport and ours", async () => {
  const sides = [sdkSide(), ourSide()];
  const exchange = [
    INITIALIZE,
    line({ jsonrpc: "2.0", method: "notifications/initialized" }),
    PING(2),
    line({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "createTask", arguments: { id: "a", name: "A" } },
    }),
    line({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "getTask", arguments: { id: "a" } },
    }),
    line({ jsonrpc: "2.0", id: 5, method: "no/such/method" }),
  ];
  for (const side of sides) for (const text of exchange) side.write(text);
  await settle();
  const [sdk, ours] = sides.map((side) => side.out());
  assert.equal(sdk!.filter((m) => "id" in m).length, 5, JSON.stringify(sdk));
  assert.deepEqual(ours, sdk);
});

Deno.test("a line that is not JSON: no reply from the SDK's transport, a parse error from ours, and both read on", async () => {
  const [sdk, ours] = [sdkSide(), ourSide()];
  for (const side of [sdk, ours]) {
    side.write(INITIALIZE);
    side.write("this is not json\n");
    side.write(PING(2));
  }
  await settle();
  assert.deepEqual(sdk.out().map((m) => m.id), [1, 2], "the SDK answers the requests around it only");
  const refused = ours.out().find((m) => m.id === null) as { error: { code: number } } | undefined;
  assert.equal(refused?.error.code, -32700);
  // The refusal is written at once, before the answers of the requests around it.
  assert.deepEqual(ours.out().map((m) => m.id), [null, 1, 2]);
});

Deno.test("a line past the bound: the SDK's transport closes the connection, ours refuses the line and reads on", async () => {
  const bound = 1024;
  const [sdk, ours] = [sdkSide(bound), ourSide(bound)];
  for (const side of [sdk, ours]) {
    side.write(INITIALIZE);
    side.write(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"${"x".repeat(2 * bound)}"}}\n`);
    side.write(PING(2));
  }
  await settle();
  assert.equal(sdk.closed(), true, "the SDK's transport closed");
  assert.ok(!sdk.out().some((m) => m.id === 2), "and the next request went unanswered");
  assert.equal(ours.closed(), false);
  assert.deepEqual(ours.out().map((m) => [m.id, (m.error as { code?: number } | undefined)?.code]), [
    [null, -32600],
    [1, undefined],
    [2, undefined],
  ]);
});

Deno.test("requests in flight when the input ends: unanswered by the SDK's transport, answered by ours", async () => {
  const [sdk, ours] = [sdkSide(), ourSide()];
  for (const side of [sdk, ours]) {
    side.write(INITIALIZE);
    for (let id = 2; id < 12; id++) side.write(PING(id));
    side.end();
  }
  await settle();
  const answered = (side: Side) => side.out().filter((m) => typeof m.id === "number").length;
  assert.equal(answered(ours), 11, "ours answers every request read");
  assert.ok(answered(sdk) < 11, `the SDK's answered ${answered(sdk)} of 11`);
});
