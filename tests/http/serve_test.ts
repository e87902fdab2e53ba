/**
 * Real processes on loopback ports: `deno serve main.ts` (the Deno Deploy entry) answers a real
 * client and starts exactly one listener; a token-protected server over a real socket; and the
 * refusal to listen beyond loopback without a token.
 */
import assert from "node:assert/strict";
import { ok } from "../support/harness.ts";
import { serverEnv } from "../support/env.ts";
import { CONFIG, ROOT } from "../support/paths.ts";
import { freePort } from "../support/processes.ts";
import { mainArgs, runToEnd, serveArgs, spawnServer, startHttpProcess } from "../support/server_process.ts";
import { connectHttp } from "../support/http.ts";

/** Sends a hand-written HTTP/1.1 request to 127.0.0.1 and returns the response's status code. */
async function rawStatus(port: number, request: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(request));
    const reply = await new Response(conn.readable).text();
    const status = reply.match(/^HTTP\/1\.1 (\d{3})/);
    assert.ok(status, reply);
    return Number(status[1]);
  } catch (error) {
    try {
      conn.close();
    } catch {
      // closed by reading to the end
    }
    throw error;
  }
}

async function refused(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    await response.body?.cancel();
    return false;
  } catch {
    return true;
  }
}

Deno.test("deno serve main.ts serves MCP through the default export, with one listener", async () => {
  const otherPort = freePort(); // where main() would listen if it started as well
  const server = await spawnServer({ mode: "serve", env: { PORT: String(otherPort) } });
  try {
    await using handle = await connectHttp(`${server.url}/mcp`);
    const { task } = await ok<{ task: { id: string; name: string } }>(handle.client, "createTask", {
      name: "served by deno serve",
    });
    assert.equal(task.name, "served by deno serve");
    const listed = await handle.client.listTools();
    assert.ok(listed.tools.length > 0);
    assert.ok(await refused(otherPort), "main() also listened on PORT");
    // Deno's listener builds the URL from an absolute-form target and keeps the Host sent: the guard
    // judges the target's host (tests/http/absolute_form_guard_test.ts).
    const foreign =
      `GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`;
    assert.equal(await rawStatus(server.port, foreign), 403);
  } finally {
    const { stderr } = await server.stop();
    const listening = stderr.split("\n").filter((line) => line.includes('"serving http"'));
    assert.equal(listening.length, 1, stderr);
    assert.match(listening[0]!, new RegExp(`127\\.0\\.0\\.1:${server.port}/mcp`));
  }
});

/** Deno's own warning for a `deno run` of a module whose default export has `fetch`. */
const SERVE_WARNING = /did you mean to run "deno serve"/;

Deno.test('deno task start prints no "did you mean deno serve" warning, and serves', async () => {
  const tasks = JSON.parse(await Deno.readTextFile(CONFIG)).tasks as Record<string, string>;
  const [deno, ...args] = tasks.start!.split(/\s+/);
  assert.equal(deno, "deno");
  const port = freePort();
  const server = await startHttpProcess(
    { command: Deno.execPath(), args, cwd: ROOT, env: serverEnv({ PORT: String(port) }) },
    { port },
  );
  const { stderr } = await server.stop();
  assert.match(stderr, /"serving http"/);
  assert.doesNotMatch(stderr, SERVE_WARNING, stderr);
});

Deno.test({
  name:
    "deno run -A main.ts without --http serves without the warning where the command line can be read (Linux)",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const server = await spawnServer();
    const { stderr } = await server.stop();
    assert.match(stderr, /"serving http"/);
    assert.doesNotMatch(stderr, SERVE_WARNING, stderr);
  },
});

Deno.test("deno serve exits on SIGTERM while a client is still connected", async () => {
  const server = await spawnServer({ mode: "serve" });
  const handle = await connectHttp(`${server.url}/mcp`);
  try {
    await ok(handle.client, "createTask", { name: "still connected" });
    // The client stays connected (its SSE stream open) while the server is told to stop.
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, `deno serve did not exit by itself on SIGTERM:\n${stderr}`);
  } finally {
    await handle[Symbol.asyncDispose]();
  }
});

Deno.test("deno serve on every interface without AUTH_TOKEN exits 1 with the reason", async () => {
  const port = freePort();
  const { code, stderr } = await runToEnd(
    serveArgs("0.0.0.0", port),
    { env: { LOG_LEVEL: "info" } },
  );
  assert.equal(code, 1, stderr);
  assert.match(stderr, /Refusing to serve 0\.0\.0\.0 without authentication.*AUTH_TOKEN/);
});

Deno.test("on Deno Deploy a server that cannot start answers 500 and logs why, once", async () => {
  const { code, stdout, stderr } = await runToEnd(
    ["run", "-A", "--config", CONFIG, `${ROOT}/tests/http/fixtures/deploy_requests.ts`],
    { env: { DENO_DEPLOYMENT_ID: "test-deployment" } },
  );
  assert.equal(code, 0, stderr);
  assert.deepEqual(stdout.trim().split("\n"), ["500", "500"]);
  const refusals = stderr.trim().split("\n").map((line) => JSON.parse(line)).filter((r) =>
    /^cannot start/.test(r.msg)
  );
  assert.equal(refusals.length, 1, stderr);
  assert.match(refusals[0].error, /Refusing to serve Deno Deploy without authentication/);
});

Deno.test("deno run main.ts with a non-loopback HOST and no token exits 1 before listening", async () => {
  const { code, stderr } = await runToEnd(mainArgs(), {
    env: { HOST: "0.0.0.0", PORT: String(freePort()) },
  });
  assert.equal(code, 1, stderr);
  assert.match(stderr, /cannot start.*Refusing to serve 0\.0\.0\.0.*ALLOW_UNAUTHENTICATED_REMOTE=1/);
  assert.doesNotMatch(stderr, /serving http/);
});

Deno.test("a token-protected server: a real client needs the token; DELETE ends its session", async (t) => {
  const token = crypto.randomUUID();
  await using server = await spawnServer({ env: { AUTH_TOKEN: token }, args: ["--http"] });
  const endpoint = `${server.url}/mcp`;

  await t.step("without the token the client cannot connect (401)", async () => {
    await assert.rejects(() => connectHttp(endpoint), /401|Unauthorized/);
    await assert.rejects(
      () => connectHttp(endpoint, { headers: { Authorization: "Bearer wrong" } }),
      /401|Unauthorized/,
    );
  });

  await t.step("with the token: initialize, a tool call, then DELETE", async () => {
    await using handle = await connectHttp(endpoint, { headers: { Authorization: `Bearer ${token}` } });
    await ok(handle.client, "createTask", { name: "protected" });
    const session = handle.transport.sessionId;
    assert.ok(session);
    await handle.transport.terminateSession();
    const after = await fetch(endpoint, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(after.status, 404);
    await after.body?.cancel();
  });

  await t.step("the Host guard holds on the real socket", async () => {
    // fetch() sets Host itself, so this request is written by hand.
    const status = await rawStatus(
      server.port,
      [
        "POST /mcp HTTP/1.1",
        "Host: evil.example.com",
        `Authorization: Bearer ${token}`,
        "Content-Type: application/json",
        "Content-Length: 2",
        "Connection: close",
        "",
        "{}",
      ].join("\r\n"),
    );
    assert.equal(status, 403);
  });

  await t.step("/healthz needs no token", async () => {
    const response = await fetch(`${server.url}/healthz`);
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
});
