/**
 * The tokens file (`AUTH_TOKENS_FILE`) through the real HTTP app and a real SDK client: plaintext
 * and hashed secrets, read and write access, namespaces in the URL, connections bound to their
 * credential, and revocation by rewriting the file while the app runs.
 */
import assert from "node:assert/strict";
import { ALL_TOOLS } from "../../lib/mcp/server.ts";
import { initializeBody, openRawConnection, post } from "../support/http.ts";
import { call, fails, ok } from "../support/harness.ts";
import { accessApp, connectWith, sha256Hex, tokensFile } from "../support/auth.ts";

const WRITER = "writer-secret-0123456789abcdef";
const READER = "reader-secret-0123456789abcdef";
const ADMIN = "admin-secret-0123456789abcdef";

async function teamFile() {
  return await tokensFile([
    { name: "ci", token: WRITER, namespaces: ["team-a", "shared"], access: "write" },
    { name: "viewer", token: `sha256:${await sha256Hex(READER)}`, namespaces: ["team-a"], access: "read" },
    {
      name: "admin",
      token: `sha256:${(await sha256Hex(ADMIN)).toUpperCase()}`,
      namespaces: "*",
      access: "write",
    },
  ]);
}

const READ_ONLY_TOOLS = ALL_TOOLS.filter((t) => t.annotations.readOnlyHint).map((t) => t.name).sort();
const CHANGING_TOOLS = ALL_TOOLS.filter((t) => !t.annotations.readOnlyHint).map((t) => t.name);

Deno.test("tokens file: a plaintext and a sha256 secret both sign in; a wrong one is 401 invalid_token", async () => {
  await using file = await teamFile();
  await using app = await accessApp({ authTokensFile: file.path });
  for (const token of [WRITER, READER, ADMIN]) {
    await using client = await connectWith(app.app, token);
    await client.client.ping();
  }
  for (const token of ["nope", `sha256:${await sha256Hex(READER)}`, READER.slice(0, -1), `${WRITER}x`]) {
    const response = await post(app.app, initializeBody(), { authorization: `Bearer ${token}` });
    assert.equal(response.status, 401, token);
    assert.match(
      response.headers.get("www-authenticate") ?? "",
      /^Bearer realm="checklist-mcp", error="invalid_token"/,
    );
    await response.body?.cancel();
  }
  const missing = await post(app.app, initializeBody());
  assert.equal(missing.status, 401);
  assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="checklist-mcp"');
  await missing.body?.cancel();
});

