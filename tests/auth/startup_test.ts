/**
 * Access settings in real server processes: `AUTH_TOKEN` trimmed and refused when blank, a bad
 * tokens file or OAuth issuer stopping the start (exit 1, one clear line on stderr), secrets kept
 * out of every log line, and `deno task token` writing an entry a running server accepts.
 */
import assert from "node:assert/strict";
import { connectHttp, initializeBody, MCP_HEADERS } from "../support/http.ts";
import { freePort } from "../support/processes.ts";
import { mainArgs, runToEnd, spawnServer } from "../support/server_process.ts";
import { ok } from "../support/harness.ts";
import { tokensFile } from "../support/auth.ts";
import { ROOT } from "../support/paths.ts";

/** Starts `main.ts --http` with `env`, expecting it to refuse to start. */
async function refusedStart(env: Record<string, string>) {
  const result = await runToEnd(mainArgs(["--http"]), { env: { PORT: String(freePort()), ...env } });
  assert.equal(result.code, 1, `started anyway: ${result.stderr}`);
  const lines = result.stderr.trim().split("\n");
  assert.equal(lines.length, 1, result.stderr);
  const line = JSON.parse(lines[0]!);
  assert.equal(line.msg, "cannot start");
  return line.error as string;
}

Deno.test("AUTH_TOKEN is trimmed; a blank one stops the start with exit 1", async (t) => {
  await t.step("blank or empty: exit 1 naming AUTH_TOKEN", async () => {
    for (const value of ["   ", "", "\t\n"]) {
      assert.match(await refusedStart({ AUTH_TOKEN: value }), /AUTH_TOKEN: is blank/);
    }
  });
  await t.step("surrounding whitespace is not part of the token", async () => {
    await using server = await spawnServer({ env: { AUTH_TOKEN: "  padded-token-123  \n" } });
    await using client = await connectHttp(`${server.url}/mcp`, {
      headers: { authorization: "Bearer padded-token-123" },
    });
    await client.client.ping();
  });
});

Deno.test("a bad tokens file stops the start with exit 1 and a clear reason, never the secret", async () => {
  const secret = "plaintext-secret-that-must-not-leak";
  const cases: [unknown, RegExp][] = [
    [`[{"name": "ci", "token": "${secret}"`, /is not valid JSON/],
    // A token written without quotes: V8's own message would quote it.
    [`[{"name": "ci", "token": ${secret}, "namespaces": "*", "access": "read"}]`, /is not valid JSON/],
    [{ name: "ci", token: secret, namespaces: ["a"], access: "write" }, /invalid/],
    [
      [{ name: "ci", token: secret, namespaces: ["bad name"], access: "write" }],
      /entry 1 \("ci"\).*namespaces.*namespace name/,
    ],
    [[{ name: "ci", token: secret, namespaces: ["a"], access: "admin" }], /entry 1 \("ci"\).*access/],
    [[{ name: "ci", token: secret, namespaces: [], access: "read" }], /lists no namespace/],
    [[{ name: "ci", token: "sha256:abc", namespaces: "*", access: "read" }], /sha256.*64 hex/],
    [[{ name: "ci", token: secret, namespace: ["a"], access: "read" }], /namespace/],
    [
      [
        { name: "ci", token: secret, namespaces: "*", access: "read" },
        { name: "ci", token: `${secret}2`, namespaces: "*", access: "read" },
      ],
      /two entries are named "ci"/,
    ],
    [
      [
        { name: "one", token: secret, namespaces: "*", access: "read" },
        { name: "two", token: secret, namespaces: "*", access: "write" },
      ],
      /"one" and "two" have the same token/,
    ],
  ];
  for (const [content, reason] of cases) {
    await using file = await tokensFile(typeof content === "string" ? content : JSON.stringify(content));
    const error = await refusedStart({ AUTH_TOKENS_FILE: file.path });
    assert.match(error, /AUTH_TOKENS_FILE/);
    assert.match(error, reason);
    // Not even a piece of it (V8 quotes a few characters around a syntax error).
    assert.ok(!error.includes(secret.slice(0, 9)), `the secret leaked: ${error}`);
  }
  assert.match(await refusedStart({ AUTH_TOKENS_FILE: "/nonexistent/tokens.json" }), /cannot be read/);
});

