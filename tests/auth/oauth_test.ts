/**
 * The OAuth 2.1 resource server against a real authorization server (oauth2-mock-server) started
 * here: the metadata routes, the 401 challenge, a connector signing in through the SDK (authorization
 * code with PKCE), isolation by subject, scopes, every kind of bad token, and a key rotation.
 */
import assert from "node:assert/strict";
import { base64url } from "jose";
import { OAuth2Server } from "oauth2-mock-server";
import type { AccessSettings } from "../../lib/auth/authenticator.ts";
import { ALL_TOOLS } from "../../lib/mcp/server.ts";
import { connectHttp, initializeBody, MCP_HEADERS } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";
import { fails, ok } from "../support/harness.ts";
import { accessApp, connectWith, servedAccessApp, tokensFile } from "../support/auth.ts";
import { type Issuer, signIn, startIssuer } from "../support/oauth.ts";
import { recordingLogger } from "../support/logs.ts";

/** An app with OAuth (plus `extra` settings) served on a loopback port, and its issuer. */
async function setUp(
  extra: Partial<AccessSettings> = {},
  tuning: { jwksCooldownMs?: number; clockToleranceSec?: number } = { jwksCooldownMs: 30_000 },
) {
  const issuer = await startIssuer();
  const served = await servedAccessApp({ oauthIssuer: issuer.url, ...extra }, { tuning });
  const app = served;
  return {
    issuer,
    app,
    url: served.url,
    mcp: `${served.url}/mcp`,
    metadataUrl: `${served.url}/.well-known/oauth-protected-resource/mcp`,
    [Symbol.asyncDispose]: async () => {
      await served[Symbol.asyncDispose]();
      await issuer[Symbol.asyncDispose]();
    },
  };
}

/** A token from `issuer` with the claims of a good one for `audience`, changed by `change`. */
function token(
  issuer: Issuer | OAuth2Server,
  audience: string,
  change: (header: Record<string, unknown>, payload: Record<string, unknown>) => void = () => {},
  options: { expiresIn?: number; kid?: string } = {},
): Promise<string> {
  const server = "server" in issuer ? issuer.server : issuer;
  return server.issuer.buildToken({
    ...options,
    scopesOrTransform: (header, payload) => {
      Object.assign(payload, { sub: "alice", scope: "checklist:write", aud: audience });
      change(header as Record<string, unknown>, payload as Record<string, unknown>);
    },
  });
}

/** POSTs initialize to `url` with `Bearer token`. */
async function initializeWith(url: string, bearer?: string): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }) },
    body: JSON.stringify(initializeBody()),
  });
}

Deno.test("protected-resource metadata at both well-known paths names the issuer and the scopes", async () => {
  await using env = await setUp();
  for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
    const response = await fetch(`${env.url}${path}`, { headers: { origin: "https://claude.ai" } });
    assert.equal(response.status, 200, path);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.deepEqual(await response.json(), {
      resource: env.mcp,
      authorization_servers: [env.issuer.url],
      scopes_supported: ["checklist:read", "checklist:write"],
      bearer_methods_supported: ["header"],
      resource_name: "checklist-mcp",
    });
  }
});

Deno.test("PUBLIC_URL sets the resource and the metadata address behind a proxy", async () => {
  await using env = await setUp({ publicUrl: "https://checklist.example.com" });
  const metadata = await (await fetch(`${env.url}/.well-known/oauth-protected-resource`)).json();
  assert.equal(metadata.resource, "https://checklist.example.com/mcp");
  const refused = await initializeWith(env.mcp);
  assert.equal(
    refused.headers.get("www-authenticate"),
    'Bearer resource_metadata="https://checklist.example.com/.well-known/oauth-protected-resource/mcp"',
  );
  await refused.body?.cancel();
  // A token for the public resource is accepted; one for the internal address is not.
  const good = await initializeWith(env.mcp, await token(env.issuer, "https://checklist.example.com/mcp"));
  assert.equal(good.status, 200);
  await good.body?.cancel();
  const internal = await initializeWith(env.mcp, await token(env.issuer, env.mcp));
  assert.equal(internal.status, 401);
  await internal.body?.cancel();
});

