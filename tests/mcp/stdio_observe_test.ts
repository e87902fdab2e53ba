/**
 * The stdio framing's observer (lib/mcp/stdio_transport.ts): a listen request is handed to the
 * protocol only once what it listens to has been read, so its acknowledgement never comes before the
 * versions a later change is told from; the messages after it wait too, in order.
 */
import assert from "node:assert/strict";
import { type BufferReader, StdioTransport } from "../../lib/mcp/stdio_transport.ts";
import { sleep } from "../support/time.ts";

function input(lines: string[]): BufferReader {
  const bytes = new TextEncoder().encode(lines.map((l) => l + "\n").join(""));
  let done = false;
  return {
    read(buffer) {
      if (done) return Promise.resolve(null);
      done = true;
      buffer.set(bytes);
      return Promise.resolve(bytes.length);
    },
  };
}

Deno.test("a message whose observer waits holds back itself and every message after it, in order", async () => {
  const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen: unknown[] = [];
  const transport = new StdioTransport({
    input: input([ping(1), ping(2), ping(3)]),
    output: { writeSync: (b: Uint8Array) => b.length },
    observe: (message) => ((message as { id?: number }).id === 2 ? gate : undefined),
  });
  transport.onmessage = (message) => seen.push((message as { id: number }).id);
  await transport.start();
  await sleep(50);
  assert.deepEqual(seen, [1], "2 waits for its observer, and 3 behind it");
  release();
  await sleep(20);
  assert.deepEqual(seen, [1, 2, 3]);
  await transport.close();
});