Deno.test("OAUTH_ISSUER needs a fixed audience: off loopback without PUBLIC_URL or OAUTH_AUDIENCE the start is refused", async () => {
  const issuer = { OAUTH_ISSUER: "https://auth.example.com", HOST: "0.0.0.0" };
  const error = await refusedStart(issuer);
  assert.match(error, /OAUTH_ISSUER needs a fixed audience: set PUBLIC_URL .* or OAUTH_AUDIENCE/);
  const fixes: Record<string, string>[] = [{ PUBLIC_URL: "https://mcp.example.com" }, {
    OAUTH_AUDIENCE: "api://checklist",
  }];
  for (const fixed of fixes) {
    await using server = await spawnServer({ env: { ...issuer, ...fixed } });
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200, JSON.stringify(fixed));
  }
  // On loopback, HOST and PORT fix it: the metadata names that URL, whatever Host a request sends.
  await using local = await spawnServer({ env: { OAUTH_ISSUER: "https://auth.example.com" } });
  const metadata = await (await fetch(`${local.url}/.well-known/oauth-protected-resource`)).json();
  assert.equal(metadata.resource, `${local.url}/mcp`);
});

Deno.test("OAUTH_ISSUER must be https (http only on loopback); PUBLIC_URL an origin", async () => {
  assert.match(await refusedStart({ OAUTH_ISSUER: "http://auth.example.com" }), /OAUTH_ISSUER must be https/);
  assert.match(await refusedStart({ OAUTH_ISSUER: "not a url" }), /OAUTH_ISSUER/);
  assert.match(
    await refusedStart({ OAUTH_ISSUER: "https://auth.example.com", PUBLIC_URL: "https://mcp.example.com/x" }),
    /PUBLIC_URL is an origin/,
  );
});

Deno.test("secrets never reach the log; the log names the token", async () => {
  const secret = "ci-secret-0123456789abcdefghij";
  const revoked = "old-secret-0123456789abcdefghij";
  await using file = await tokensFile([
    { name: "ci-bot", token: secret, namespaces: ["team"], access: "write" },
    { name: "old-bot", token: revoked, namespaces: ["team"], access: "read" },
  ]);
  const server = await spawnServer({ env: { AUTH_TOKENS_FILE: file.path, LOG_LEVEL: "debug" } });
  let stderr = "";
  try {
    {
      await using client = await connectHttp(`${server.url}/mcp`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      await ok(client.client, "createTask", { name: "logged call" });
    }
    for (const token of [`${secret}x`, revoked.toUpperCase(), "wrong"]) {
      const response = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
        body: JSON.stringify(initializeBody()),
      });
      assert.equal(response.status, 401);
      await response.body?.cancel();
    }
    const shared = await fetch(`${server.url}/?token=${secret}`, { redirect: "manual" });
    assert.equal(shared.status, 303);
    await shared.body?.cancel();
    await file.write([{ name: "ci-bot", token: secret, namespaces: ["team"], access: "write" }]);
    const gone = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${revoked}` },
      body: JSON.stringify(initializeBody()),
    });
    assert.equal(gone.status, 401);
    await gone.body?.cancel();
  } finally {
    stderr = (await server.stop()).stderr;
  }
  for (const leaked of [secret, revoked, revoked.toUpperCase()]) {
    assert.ok(!stderr.includes(leaked), `a secret is in the log:\n${stderr}`);
  }
  assert.match(stderr, /"tokens file read".*"ci-bot"/);
  assert.match(stderr, /"share link used".*"credential":"ci-bot"/);
  assert.match(stderr, /"tokens file read again"/);
  assert.match(stderr, /"refused request: no valid credential"/);
});

Deno.test("deno task token prints a secret once and writes only its hash; a running server accepts it", async () => {
  await using file = await tokensFile([]);
  const made = await runToEnd(
    [
      "task",
      "--quiet",
      "token",
      "reporter",
      "--namespaces",
      "team,shared",
      "--access",
      "read",
      "--file",
      file.path,
    ],
    { cwd: ROOT },
  );
  assert.equal(made.code, 0, made.stderr);
  const secret = made.stdout.trim();
  assert.match(secret, /^clt_[A-Za-z0-9_-]{43}$/);
  const written = await Deno.readTextFile(file.path);
  assert.ok(!written.includes(secret));
  const [entry] = JSON.parse(written);
  assert.deepEqual(Object.keys(entry), ["name", "token", "namespaces", "access"]);
  assert.match(entry.token, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual([entry.name, entry.namespaces, entry.access], ["reporter", ["team", "shared"], "read"]);
  assert.equal((await Deno.stat(file.path)).mode! & 0o777, 0o600);

  await using server = await spawnServer({ env: { AUTH_TOKENS_FILE: file.path } });
  await using client = await connectHttp(`${server.url}/mcp/shared`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  const tools = (await client.client.listTools()).tools;
  assert.ok(tools.every((t) => t.annotations?.readOnlyHint === true));

  const again = await runToEnd(["task", "--quiet", "token", "reporter", "--file", file.path], { cwd: ROOT });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /two entries are named "reporter"/);
  assert.equal(await Deno.readTextFile(file.path), written, "a refused token leaves the file as it was");
});