Deno.test("the audience is fixed at start: a token for another host the guard lets in is refused", async () => {
  await using issuer = await startIssuer();
  // In process, the endpoint is http://127.0.0.1:8585/mcp: the audience is that, or the same port
  // by another loopback name, whatever the Host header or the request's URL says.
  await using app = await accessApp({ oauthIssuer: issuer.url }, {
    config: { allowedHosts: ["other.example"] },
  });
  const attempt = async (audience: string, url: string) => {
    const response = await app.app.request(url, {
      method: "POST",
      headers: {
        ...MCP_HEADERS,
        host: new URL(url).host,
        authorization: `Bearer ${await token(issuer, audience)}`,
      },
      body: JSON.stringify(initializeBody()),
    });
    await response.body?.cancel();
    return response.status;
  };
  assert.equal(
    await attempt("http://other.example/mcp", "http://other.example/mcp"),
    401,
    "another service's token",
  );
  assert.equal(await attempt("http://127.0.0.1:8585/mcp", "http://other.example/mcp"), 200);
  assert.equal(await attempt("http://localhost:8585/mcp", "http://127.0.0.1:8585/mcp"), 200);
  assert.equal(await attempt("http://127.0.0.1:9999/mcp", "http://127.0.0.1:9999/mcp"), 401, "another port");
});

Deno.test("a 401 names the metadata in WWW-Authenticate, with error=invalid_token when a token was refused", async () => {
  await using env = await setUp();
  for (const url of [env.mcp, `${env.mcp}/alice`, `${env.url}/`, `${env.url}/api/view`]) {
    const missing = url.endsWith("/mcp") || url.endsWith("/alice")
      ? await initializeWith(url)
      : await fetch(url);
    assert.equal(missing.status, 401, url);
    assert.equal(
      missing.headers.get("www-authenticate"),
      `Bearer resource_metadata="${env.metadataUrl}"`,
      url,
    );
    await missing.body?.cancel();
  }
  const refused = await initializeWith(env.mcp, "not-a-known-token");
  assert.equal(refused.status, 401);
  assert.match(
    refused.headers.get("www-authenticate") ?? "",
    new RegExp(`^Bearer resource_metadata="${env.metadataUrl}", error="invalid_token"`),
  );
  await refused.body?.cancel();
});

