/**
 * Hostile HTTP on a real socket: a body that does not arrive in time is `408` and the server
 * closes the connection; a malformed `Host` is `400` with a plain message; no reply carries an
 * exception's text, and stderr holds only structured log lines.
 */
import assert from "node:assert/strict";
import { createApp } from "../../lib/http/app.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { quietLogger } from "../support/logs.ts";
import { ROOT } from "../support/paths.ts";
import { freePort } from "../support/processes.ts";
import { serverEnv } from "../support/env.ts";
import { spawnServer, startHttpProcess } from "../support/server_process.ts";
import { initializeBody, MCP_HEADERS } from "../support/http.ts";

/** Writes `raw` on a new connection and reads until the server closes it or `ms` pass. */
async function exchange(
  port: number,
  raw: string,
  ms = 5000,
): Promise<{ text: string; closed: boolean; after: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const started = performance.now();
  await conn.write(new TextEncoder().encode(raw));
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(16 * 1024);
  let text = "";
  let closed = false;
  const timer = setTimeout(() => conn.close(), ms);
  try {
    while (true) {
      const n = await conn.read(buffer);
      if (n === null) {
        closed = true;
        break;
      }
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
  } catch {
    // Closed by our own timer: the server kept the connection open.
  } finally {
    clearTimeout(timer);
  }
  if (closed) conn.close();
  return { text, closed, after: performance.now() - started };
}

/** Asserts that every line of `stderr` is a JSON log record. */
function assertStructured(stderr: string): Record<string, unknown>[] {
  const records = stderr.split("\n").filter((l) => l.trim() !== "").map((line) => {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      assert.fail(`not a structured log line on stderr: ${line}`);
    }
    assert.equal(typeof record.level, "string", line);
    assert.equal(typeof record.msg, "string", line);
    return record;
  });
  return records;
}

Deno.test("a body that has not arrived in time is 408 and the server closes the connection", async () => {
  const port = freePort();
  const server = await startHttpProcess({
    command: Deno.execPath(),
    args: ["run", "-A", "--config", `${ROOT}/deno.json`, `${ROOT}/tests/http/fixtures/short_body_timeout.ts`],
    cwd: ROOT,
    // Clients' mistakes are debug lines (and a count once a minute): lib/listener/client_mistakes.ts.
    env: serverEnv({ PORT: String(port), BODY_TIMEOUT_MS: "400", LOG_LEVEL: "debug" }),
  }, { port });
  try {
    const partial = '{"jsonrpc":"2.0","id":1,';
    const slow = await exchange(
      port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n${partial}`,
    );
    assert.match(slow.text, /^HTTP\/1\.1 408 /);
    assert.match(slow.text, /Request Timeout: the body did not arrive within 0.4 s/);
    assert.ok(slow.closed, `the server closed the connection: ${slow.text}`);
    assert.ok(slow.after < 4000, `closed after ${slow.after} ms`);

    // A body left unread behind an early answer (here a 404) still may not hold the connection.
    const unread = await exchange(
      port,
      `POST /no-such-path HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 200\r\n\r\n${partial}`,
    );
    assert.match(unread.text, /^HTTP\/1\.1 404 /);
    assert.ok(unread.closed, `the server closed the connection: ${unread.text}`);
    assert.ok(unread.after < 4000, `closed after ${unread.after} ms`);

    // The log names the path only: a query (a share link's token) never reaches it.
    const queried = await exchange(
      port,
      `POST /mcp?token=secret-in-query HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 200\r\n\r\n${partial}`,
    );
    assert.match(queried.text, /^HTTP\/1\.1 408 /);

    // A whole body in time is served as before, on a new connection.
    const body = JSON.stringify(initializeBody());
    const fine = await fetch(`${server.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body });
    assert.equal(fine.status, 200);
    await fine.body?.cancel();
  } finally {
    const { stderr } = await server.stop();
    const records = assertStructured(stderr);
    assert.ok(records.some((r) => r.msg === "request body timed out; connection closed"), stderr);
    assert.doesNotMatch(stderr, /secret-in-query/);
    assert.ok(records.every((r) => typeof r.path !== "string" || !r.path.includes("?")), stderr);
  }
});

Deno.test("a malformed Host is 400 with a plain message; no reply or log line carries exception text", async () => {
  await using server = await spawnServer({ args: ["--http"], env: { LOG_LEVEL: "debug" } });
  const body = JSON.stringify(initializeBody());
  for (const path of ["/mcp", "/", "/healthz", "/api/view"]) {
    for (const host of ["::1", "::1:8585", "[::1", "a b"]) {
      const method = path === "/mcp" ? "POST" : "GET";
      const { text } = await exchange(
        server.port,
        `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nConnection: close\r\n` +
          (method === "POST" ? `Content-Length: ${body.length}\r\n\r\n${body}` : "\r\n"),
      );
      assert.match(text, /^HTTP\/1\.1 400 /, `${method} ${path} with Host ${host}: ${text}`);
      assert.match(text, /the Host header is malformed/);
      assert.doesNotMatch(text, /TypeError|Invalid URL|at .*\.ts:\d+/);
    }
  }
  // A body that is JSON but no message gets our wording, not the validator's.
  for (const bad of ['{"jsonrpc":"2.0","id":1}', '{"hello":1}', "[]", '[{"jsonrpc":"2.0","method":5}]']) {
    const response = await fetch(`${server.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body: bad });
    const text = await response.text();
    assert.equal(response.status, 400, bad);
    assert.equal(JSON.parse(text).error.code, -32600, text);
    assert.doesNotMatch(text, /"data"|ZodError|"path"|invalid_type/, text);
  }
  const { stderr } = await server.stop();
  assertStructured(stderr);
});

Deno.test("behind another listener (deno serve, Deploy) the app itself answers a stalled body with 408", async () => {
  const store = new MemoryStore();
  const log = quietLogger();
  const { app } = createApp({
    store,
    log,
    makeServer: () => createServer({ store, log, features: [PLAN_VIEW] }),
    bodyTimeoutMs: 200,
  });
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
    },
  });
  const response = await app.request("http://localhost/mcp", {
    method: "POST",
    // A declared length: the body limit then trusts the header and leaves the reading to /mcp.
    headers: { ...MCP_HEADERS, host: "localhost", "content-length": "100" },
    body: stalled,
    duplex: "half",
  } as RequestInit);
  assert.equal(response.status, 408);
  assert.equal(response.headers.get("connection"), "close");
  assert.match((await response.json()).error.message, /did not arrive within 0.2 s/);
});
