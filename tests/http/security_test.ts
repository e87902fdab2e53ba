/**
 * The hosted endpoint's checks, through `app.request()` (no socket): the DNS-rebinding guard on
 * Host and Origin, CORS for allowed origins only, bearer authentication, and the body limit.
 */
import assert from "node:assert/strict";
import { MAX_BODY_BYTES } from "../../lib/http/mcp_routes.ts";
import { initializeBody, makeApp, MCP_HEADERS, post, send } from "../support/http.ts";

const ping = { jsonrpc: "2.0", id: 7, method: "ping" };

Deno.test("DNS-rebinding guard: a foreign Host or Origin gets 403 before any MCP handling", async (t) => {
  await using app = makeApp();

  await t.step("the rebinding attack's headers are refused", async () => {
    const response = await post(app.app, initializeBody(), {
      host: "evil.example.com",
      origin: "http://evil.example.com",
    });
    assert.equal(response.status, 403);
    const body = await response.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.match(body.error.message, /Host "evil\.example\.com" is not allowed.*ALLOWED_HOSTS/);
    assert.equal(response.headers.get("mcp-session-id"), null, "no session was opened");
  });

  await t.step("a foreign Host alone is refused, whatever the method", async () => {
    for (const method of ["POST", "GET", "DELETE", "OPTIONS"]) {
      const response = await send(app.app, {
        method,
        headers: { ...MCP_HEADERS, host: "attacker.test:8585" },
        body: method === "POST" ? JSON.stringify(initializeBody()) : undefined,
      });
      assert.equal(response.status, 403, method);
      await response.body?.cancel();
    }
  });

  await t.step("a foreign Origin with a loopback Host is refused", async () => {
    for (const origin of ["http://evil.example.com", "null", "https://localhost.evil.com", "file://x"]) {
      const response = await post(app.app, initializeBody(), { host: "localhost:8585", origin });
      assert.equal(response.status, 403, origin);
      assert.match((await response.json()).error.message, /Origin .* is not allowed.*ALLOWED_ORIGINS/);
    }
  });

  await t.step("loopback names pass with any port, and without Origin", async () => {
    const cases: Record<string, string>[] = [
      { host: "localhost" },
      { host: "localhost:1234" },
      { host: "127.0.0.1:8585" },
      { host: "[::1]:8585" },
      { host: "LOCALHOST:9" },
      { host: "localhost:8585", origin: "http://localhost:3000" },
      { host: "127.0.0.1:8585", origin: "https://127.0.0.1" },
      { host: "[::1]", origin: "http://[::1]:6274" },
    ];
    for (const headers of cases) {
      const response = await post(app.app, initializeBody(), headers);
      assert.equal(response.status, 200, JSON.stringify(headers));
      await response.body?.cancel();
    }
  });

  await t.step("look-alike hosts are refused", async () => {
    for (
      const host of ["localhost.evil.com", "127.0.0.1.nip.io", "evil.com:8585"]
    ) {
      const response = await post(app.app, initializeBody(), { host });
      assert.equal(response.status, 403, host);
      await response.body?.cancel();
    }
  });

  await t.step("malformed hosts are 400, with a plain message", async () => {
    for (const host of ["localhost:80:80", "evil.com#@localhost", "", "::1", "a b", "[::1"]) {
      const response = await post(app.app, initializeBody(), { host });
      assert.equal(response.status, 400, host);
      const { error } = await response.json();
      assert.match(error.message, /^Bad Request: the Host header is malformed/, host);
    }
  });

  await t.step("/healthz is not guarded", async () => {
    const response = await send(app.app, { path: "/healthz", headers: { host: "evil.example.com" } });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).status, "ok");
  });
});

