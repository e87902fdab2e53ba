/**
 * A share link with a read token from the tokens file, in a real browser (Chromium) against a real
 * server process: the person gets in, sees the plan live, and is locked out once the token is revoked.
 */
import assert from "node:assert/strict";
import { connectHttp } from "../support/http.ts";
import { launchBrowser, newPage } from "../support/browser.ts";
import { ok } from "../support/harness.ts";
import { spawnServer } from "../support/server_process.ts";
import { seedPlan, treeRows } from "../support/dashboard.ts";
import { sha256Hex, tokensFile } from "../support/auth.ts";

const WRITER = "agent-secret-0123456789abcdef";
const READER = "reader-secret-0123456789abcdef";

Deno.test("browser: a read token's share link from the tokens file lets a person in; revoked, it is 401", async () => {
  await using file = await tokensFile([
    { name: "agent", token: WRITER, namespaces: "*", access: "write" },
    { name: "reader", token: `sha256:${await sha256Hex(READER)}`, namespaces: ["default"], access: "read" },
  ]);
  await using server = await spawnServer({ env: { AUTH_TOKENS_FILE: file.path } });
  await using mcp = await connectHttp(`${server.url}/mcp`, {
    headers: { authorization: `Bearer ${WRITER}` },
  });
  await seedPlan(mcp.client, "shared");
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page } = tab;

  const refused = await page.goto(`${server.url}/`);
  assert.equal(refused?.status(), 401);

  const shared = await page.goto(`${server.url}/?token=${READER}&session=shared`);
  assert.equal(shared?.status(), 200);
  assert.equal(page.url(), `${server.url}/?session=shared`);
  assert.ok((await treeRows(page)).some((r) => r.name === "Write the release notes"));
  await page.waitForSelector("#live[data-state=live]");
  await ok(mcp.client, "createTask", { sessionId: "shared", name: "Announce the release" });
  await page.waitForSelector("text=Announce the release");

  await file.write([{ name: "agent", token: WRITER, namespaces: "*", access: "write" }]);
  const revoked = await page.goto(`${server.url}/?session=shared`);
  assert.equal(revoked?.status(), 401, "the cookie of a revoked token no longer opens the page");
});
