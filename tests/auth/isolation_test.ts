/**
 * Namespaces chosen by access keep data apart (with the store's spaces): what one credential writes in
 * its namespace, another credential in another namespace never sees, over the tokens file and OAuth.
 */
import assert from "node:assert/strict";
import { call, ok, textOf } from "../support/harness.ts";
import { signIn, startIssuer } from "../support/oauth.ts";
import { accessApp, connectWith, servedAccessApp, tokensFile } from "../support/auth.ts";

const A = "team-a-secret-0123456789abcdef";
const B = "team-b-secret-0123456789abcdef";
const ADMIN = "admin-secret-0123456789abcdef";

async function sees(client: Parameters<typeof ok>[0], name: string): Promise<boolean> {
  const result = await call(client, "listTasks", { sessionId: "plan" });
  return !result.isError && textOf(result).includes(name);
}

Deno.test("tokens file: each token works in its own namespace; /mcp/NAME reaches another only when allowed", async () => {
  await using file = await tokensFile([
    { name: "a", token: A, namespaces: ["team-a"], access: "write" },
    { name: "b", token: B, namespaces: ["team-b"], access: "write" },
    { name: "admin", token: ADMIN, namespaces: "*", access: "write" },
  ]);
  await using app = await accessApp({ authTokensFile: file.path });
  await using a = await connectWith(app.app, A);
  await ok(a.client, "createTask", { sessionId: "plan", name: "Team A's secret plan" });
  await using b = await connectWith(app.app, B);
  assert.equal(await sees(b.client, "Team A's secret plan"), false);
  await ok(b.client, "createTask", { sessionId: "plan", name: "Team B's plan" });
  assert.equal(await sees(a.client, "Team B's plan"), false);

  await using adminDefault = await connectWith(app.app, ADMIN);
  assert.equal(
    await sees(adminDefault.client, "Team A's secret plan"),
    false,
    "default is another namespace",
  );
  await using adminA = await connectWith(app.app, ADMIN, "/mcp/team-a");
  assert.equal(await sees(adminA.client, "Team A's secret plan"), true);
  assert.equal(await sees(adminA.client, "Team B's plan"), false);
});

Deno.test("OAuth: two subjects signed in to the same URL never see each other's plans", async () => {
  await using issuer = await startIssuer();
  await using served = await servedAccessApp({ oauthIssuer: issuer.url });
  issuer.grant({ sub: "alice", scope: "checklist:write" });
  await using alice = await signIn(`${served.url}/mcp`);
  await ok(alice.client, "createTask", { sessionId: "plan", name: "Alice's plan" });
  issuer.grant({ sub: "bob", scope: "checklist:write" });
  await using bob = await signIn(`${served.url}/mcp`);
  assert.equal(await sees(bob.client, "Alice's plan"), false);
  await ok(bob.client, "createTask", { sessionId: "plan", name: "Bob's plan" });
  assert.equal(await sees(alice.client, "Bob's plan"), false);
  assert.equal(await sees(alice.client, "Alice's plan"), true);
});