Deno.test("ALLOWED_HOSTS, ALLOWED_ORIGINS and HOST extend the allow-lists", async (t) => {
  await using app = makeApp({
    host: "10.1.2.3",
    allowedHosts: ["mcp.example.com", "alt.example.com:9000"],
    allowedOrigins: ["https://app.example.com"],
  });
  const status = async (headers: Record<string, string>) => {
    const response = await post(app.app, initializeBody(), headers);
    await response.body?.cancel();
    return response.status;
  };

  await t.step("a listed name passes with any port", async () => {
    assert.equal(await status({ host: "mcp.example.com" }), 200);
    assert.equal(await status({ host: "mcp.example.com:443" }), 200);
  });
  await t.step("a listed name:port passes with that port only", async () => {
    assert.equal(await status({ host: "alt.example.com:9000" }), 200);
    assert.equal(await status({ host: "alt.example.com:9001" }), 403);
    assert.equal(await status({ host: "alt.example.com" }), 403);
  });
  await t.step("the concrete HOST the server listens on passes", async () => {
    assert.equal(await status({ host: "10.1.2.3:8585" }), 200);
  });
  await t.step("loopback names still pass", async () => {
    assert.equal(await status({ host: "localhost:8585" }), 200);
  });
  await t.step("a listed origin passes; its neighbours do not", async () => {
    assert.equal(await status({ host: "mcp.example.com", origin: "https://app.example.com" }), 200);
    assert.equal(await status({ host: "mcp.example.com", origin: "https://app.example.com:443" }), 200);
    assert.equal(await status({ host: "mcp.example.com", origin: "http://app.example.com" }), 403);
    assert.equal(await status({ host: "mcp.example.com", origin: "https://evil.app.example.com" }), 403);
  });
  await t.step("an unlisted host is refused", async () => {
    assert.equal(await status({ host: "other.example.com" }), 403);
  });
});

Deno.test("ALLOWED_HOSTS=* turns the Host check off but not the Origin check", async () => {
  await using app = makeApp({ allowedHosts: ["*"] });
  const anyHost = await post(app.app, initializeBody(), { host: "whatever.example" });
  assert.equal(anyHost.status, 200);
  await anyHost.body?.cancel();
  const foreignOrigin = await post(app.app, initializeBody(), {
    host: "whatever.example",
    origin: "https://evil.example",
  });
  assert.equal(foreignOrigin.status, 403);
  await foreignOrigin.body?.cancel();
});

Deno.test("CORS: only allowed origins get CORS headers; Mcp-Session-Id is exposed", async (t) => {
  await using app = makeApp({ allowedOrigins: ["https://app.example.com"] });

  await t.step("a preflight from an allowed origin lists the MCP headers", async () => {
    const response = await send(app.app, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, authorization, mcp-session-id",
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("access-control-allow-origin"), "https://app.example.com");
    const allowed = (response.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(",");
    for (
      const header of [
        "content-type",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
      ]
    ) {
      assert.ok(allowed.includes(header), `${header} not allowed: ${allowed}`);
    }
    const methods = response.headers.get("access-control-allow-methods") ?? "";
    for (const method of ["GET", "POST", "DELETE"]) assert.ok(methods.includes(method), methods);
  });

  await t.step("a preflight from a foreign origin is refused", async () => {
    const response = await send(app.app, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    assert.equal(response.status, 403);
    assert.equal(response.headers.get("access-control-allow-origin"), null);
    await response.body?.cancel();
  });

  await t.step("a POST from an allowed origin can read Mcp-Session-Id", async () => {
    const response = await post(app.app, initializeBody(), { origin: "http://localhost:6274" });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("access-control-allow-origin"), "http://localhost:6274");
    assert.match(response.headers.get("access-control-expose-headers") ?? "", /Mcp-Session-Id/i);
    assert.ok(response.headers.get("mcp-session-id"));
    await response.body?.cancel();
  });

  await t.step(
    "a request without Origin gets no CORS header, and Vary: Origin as a browser's would",
    async () => {
      const response = await post(app.app, initializeBody());
      assert.equal(response.status, 200);
      for (const [name] of response.headers) assert.ok(!name.startsWith("access-control-"), name);
      assert.match(response.headers.get("vary") ?? "", /\bOrigin\b/);
      await response.body?.cancel();
      const browser = await post(app.app, initializeBody(), { origin: "http://localhost:6274" });
      assert.match(browser.headers.get("vary") ?? "", /\bOrigin\b/);
      await browser.body?.cancel();
    },
  );
});

Deno.test("AUTH_TOKEN: /mcp needs the bearer token; /healthz stays open", async (t) => {
  const token = "s3cret-token-with-enough-entropy";
  await using app = makeApp({ authToken: token, allowedOrigins: ["https://app.example.com"] });

  await t.step("no Authorization: 401 with a Bearer challenge", async () => {
    const response = await post(app.app, initializeBody());
    assert.equal(response.status, 401);
    assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer realm="checklist-mcp"$/);
    const body = await response.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.match(body.error.message, /Authorization: Bearer/);
  });

  await t.step("a wrong, truncated, extended or differently-cased token: 401 invalid_token", async () => {
    for (
      const value of [
        "Bearer wrong",
        `Bearer ${token.slice(0, -1)}`,
        `Bearer ${token}x`,
        `Bearer ${token.toUpperCase()}`,
        `Basic ${btoa(`user:${token}`)}`,
        token,
        "Bearer",
      ]
    ) {
      const response = await post(app.app, initializeBody(), { authorization: value });
      assert.equal(response.status, 401, value);
      assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer .*error="invalid_token"/);
      await response.body?.cancel();
    }
  });

  await t.step("the right token passes (the scheme is case-insensitive)", async () => {
    for (const value of [`Bearer ${token}`, `bearer ${token}`]) {
      const response = await post(app.app, initializeBody(), { authorization: value });
      assert.equal(response.status, 200, value);
      await response.body?.cancel();
    }
  });

  await t.step("GET and DELETE need it too", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await send(app.app, { method, headers: { accept: "text/event-stream" } });
      assert.equal(response.status, 401, method);
      await response.body?.cancel();
    }
  });

  await t.step("a CORS preflight needs no token, and a 401 carries CORS headers", async () => {
    const preflight = await send(app.app, {
      method: "OPTIONS",
      headers: { origin: "https://app.example.com", "access-control-request-method": "POST" },
    });
    assert.equal(preflight.status, 204);
    const refused = await post(app.app, initializeBody(), { origin: "https://app.example.com" });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("access-control-allow-origin"), "https://app.example.com");
    assert.match(refused.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/i);
    await refused.body?.cancel();
  });

  await t.step("the Host check comes first: a foreign Host gets 403 even with the token", async () => {
    const response = await post(app.app, ping, {
      host: "evil.example.com",
      authorization: `Bearer ${token}`,
    });
    assert.equal(response.status, 403);
    await response.body?.cancel();
  });

  await t.step("/healthz needs no token", async () => {
    const response = await send(app.app, { path: "/healthz" });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
});

