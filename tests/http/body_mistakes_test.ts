/**
 * A client's broken body is the client's mistake (issue 29): a chunked `/mcp` body with bad framing,
 * or one cut off mid-chunk, is logged below error level, so no client can flood the error log.
 */
import assert from "node:assert/strict";
import { serveHttp } from "../../lib/listener/serve.ts";
import { LISTENER_OPTIONS } from "../../lib/http/listener_options.ts";
import { makeApp } from "../support/http.ts";
import { recordingLogger } from "../support/logs.ts";
import { Raw } from "../support/raw_http.ts";
import { sleep } from "../support/time.ts";

const HEAD = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
  "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

Deno.test("a chunked /mcp body with broken framing, or cut off, logs nothing at error level", async () => {
  const { log, records } = recordingLogger();
  await using app = makeApp({}, { log });
  const server = await serveHttp({
    hostname: "127.0.0.1",
    port: 0,
    fetch: app.app.fetch,
    log,
    ...LISTENER_OPTIONS,
  });
  try {
    await using broken = await Raw.open(server.port);
    await broken.write(`${HEAD}5\r\n{"a":XX`);
    await broken.closedWithin(2000);
    await using cut = await Raw.open(server.port);
    await cut.write(`${HEAD}5\r\n{"a"`);
    cut.close();
    await sleep(300);
  } finally {
    await server.shutdown();
  }
  const errors = records.filter((r) => r.level === "error");
  assert.deepEqual(errors, [], JSON.stringify(errors));
  assert.ok(records.some((r) => r.level === "debug"), "the mistakes are in the log, below error");
});