Deno.test("a connector signs in with the authorization code flow and PKCE, then uses the tools", async () => {
  await using env = await setUp();
  env.issuer.grant({ sub: "alice", scope: "checklist:write" });
  await using alice = await signIn(env.mcp);
  const { task } = await ok<{ task: { name: string } }>(alice.client, "createTask", { name: "Signed in" });
  assert.equal(task.name, "Signed in");

  const [authorize] = alice.provider.visited;
  assert.ok(authorize, "the browser was sent to the issuer");
  assert.equal(authorize.origin, env.issuer.url);
  assert.equal(authorize.searchParams.get("client_id"), "checklist-connector");
  assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
  assert.match(authorize.searchParams.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.equal(authorize.searchParams.get("resource"), env.mcp);
  assert.equal(authorize.searchParams.get("scope"), "checklist:read checklist:write");
  // The access token (and the ID token signed alongside it) were asked for this resource.
  assert.ok(env.issuer.resources.length > 0);
  assert.deepEqual(new Set(env.issuer.resources), new Set([env.mcp]));
  assert.deepEqual(env.app.scopes.at(-1), { namespace: "oauth.alice", access: "write" });
});

Deno.test("isolation by subject: each signed-in user works in their own namespace, and only there", async () => {
  await using env = await setUp();
  env.issuer.grant({ sub: "alice", scope: "checklist:write" });
  await using alice = await signIn(env.mcp);
  await ok(alice.client, "createTask", { sessionId: "plan", name: "Alice's task" });
  env.issuer.grant({ sub: "auth0|bob@example.com", scope: "checklist:write" });
  await using bob = await signIn(env.mcp);
  await ok(bob.client, "listTasks", { sessionId: "plan" });
  const namespaces = env.app.scopes.map((s) => s.namespace);
  assert.equal(namespaces[0], "oauth.alice");
  assert.match(namespaces.at(-1)!, /^oauth\.auth0_bob_example\.com-[0-9a-f]{16}$/);

  // Alice's token opens /mcp/oauth.alice, not Bob's namespace, nor alice, nor default.
  const aliceToken = alice.provider.tokens()!.access_token;
  for (
    const [path, status] of [
      ["/oauth.alice", 200],
      [`/${namespaces.at(-1)}`, 403],
      ["/alice", 403],
      ["/default", 403],
    ] as const
  ) {
    const response = await initializeWith(`${env.mcp}${path}`, aliceToken);
    assert.equal(response.status, status, path);
    await response.body?.cancel();
  }
});

Deno.test("scope checklist:read gives read access; a token without a checklist scope is 403 insufficient_scope", async () => {
  await using env = await setUp();
  env.issuer.grant({ sub: "carol", scope: "openid checklist:read" });
  await using carol = await signIn(env.mcp);
  const tools = (await carol.client.listTools()).tools;
  assert.deepEqual(
    tools.map((t) => t.name).sort(),
    ALL_TOOLS.filter((t) => t.annotations.readOnlyHint).map((t) => t.name).sort(),
  );
  await fails(carol.client, "createTask", { name: "no" }, "FORBIDDEN");

  const unscoped = await initializeWith(
    env.mcp,
    await token(env.issuer, env.mcp, (_h, p) => (p.scope = "openid email")),
  );
  assert.equal(unscoped.status, 403);
  assert.match(unscoped.headers.get("www-authenticate") ?? "", /error="insufficient_scope"/);
  assert.match(unscoped.headers.get("www-authenticate") ?? "", /scope="checklist:read checklist:write"/);
  await unscoped.body?.cancel();
  // `scp` as a list (Okta, Entra ID) counts too.
  const scp = await initializeWith(
    env.mcp,
    await token(env.issuer, env.mcp, (_h, p) => {
      delete p.scope;
      p.scp = ["checklist:write"];
    }),
  );
  assert.equal(scp.status, 200);
  await scp.body?.cancel();
});

Deno.test("refused: expired, not yet valid, wrong audience, wrong issuer, foreign key, alg none, HS256 with the public key", async (t) => {
  await using env = await setUp();
  const good = await token(env.issuer, env.mcp);
  const accepted = await initializeWith(env.mcp, good);
  assert.equal(accepted.status, 200, "the baseline token is accepted");
  await accepted.body?.cancel();

  const foreign = new OAuth2Server();
  const realKid = env.issuer.server.issuer.keys.get()!.kid;
  await foreign.issuer.keys.generate("RS256");
  await foreign.issuer.keys.generate("RS256", { kid: realKid });
  await foreign.start(0, "127.0.0.1");
  try {
    const [header, payload] = good.split(".") as [string, string];
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload)));
    const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
    const publicJwk = env.issuer.server.issuer.keys.toJSON()[0]!;
    const hs256 = async () => {
      const key = await crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(JSON.stringify(publicJwk)),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const input = `${encode({ alg: "HS256", typ: "JWT", kid: realKid })}.${payload}`;
      const signature = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(input));
      return `${input}.${base64url.encode(new Uint8Array(signature))}`;
    };
    const bad: [string, () => Promise<string>][] = [
      ["expired", () => token(env.issuer, env.mcp, () => {}, { expiresIn: -120 })],
      [
        "not yet valid",
        () => token(env.issuer, env.mcp, (_h, p) => (p.nbf = Math.floor(Date.now() / 1000) + 600)),
      ],
      ["another resource's audience", () => token(env.issuer, "https://other.example.com/mcp")],
      ["no audience", () => token(env.issuer, env.mcp, (_h, p) => delete p.aud)],
      ["another issuer", () => token(env.issuer, env.mcp, (_h, p) => (p.iss = "https://evil.example.com"))],
      [
        "a foreign key with an unknown kid",
        () => token(foreign, env.mcp, (_h, p) => (p.iss = env.issuer.url)),
      ],
      [
        "a foreign key under the issuer's kid",
        () => token(foreign, env.mcp, (_h, p) => (p.iss = env.issuer.url), { kid: realKid }),
      ],
      ["alg none", () => Promise.resolve(`${encode({ alg: "none", typ: "JWT" })}.${payload}.`)],
      [
        "alg none with the issuer's kid",
        () => Promise.resolve(`${encode({ alg: "none", kid: realKid })}.${payload}.`),
      ],
      ["HS256 keyed with the public key", hs256],
      [
        "a tampered payload",
        () => Promise.resolve(`${header}.${encode({ ...claims, sub: "mallory" })}.${good.split(".")[2]}`),
      ],
      ["no exp", () => token(env.issuer, env.mcp, (_h, p) => delete p.exp)],
    ];
    for (const [what, make] of bad) {
      await t.step(what, async () => {
        const response = await initializeWith(env.mcp, await make());
        assert.equal(response.status, 401, what);
        assert.match(response.headers.get("www-authenticate") ?? "", /error="invalid_token"/, what);
        await response.body?.cancel();
      });
    }
  } finally {
    await foreign.stop();
  }
  assert.ok(env.app.scopes.length === 1, "no server was made for a refused token");
});

