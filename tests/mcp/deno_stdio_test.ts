import assert from "node:assert/strict";
import { denoStdout } from "../../lib/mcp/deno_stdio.ts";
import { spawnChild } from "../support/processes.ts";
import { mainCommand } from "../support/server_process.ts";

Deno.test("denoStdout writes every byte in order even when the pipe takes a few at a time", () => {
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
  const stdout = denoStdout(pipe);
  assert.equal(stdout.write('{"jsonrpc":"2.0","id":1,"result":{"text":"héllo"}}\n'), true);
  assert.equal(
    new TextDecoder().decode(new Uint8Array(received)),
    '{"jsonrpc":"2.0","id":1,"result":{"text":"héllo"}}\n',
  );
  assert.ok(writes.length > 1);
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