Deno.test("request bodies over 1 MiB get 413, declared or streamed", async (t) => {
  await using app = makeApp();
  const big = JSON.stringify({ ...initializeBody(), padding: "x".repeat(MAX_BODY_BYTES) });

  await t.step("a declared Content-Length over the limit", async () => {
    const response = await post(app.app, big, {
      "content-length": String(new TextEncoder().encode(big).length),
    });
    assert.equal(response.status, 413);
    assert.match((await response.json()).error.message, /Payload Too Large.*1048576/);
  });

  await t.step("a chunked body that grows over the limit", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_BODY_BYTES + chunk.length) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await send(app.app, {
      method: "POST",
      headers: { ...MCP_HEADERS, "transfer-encoding": "chunked" },
      body: stream,
    });
    assert.equal(response.status, 413);
    await response.body?.cancel();
  });

  await t.step("a body just under the limit is read (and answered as MCP)", async () => {
    const body = initializeBody();
    const bare = JSON.stringify(body).length;
    const pad = "x".repeat(MAX_BODY_BYTES - bare - 40);
    const fits = JSON.stringify({ ...body, params: { ...body.params as object, _meta: { pad } } });
    assert.ok(fits.length > MAX_BODY_BYTES - 100 && fits.length <= MAX_BODY_BYTES, String(fits.length));
    const response = await post(app.app, fits);
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
});

Deno.test("malformed requests get JSON-RPC errors, never a 500", async (t) => {
  await using app = makeApp();
  const cases: [string, RequestInit & { path?: string }, number][] = [
    ["invalid JSON", { method: "POST", headers: MCP_HEADERS, body: "{not json" }, 400],
    ["empty body", { method: "POST", headers: MCP_HEADERS, body: "" }, 400],
    ["GET without a session", { method: "GET", headers: { accept: "text/event-stream" } }, 400],
    ["an unknown session", {
      method: "POST",
      headers: { ...MCP_HEADERS, "mcp-session-id": "nope" },
      body: JSON.stringify(ping),
    }, 404],
  ];
  for (const [name, init, status] of cases) {
    await t.step(name, async () => {
      const response = await send(app.app, init);
      assert.equal(response.status, status);
      const body = await response.json();
      assert.equal(body.jsonrpc, "2.0");
      assert.equal(typeof body.error.code, "number");
    });
  }
});
