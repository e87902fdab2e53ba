/**
 * Clients' mistakes in the log (lib/listener/client_mistakes.ts): any client can make them as often as it
 * likes, so the listener logs each at `debug` and counts them in one `info` line a minute, never a
 * `warn` or an `error` line per request.
 */
import assert from "node:assert/strict";
import { MistakeTally } from "../../lib/listener/client_mistakes.ts";
import { serveHttp } from "../../lib/listener/serve.ts";
import { LISTENER_OPTIONS } from "../../lib/http/listener_options.ts";
import { recordingLogger } from "../support/logs.ts";
import { exchange, Raw } from "../support/raw_http.ts";

Deno.test("each mistake is a debug line; once per interval one info line counts them by status", () => {
  const { log, records } = recordingLogger();
  const tally = new MistakeTally(log, { everyMs: 1000, now: 0 });
  tally.note(400, "http request refused", { reason: "a bare LF in the head" });
  tally.note(400, "http request refused", { reason: "obs-fold in a header" });
  tally.note(408, "request body timed out; connection closed", { path: "/mcp" });
  assert.deepEqual(records.map((r) => [r.level, r.msg, r.status]), [
    ["debug", "http request refused", 400],
    ["debug", "http request refused", 400],
    ["debug", "request body timed out; connection closed", 408],
  ]);
  tally.tick(999);
  assert.equal(records.length, 3, "nothing before the interval has passed");
  tally.tick(1000);
  assert.deepEqual(records.slice(3).map((r) => [r.level, r.msg, r.counts, r.seconds]), [
    ["info", "http clients' mistakes", { 400: 2, 408: 1 }, 1],
  ]);
  tally.tick(2500);
  assert.equal(records.length, 4, "no line for an interval without mistakes");
  tally.note(501, "http request refused");
  tally.tick(3400);
  assert.equal(records.length, 5, "an interval runs from the last tick that closed one");
  tally.tick(3500);
  assert.deepEqual(records.at(-1)!.counts, { 501: 1 });
});

Deno.test("a flood of malformed requests, bad methods, broken and stalled bodies logs nothing above debug", async () => {
  const { log, records } = recordingLogger();
  const server = await serveHttp({
    hostname: "127.0.0.1",
    port: 0,
    log,
    ...LISTENER_OPTIONS,
    bodyTimeoutMs: 150,
    headersTimeoutMs: 150,
    fetch: async (request) => {
      try {
        await request.bytes();
      } catch {
        // the body broke: the listener has answered already
      }
      return new Response("ok");
    },
  });
  try {
    const bad = [
      "GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\r\n",
      "delete / HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /a/../b HTTP/1.1\r\nHost: a\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc",
      "GET / HTTP/1.1\r\nHost: a\r\n",
    ];
    for (let round = 0; round < 5; round++) {
      await Promise.all(bad.map((request) => exchange(server.port, request, { ms: 2000 })));
    }
    // A client that leaves mid-body.
    const raw = await Raw.open(server.port);
    await raw.write("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
    await raw[Symbol.asyncDispose]();
  } finally {
    await server.shutdown();
  }
  const loud = records.filter((r) => r.level !== "debug");
  assert.deepEqual(loud, [], JSON.stringify(loud));
  const refused = records.filter((r) => r.msg === "http request refused").map((r) => r.status);
  assert.deepEqual([...new Set(refused)].sort(), [400, 501]);
  assert.ok(records.some((r) => r.msg === "request body timed out; connection closed" && r.status === 408));
  assert.ok(records.some((r) => r.msg === "request head timed out; connection closed" && r.status === 408));
  assert.ok(records.some((r) => r.msg === "request body refused; connection closed" && r.status === 400));
});
