/**
 * The Host/Origin guard and absolute-form targets (RFC 9112 section 3.2.2): `GET http://evil.example/
 * HTTP/1.1` with `Host: 127.0.0.1` is a request for evil.example, so the guard judges that host, under
 * our listener (which hands the app the target's host as URL and `Host`) and behind one that builds the
 * URL from the target but keeps the `Host` sent (Deno's, as tests/listener/differential_test.ts shows).
 */
import assert from "node:assert/strict";
import { serveHttp } from "../../lib/listener/serve.ts";
import { LISTENER_OPTIONS } from "../../lib/http/listener_options.ts";
import { quietLogger } from "../support/logs.ts";
import { initializeBody, makeApp, MCP_HEADERS } from "../support/http.ts";
import { exchange, statuses } from "../support/raw_http.ts";

Deno.test("under our listener, an absolute-form target's host is what the guard judges", async (t) => {
  await using app = makeApp();
  const server = await serveHttp({
    hostname: "127.0.0.1",
    port: 0,
    fetch: app.app.fetch,
    log: quietLogger(),
    ...LISTENER_OPTIONS,
  });
  try {
    const host = `127.0.0.1:${server.port}`;
    const body = JSON.stringify(initializeBody());
    const post = (target: string) =>
      `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    await t.step("a foreign host in the target is 403, whatever Host says", async () => {
      for (
        const request of [
          post("http://evil.example/mcp"),
          `GET http://evil.example:${server.port}/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
          `GET http://evil.example/api/sessions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        ]
      ) {
        const { text } = await exchange(server.port, request);
        assert.deepEqual(statuses(text), [403], text);
        assert.match(text, /Forbidden: Host \\"evil\.example(:\d+)?\\" is not allowed/);
      }
    });
    await t.step("a loopback host in the target passes", async () => {
      const { text } = await exchange(server.port, post(`http://localhost:${server.port}/mcp`));
      assert.deepEqual(statuses(text), [200], text);
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("behind a listener that keeps the Host sent, the guard judges the URL's host too", async () => {
  await using app = makeApp();
  const post = (url: string, host: string) =>
    app.app.request(
      new Request(url, {
        method: "POST",
        headers: { ...MCP_HEADERS, host },
        body: JSON.stringify(initializeBody()),
      }),
    );
  const foreign = await post("http://evil.example/mcp", "127.0.0.1:8585");
  assert.equal(foreign.status, 403);
  assert.match((await foreign.json()).error.message, /Host "evil\.example:80" is not allowed/);
  const dashboard = await app.app.request(
    new Request("http://evil.example/", { headers: { host: "localhost" } }),
  );
  assert.equal(dashboard.status, 403);
  await dashboard.body?.cancel();
  // Both loopback: the header and the URL may name different loopback hosts.
  const loopback = await post("http://localhost:8585/mcp", "127.0.0.1:8585");
  assert.equal(loopback.status, 200);
  await loopback.body?.cancel();
  // A Host header on the list does not let through a URL whose host is not (and the reverse).
  const reverse = await post("http://127.0.0.1:8585/mcp", "evil.example");
  assert.equal(reverse.status, 403);
  await reverse.body?.cancel();
});