Deno.test("read access lists only the read-only tools; a changing tool is FORBIDDEN and changes nothing", async () => {
  await using file = await teamFile();
  await using app = await accessApp({ authTokensFile: file.path });
  await using writer = await connectWith(app.app, WRITER);
  await ok(writer.client, "createTask", { sessionId: "plan", id: "a", name: "First" });
  const before = await app.store.space("team-a").readTree("plan", (tree) => JSON.stringify(tree));

  await using reader = await connectWith(app.app, READER);
  const listed = (await reader.client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(listed, READ_ONLY_TOOLS);
  assert.ok(listed.every((name) => ALL_TOOLS.find((t) => t.name === name)!.annotations.readOnlyHint));
  assert.ok(READ_ONLY_TOOLS.length > 0 && CHANGING_TOOLS.length > 0);
  const args: Record<string, Record<string, unknown>> = {
    createTask: { sessionId: "plan", id: "b", name: "Second" },
    startTask: { sessionId: "plan", id: "a" },
    update_tasks: { sessionId: "plan", tasks: [] },
    mem_progress: { project: "p", content: "{}" },
  };
  for (const name of CHANGING_TOOLS) {
    const message = await fails(reader.client, name, args[name] ?? {}, "FORBIDDEN");
    assert.match(message, /read access/);
  }
  assert.equal(await app.store.space("team-a").readTree("plan", (tree) => JSON.stringify(tree)), before);
  assert.deepEqual(await app.store.space("team-a").listProjects(), []);
  // Reading works.
  const listedTree = await call(reader.client, "listTasks", { sessionId: "plan" });
  assert.ok(!listedTree.isError);
  // The writer's list is the full one.
  assert.equal((await writer.client.listTools()).tools.length, ALL_TOOLS.length);
});

Deno.test("/mcp works in the token's own namespace, /mcp/NAME in NAME; not allowed is 403, an invalid name 400", async () => {
  await using file = await teamFile();
  await using app = await accessApp({ authTokensFile: file.path });
  {
    await using ci = await connectWith(app.app, WRITER);
    await ci.client.ping();
    await using shared = await connectWith(app.app, WRITER, "/mcp/shared");
    await shared.client.ping();
    await using admin = await connectWith(app.app, ADMIN);
    await admin.client.ping();
    await using anywhere = await connectWith(app.app, ADMIN, "/mcp/anything.else_1");
    await anywhere.client.ping();
    await using viewer = await connectWith(app.app, READER, "/mcp/team-a");
    await viewer.client.ping();
  }
  assert.deepEqual(app.scopes, [
    { namespace: "team-a", access: "write" },
    { namespace: "shared", access: "write" },
    { namespace: "default", access: "write" },
    { namespace: "anything.else_1", access: "write" },
    { namespace: "team-a", access: "read" },
  ]);

  for (const [token, path] of [[READER, "/mcp/shared"], [WRITER, "/mcp/default"], [WRITER, "/mcp/team-b"]]) {
    const response = await post(app.app, initializeBody(), { authorization: `Bearer ${token}` }, path);
    assert.equal(response.status, 403, path);
    const body = await response.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.id, null);
    assert.match(body.error.message, /may not use namespace/);
  }
  for (const path of ["/mcp/bad%20name", `/mcp/${"x".repeat(65)}`, "/mcp/%C3%A9t%C3%A9"]) {
    const response = await post(app.app, initializeBody(), { authorization: `Bearer ${ADMIN}` }, path);
    assert.equal(response.status, 400, path);
    assert.match((await response.json()).error.message, /namespace name/);
  }
  // Without a credential the namespace is not even looked at.
  const anonymous = await post(app.app, initializeBody(), {}, "/mcp/shared");
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  assert.equal(app.scopes.length, 5, "no server was made for a refused request");
});

Deno.test("a connection belongs to the credential and namespace that opened it", async () => {
  await using file = await teamFile();
  await using app = await accessApp({ authTokensFile: file.path });
  const id = await openRawConnection(app.app, { authorization: `Bearer ${WRITER}` });
  const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
  const own = await post(app.app, ping, { authorization: `Bearer ${WRITER}`, "mcp-session-id": id });
  assert.equal(own.status, 200);
  await own.body?.cancel();
  const other = await post(app.app, ping, { authorization: `Bearer ${ADMIN}`, "mcp-session-id": id });
  assert.equal(other.status, 404, "another credential cannot use the connection");
  await other.body?.cancel();
  const elsewhere = await post(
    app.app,
    ping,
    { authorization: `Bearer ${WRITER}`, "mcp-session-id": id },
    "/mcp/shared",
  );
  assert.equal(elsewhere.status, 404, "the connection does not move to another namespace");
  await elsewhere.body?.cancel();
});

Deno.test("revocation: rewriting the file takes effect on the next request, live connections included", async () => {
  await using file = await teamFile();
  await using app = await accessApp({ authTokensFile: file.path });
  await using live = await connectWith(app.app, READER);
  await live.client.ping();

  // Revoke "viewer", turn "ci" into a read token: no restart.
  await file.write([
    { name: "ci", token: WRITER, namespaces: ["team-a"], access: "read" },
    { name: "admin", token: `sha256:${await sha256Hex(ADMIN)}`, namespaces: "*", access: "write" },
  ]);
  await assert.rejects(() => live.client.ping(), /401|Unauthorized/);
  const fresh = await post(app.app, initializeBody(), { authorization: `Bearer ${READER}` });
  assert.equal(fresh.status, 401);
  await fresh.body?.cancel();
  await using ci = await connectWith(app.app, WRITER);
  await fails(ci.client, "createTask", { name: "x" }, "FORBIDDEN");

  // A file that turns bad admits nobody until it is fixed.
  await file.write("[{ not json");
  const broken = await post(app.app, initializeBody(), { authorization: `Bearer ${ADMIN}` });
  assert.equal(broken.status, 401);
  await broken.body?.cancel();
  await file.write([{ name: "admin", token: ADMIN, namespaces: "*", access: "write" }]);
  await using back = await connectWith(app.app, ADMIN);
  await back.client.ping();
});
