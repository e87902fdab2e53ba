/**
 * stdio line by line, with raw bytes to a real `main.ts --stdio` child: every line gets an answer
 * (-32700 for text that is not JSON, -32600 for a batch, a non-message or a line over 4 MiB), the
 * server reads on after each, and replies already due are written before it exits.
 */
import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import { spawnChild } from "../support/processes.ts";
import { mainCommand } from "../support/server_process.ts";
import { lines } from "../support/streams.ts";
import { initializeBody } from "../support/http.ts";

type Json = Record<string, unknown>;

/** A stdio server child with a line writer and a reader of its replies in order. */
function stdioChild(env: Record<string, string> = {}) {
  const child = spawnChild(mainCommand(["--stdio"], { LOG_LEVEL: "error", ...env }), {
    stdin: "piped",
    stdout: "piped",
  });
  const writer = child.stdin.getWriter();
  const replies = lines(child.stdout);
  const encoder = new TextEncoder();
  return {
    child,
    write: (text: string) => writer.write(encoder.encode(text)),
    send: (message: Json) => writer.write(encoder.encode(JSON.stringify(message) + "\n")),
    /** The next reply (log notifications skipped). */
    next: async (): Promise<Json> => {
      while (true) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const { value, done } = await Promise.race([
          replies.next(),
          new Promise<never>((_, reject) =>
            timer = setTimeout(() => reject(new Error("no reply in 10 s")), 10_000)
          ),
        ]).finally(() => clearTimeout(timer));
        assert.ok(!done, "stdout ended before the reply");
        const message = JSON.parse(value) as Json;
        if (!("method" in message)) return message;
      }
    },
    close: () => writer.close(),
  };
}

Deno.test("stdio answers every line: parse errors, batches, non-messages and over-long lines", async (t) => {
  const io = stdioChild();
  try {
    await io.send(initializeBody(0));
    assert.ok(((await io.next()).result as Json).serverInfo);
    await io.send({ jsonrpc: "2.0", method: "notifications/initialized" });

    const refusals: [string, string, number, unknown][] = [
      ["text that is not JSON", "this is not json\n", -32700, null],
      ["JSON cut short", '{"jsonrpc":"2.0","id":1,"method":"ping"\n', -32700, null],
      ["a batch", JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "ping" }]) + "\n", -32600, null],
      ["an empty batch", "[]\n", -32600, null],
      ["a request without method", '{"jsonrpc":"2.0","id":7}\n', -32600, 7],
      ["an object that is no message", '{"hello":"world"}\n', -32600, null],
      ["a bare number", "42\n", -32600, null],
      ["a wrong version", '{"jsonrpc":"1.0","id":"v","method":"ping"}\n', -32600, "v"],
      ["deep brackets", "[".repeat(100_000) + "]".repeat(100_000) + "\n", -32600, null],
    ];
    for (const [label, line, code, id] of refusals) {
      await t.step(label, async () => {
        await io.write(line);
        const reply = await io.next();
        assert.equal((reply.error as Json).code, code, JSON.stringify(reply));
        assert.equal(reply.id, id);
        await io.send({ jsonrpc: "2.0", id: `after ${label}`, method: "ping" });
        assert.deepEqual(await io.next(), { jsonrpc: "2.0", id: `after ${label}`, result: {} });
      });
    }

    await t.step("a line over 4 MiB, sent in pieces, is refused and the next line is read", async () => {
      const piece = "x".repeat(256 * 1024);
      await io.write('{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"');
      for (let sent = 0; sent <= LIMITS.stdioLineBytes; sent += piece.length) await io.write(piece);
      // The refusal comes as soon as the line passes the limit, before its end.
      const reply = await io.next();
      assert.equal((reply.error as Json).code, -32600);
      assert.equal(reply.id, null);
      assert.match((reply.error as Json).message as string, /at most 4194304 bytes/);
      await io.write(piece + '"}}\n');
      await io.send({ jsonrpc: "2.0", id: "after big", method: "ping" });
      assert.deepEqual(await io.next(), { jsonrpc: "2.0", id: "after big", result: {} });
    });

    await t.step("blank lines are skipped, a tool still answers", async () => {
      await io.write("\n  \r\n");
      await io.send({
        jsonrpc: "2.0",
        id: "call",
        method: "tools/call",
        params: { name: "getTask", arguments: { id: "missing" } },
      });
      const reply = await io.next();
      assert.equal(reply.id, "call");
      assert.equal(((reply.result as Json).structuredContent as { error: Json }).error.code, "NOT_FOUND");
    });
  } finally {
    await io.close();
  }
  const status = await io.child.status;
  assert.equal(status.code, 0);
});

Deno.test("stdio writes the replies already due before it exits, even after a refused line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A file store makes each change wait for its write, so replies are still owed at end of input.
    const io = stdioChild({ FILE_PATH: `${dir}/tasks.json` });
    const requests = [
      JSON.stringify(initializeBody(1)),
      "{broken",
      ...Array.from({ length: 8 }, (_, i) =>
        JSON.stringify({
          jsonrpc: "2.0",
          id: 10 + i,
          method: "tools/call",
          params: { name: "createTask", arguments: { name: `T${i}` } },
        })),
      "x".repeat(LIMITS.stdioLineBytes + 10),
      JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" }),
    ];
    await io.write(requests.join("\n")); // the last line has no newline: end of input ends it
    await io.close();
    const replies: Json[] = [];
    for await (const line of lines(io.child.stdout)) {
      const message = JSON.parse(line) as Json;
      if (!("method" in message)) replies.push(message);
    }
    assert.equal((await io.child.status).code, 0);
    const ids = replies.map((r) => r.id);
    assert.deepEqual(ids.filter((id) => typeof id === "number").sort((a, b) => Number(a) - Number(b)), [
      1,
      ...Array.from({ length: 8 }, (_, i) => 10 + i),
      99,
    ]);
    assert.deepEqual(replies.filter((r) => r.id === null).map((r) => (r.error as Json).code), [
      -32700,
      -32600,
    ]);
    const stored = JSON.parse(await Deno.readTextFile(`${dir}/tasks.json`));
    assert.equal(stored.sessions.default.length, 8);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