Deno.test("a key rotation at the issuer is picked up: an unknown kid fetches the key set again", async () => {
  await using env = await setUp({}, { jwksCooldownMs: 0 });
  const first = await initializeWith(env.mcp, await token(env.issuer, env.mcp));
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const rotated = await env.issuer.server.issuer.keys.generate("ES256");
  const second = await initializeWith(
    env.mcp,
    await token(env.issuer, env.mcp, () => {}, { kid: rotated.kid }),
  );
  assert.equal(second.status, 200, "a token signed by the new key is accepted without a restart");
  await second.body?.cancel();
});

Deno.test("OAUTH_AUDIENCE and OAUTH_NAMESPACE_CLAIM: the audience an issuer uses, the namespace from another claim", async () => {
  await using env = await setUp({ oauthAudience: "api://checklist", oauthNamespaceClaim: "org" });
  const good = await token(env.issuer, "api://checklist", (_h, p) => (p.org = "acme"));
  const response = await initializeWith(env.mcp, good);
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.deepEqual(env.app.scopes, [{ namespace: "oauth.acme", access: "write" }]);
  const wrongAudience = await initializeWith(
    env.mcp,
    await token(env.issuer, env.mcp, (_h, p) => (p.org = "acme")),
  );
  assert.equal(wrongAudience.status, 401);
  await wrongAudience.body?.cancel();
  const noClaim = await initializeWith(env.mcp, await token(env.issuer, "api://checklist"));
  assert.equal(noClaim.status, 401, "a token without the namespace claim is refused");
  await noClaim.body?.cancel();
});

Deno.test("static tokens keep working beside OAuth", async () => {
  await using env = await setUp({ authToken: "static-token-0123456789" });
  await using client = await connectWith(env.app.app, "static-token-0123456789");
  await ok(client.client, "createTask", { name: "with the static token" });
  assert.deepEqual(env.app.scopes, [{ namespace: "default", access: "write" }]);
});

