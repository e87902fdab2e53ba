/**
 * Access applies unchanged to 2026-07-28 requests (docs/protocol.md "Protocol eras"): the Host/Origin guard,
 * `AUTH_TOKEN`, the tokens file (read-only stays read-only), namespaces and OAuth sign-in, each through
 * a real SDK v2 client pinned to 2026-07-28 (or, for what no client sends, a raw modern request).
 */
import assert from "node:assert/strict";
import { call, fails, ok } from "../support/harness.ts";
import { connectHttp, ENDPOINT, makeApp, modernRequest, send, viaApp } from "../support/http.ts";
import { accessApp, servedAccessApp, tokensFile } from "../support/auth.ts";
import { ConnectorProvider, startIssuer } from "../support/oauth.ts";
import { newClient, StreamableHTTPClientTransport, UnauthorizedError } from "../support/sdk_client.ts";

const { headers: MODERN_HEADERS, body: LIST } = modernRequest("tools/list");

Deno.test("2026-07-28: a foreign Host or Origin is 403 before any MCP handling", async (t) => {
  await using app = makeApp();
  for (
    const [label, headers] of [
      ["Host", { host: "evil.example.com" }],
      ["Origin", { origin: "http://evil.example.com" }],
    ] as const
  ) {
    await t.step(label, async () => {
      const response = await send(app.app, {
        method: "POST",
        headers: { ...MODERN_HEADERS, ...headers },
        body: LIST,
      });
      assert.equal(response.status, 403);
      await response.body?.cancel();
    });
  }
  const fine = await send(app.app, { method: "POST", headers: MODERN_HEADERS, body: LIST });
  assert.equal(fine.status, 200);
  await fine.body?.cancel();
});

Deno.test("2026-07-28: AUTH_TOKEN is required, and with it a pinned client works", async () => {
  const token = "modern-token-0123456789abcdef";
  await using app = makeApp({ authToken: token });
  const bare = await send(app.app, { method: "POST", headers: MODERN_HEADERS, body: LIST });
  assert.equal(bare.status, 401);
  assert.match(bare.headers.get("www-authenticate") ?? "", /^Bearer/);
  await bare.body?.cancel();
  await assert.rejects(() => connectHttp(ENDPOINT, { fetch: viaApp(app.app), era: "modern" }));
  await using signed = await connectHttp(ENDPOINT, {
    fetch: viaApp(app.app),
    era: "modern",
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(signed.client.getProtocolEra(), "modern");
  await ok(signed.client, "createTask", { name: "With the token" });
});

Deno.test("2026-07-28: a read token lists only read-only tools, a changing tool is FORBIDDEN, and namespaces hold", async () => {
  const READ = "reader-secret-0123456789abcdef";
  const WRITE = "writer-secret-0123456789abcdef";
  await using file = await tokensFile([
    { name: "reader", token: READ, namespaces: ["team"], access: "read" },
    { name: "writer", token: WRITE, namespaces: ["team"], access: "write" },
  ]);
  await using app = await accessApp({ authTokensFile: file.path });
  const as = (token: string, path = "/mcp") =>
    connectHttp(`http://127.0.0.1:8585${path}`, {
      fetch: viaApp(app.app),
      era: "modern",
      headers: { authorization: `Bearer ${token}` },
    });
  await using writer = await as(WRITE);
  await ok(writer.client, "createTask", { sessionId: "plan", name: "Team plan" });
  await using reader = await as(READ);
  const tools = (await reader.client.listTools()).tools;
  assert.ok(tools.length > 0 && tools.every((tool) => tool.annotations?.readOnlyHint === true));
  await fails(reader.client, "createTask", { sessionId: "plan", name: "Nope" }, "FORBIDDEN");
  const listed = await call(reader.client, "listTasks", { sessionId: "plan" });
  assert.match(JSON.stringify(listed.structuredContent), /Team plan/, "the reader reads the team's plan");
  assert.ok(!JSON.stringify(listed.structuredContent).includes("Nope"), "nothing was created");
  await assert.rejects(() => as(WRITE, "/mcp/other-team"), "a namespace the token may not use");
});

Deno.test("2026-07-28: a pinned client signs in with OAuth and works in its subject's namespace", async () => {
  await using issuer = await startIssuer();
  await using served = await servedAccessApp({ oauthIssuer: issuer.url });
  const app = served;
  const url = new URL(`${served.url}/mcp`);
  const provider = new ConnectorProvider();
  issuer.grant({ sub: "alice", scope: "checklist:write" });
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await assert.rejects(() => newClient("modern").connect(first), UnauthorizedError);
  assert.ok(provider.code, "the browser came back with a code");
  await first.finishAuth(provider.code);
  await first.close();
  const client = newClient("modern");
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  try {
    assert.equal(client.getProtocolEra(), "modern");
    await ok(client, "createTask", { sessionId: "plan", name: "Alice's plan" });
    assert.ok(
      app.scopes.some((s) => s.namespace === "oauth.alice" && s.access === "write"),
      JSON.stringify(app.scopes),
    );
  } finally {
    await client.close();
  }
});
