import { spawnChild } from "../support/processes.ts";
import { mainCommand } from "../support/server_process.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { LineSplitter, OVERSIZED, writeAll } from "../../lib/mcp/stdio_transport.ts";

Deno.test("writeAll writes every byte in order even when the pipe takes a few at a time", () => {
  const received: number[] = [];
  const writes: number[] = [];
  const pipe = {
    writeSync(data: Uint8Array): number {
      const n = Math.min(3, data.length);
      received.push(...data.subarray(0, n));
      writes.push(n);
      return n;
    },
  };
  const text = '{"jsonrpc":"2.0","id":1,"result":{"text":"héllo"}}\n';
  writeAll(pipe, new TextEncoder().encode(text));
  assert.equal(new TextDecoder().decode(new Uint8Array(received)), text);
  assert.ok(writes.length > 1);
});

/** The lines `text` holds, an over-long one as OVERSIZED, as {@link LineSplitter} should read them. */
function expectedLines(text: string, max: number): (string | typeof OVERSIZED)[] {
  const parts = text.split("\n");
  const last = parts.pop()!;
  const out: (string | typeof OVERSIZED)[] = parts.map((p) => p.length > max ? OVERSIZED : p);
  if (last !== "") out.push(last.length > max ? OVERSIZED : last);
  return out;
}

Deno.test("LineSplitter reads the same lines however the bytes are chunked, over-long ones as OVERSIZED", () => {
  const decoder = new TextDecoder();
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "b", "\n"), { maxLength: 60 }).map((cs) => cs.join("")),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }),
      fc.integer({ min: 1, max: 6 }),
      (text, sizes, max) => {
        const bytes = new TextEncoder().encode(text);
        const splitter = new LineSplitter(max);
        const got: (string | typeof OVERSIZED)[] = [];
        let at = 0;
        for (let i = 0; at < bytes.length; i++) {
          const size = sizes[i % sizes.length]!;
          for (const line of splitter.push(bytes.subarray(at, at + size))) {
            got.push(line === OVERSIZED ? line : decoder.decode(line));
          }
          at += size;
        }
        for (const line of splitter.end()) got.push(decoder.decode(line));
        // An empty line is still a line to the splitter; the transport skips blank ones.
        assert.deepEqual(got, expectedLines(text, max));
      },
    ),
    { numRuns: 500, seed: 11 },
  );
});

Deno.test("LineSplitter reports an over-long line before its end arrives and keeps none of it", () => {
  const splitter = new LineSplitter(10);
  const chunk = new Uint8Array(8).fill(0x61);
  assert.deepEqual([...splitter.push(chunk)], []);
  assert.deepEqual([...splitter.push(chunk)], [OVERSIZED]);
  for (let i = 0; i < 1000; i++) assert.deepEqual([...splitter.push(chunk)], []);
  const next = [...splitter.push(new TextEncoder().encode("tail\nok\n"))];
  assert.deepEqual(next.map((l) => new TextDecoder().decode(l as Uint8Array)), ["ok"]);
});

Deno.test("a client that writes its requests and closes stdin at once still gets every reply", async () => {
  // With a file store each change waits for fsync, so replies are still owed when stdin ends.
  const dir = await Deno.makeTempDir();
  const lines = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "createTask", arguments: { id: "a", name: "A" } },
    },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "startTask", arguments: { id: "a" } } },
    { jsonrpc: "2.0", id: 4, method: "tools/list" },
    ...Array.from({ length: 10 }, (_, i) => ({
      jsonrpc: "2.0",
      id: 5 + i,
      method: "tools/call",
      params: { name: "createTask", arguments: { name: `T${i}` } },
    })),
  ];
  const child = spawnChild(mainCommand(["--stdio"], { LOG_LEVEL: "error", FILE_PATH: `${dir}/tasks.json` }), {
    stdin: "piped",
    stdout: "piped",
  });
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"));
  await writer.close();
  const { code, stdout } = await child.output();
  assert.equal(code, 0);
  const replies = new TextDecoder().decode(stdout).trim().split("\n").map((l) => JSON.parse(l));
  const answered = replies.filter((r) => r.id !== undefined).map((r) => r.id).sort((a, b) => a - b);
  assert.deepEqual(answered, Array.from({ length: 14 }, (_, i) => i + 1));
  const started = replies.find((r) => r.id === 3);
  assert.equal(started.result.structuredContent.task.id, "a");
  assert.equal(started.result.structuredContent.task.status, "in_progress");
  const stored = JSON.parse(await Deno.readTextFile(`${dir}/tasks.json`));
  assert.equal(stored.sessions.default.length, 11);
  await Deno.remove(dir, { recursive: true });
});