Deno.test("an accepted token is remembered no longer than it is valid", async () => {
  await using env = await setUp({}, { clockToleranceSec: 0 });
  const shortLived = await token(env.issuer, env.mcp, () => {}, { expiresIn: 2 });
  for (let i = 0; i < 2; i++) {
    const response = await initializeWith(env.mcp, shortLived);
    assert.equal(response.status, 200);
    await response.body?.cancel();
  }
  await new Promise((resolve) => setTimeout(resolve, 2100));
  const expired = await initializeWith(env.mcp, shortLived);
  assert.equal(expired.status, 401);
  assert.match(expired.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  await expired.body?.cancel();
});

Deno.test("main.ts with OAUTH_ISSUER: a connector signs in to the real server process, static tokens beside", async () => {
  await using issuer = await startIssuer();
  await using server = await spawnServer({
    env: { OAUTH_ISSUER: issuer.url, AUTH_TOKEN: "ci-token-0123456789" },
  });
  const metadata = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json();
  assert.equal(metadata.resource, `${server.url}/mcp`);
  issuer.grant({ sub: "dana", scope: "checklist:write" });
  await using dana = await signIn(`${server.url}/mcp`);
  await ok(dana.client, "createTask", { name: "through the real process" });
  await using ci = await connectHttp(`${server.url}/mcp`, {
    headers: { authorization: "Bearer ci-token-0123456789" },
  });
  await ci.client.ping();
});

Deno.test("OAuth: a claim equal to a tokens-file namespace never opens it, unless OAUTH_NAMESPACES=shared says so", async (t) => {
  await using file = await tokensFile([
    { name: "team", token: "team-secret-0123456789abcdef", namespaces: ["team-a"], access: "write" },
  ]);
  for (const mode of ["prefixed", "shared"] as const) {
    await t.step(mode, async () => {
      await using env = await setUp({ authTokensFile: file.path, oauthNamespaces: mode });
      await using team = await connectWith(env.app.app, "team-secret-0123456789abcdef");
      await ok(team.client, "createTask", { sessionId: "plan", name: "Team A's plan" });
      const bearer = await token(env.issuer, env.mcp, (_h, p) => (p.sub = "team-a"));
      await using user = await connectHttp(env.mcp, { headers: { authorization: `Bearer ${bearer}` } });
      const seen = await ok<{ tasks: { name: string }[] }>(user.client, "listTasks", { sessionId: "plan" });
      const into = await initializeWith(`${env.mcp}/team-a`, bearer);
      await into.body?.cancel();
      if (mode === "prefixed") {
        assert.equal(env.app.scopes.at(-1)!.namespace, "oauth.team-a");
        assert.deepEqual(seen.tasks, [], "the team's plan is not the user's");
        assert.equal(into.status, 403, "nor reachable by name");
      } else {
        assert.deepEqual(seen.tasks.map((task) => task.name), ["Team A's plan"], "one space, as configured");
        assert.equal(into.status, 200);
      }
    });
  }
});

Deno.test("OAuth: a subject that is literally another user's mapped namespace gets a namespace of its own", async () => {
  await using env = await setUp();
  const first = await token(env.issuer, env.mcp, (_h, p) => (p.sub = "auth0|66a1"));
  await using victim = await connectHttp(env.mcp, { headers: { authorization: `Bearer ${first}` } });
  await ok(victim.client, "createTask", { sessionId: "plan", name: "Victim's secret task" });
  const mapped = env.app.scopes.at(-1)!.namespace;
  assert.match(mapped, /^oauth\.auth0_66a1-[0-9a-f]{16}$/);

  const second = await token(env.issuer, env.mcp, (_h, p) => (p.sub = mapped));
  await using attacker = await connectHttp(env.mcp, { headers: { authorization: `Bearer ${second}` } });
  const own = env.app.scopes.at(-1)!.namespace;
  assert.notEqual(own, mapped, "the attacker's namespace is not the victim's");
  const seen = await ok<{ tasks: unknown[] }>(attacker.client, "listTasks", { sessionId: "plan" });
  assert.deepEqual(seen.tasks, [], "the victim's tasks are not visible");
  await ok(attacker.client, "createTask", { sessionId: "plan", name: "Attacker's task" });
  const after = await ok<{ tasks: { name: string }[] }>(victim.client, "listTasks", { sessionId: "plan" });
  assert.deepEqual(after.tasks.map((t) => t.name), ["Victim's secret task"], "nor overwritten");
  const into = await initializeWith(`${env.mcp}/${mapped}`, second);
  assert.equal(into.status, 403, "nor reachable by name");
  await into.body?.cancel();
});

Deno.test("OAuth: an issuer whose metadata names another issuer is reported as an issuer mismatch, not as unreachable", async () => {
  await using issuer = await startIssuer();
  const port = new URL(issuer.url).port;
  issuer.server.issuer.url = `http://localhost:${port}`; // its metadata names localhost
  const configured = `http://127.0.0.1:${port}`; // the same server, by another name
  const { log, records } = recordingLogger();
  await using served = await servedAccessApp({ oauthIssuer: configured }, { log });
  const bearer = await issuer.server.issuer.buildToken({
    scopesOrTransform: (_h, p) => Object.assign(p, { sub: "alice", scope: "checklist:write" }),
  });
  const response = await initializeWith(`${served.url}/mcp`, bearer);
  assert.equal(response.status, 503);
  const body = await response.json();
  assert.match(body.error.message, /issuer mismatch/);
  assert.match(body.error.message, new RegExp(`localhost:${port}`));
  assert.doesNotMatch(body.error.message, /cannot be reached/);
  const page = await fetch(`${served.url}/api/view`, { headers: { authorization: `Bearer ${bearer}` } });
  assert.equal(page.status, 503);
  assert.match((await page.json()).error.message, /issuer mismatch/);
  const logged = records.filter((r) => r.msg === "refused request: no valid credential");
  assert.ok(logged.length >= 1);
  assert.match(String(logged[0]!.detail), /issuer mismatch/);
  assert.ok(!JSON.stringify(records).includes(bearer), "the token is never logged");
});
