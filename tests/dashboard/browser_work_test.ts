/**
 * Where work is, on the dashboard in a real browser (docs/teams.md "Paths and reservations", "Where the
 * work lives"): an agent's stdio server in its own git work tree claims a task on the store the
 * dashboard's server reads; within 2 seconds the held leaf shows its paths and branch@head and the
 * leaf whose paths collide shows it waits on that agent's reservation. Paths are text, never markup.
 * Once a lease ends on the viewer's clock, its paths say they reserve nothing and the waiting mark
 * goes, without a reload (the server judges it so too at its next read: tests/dashboard/work_data_test.ts).
 */
import assert from "node:assert/strict";
import { connectHttp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";
import { foreignRequests, launchBrowser, newPage } from "../support/browser.ts";
import { ok, spawnStdio } from "../support/harness.ts";
import { now, updateCount, watchFor } from "../support/dashboard.ts";
import { gitPlace } from "../support/git_repos.ts";

/** A path with markup: a valid pattern (one segment), shown as these characters. */
const EVIL_PATH = `<img src=x onerror="alert('path')">`;

/** The shop of docs/teams.md, the API's paths with markup among them. */
const SHOP = {
  sessionId: "shop",
  id: "build",
  name: "Build the shop",
  parallel: true,
  tasks: [
    { id: "api", name: "Build API", paths: ["src/api/", EVIL_PATH, "docs/api.md", "openapi.yaml"] },
    { id: "users", name: "User accounts", paths: ["src/api/users.ts", "src/web/account/"] },
    { id: "web", name: "Build UI", paths: ["src/web/"] },
  ],
};

/** The stdio task's permissions (deno.json): the agent's server may run git and nothing else. */
const STDIO_PERMISSIONS = ["--allow-env", "--allow-read", "--allow-write", "--allow-run=git"];

Deno.test("a claim made by an agent's own server shows its paths and branch@head, and the leaf waiting on its reservation names it, within 2 s", async () => {
  await using place = await gitPlace();
  const repo = await place.init("shop");
  await repo.write("README.md", "shop\n");
  await repo.commit("init");
  const backendTree = await repo.addWorktree("wt-backend", "feature/api");
  const head = (await backendTree.head()).slice(0, 7);
  const env = { FILE_PATH: `${place.dir}/tasks.json` };
  await using server = await spawnServer({ env });
  await using lead = await connectHttp(`${server.url}/mcp`);
  await ok(lead.client, "createTask", SHOP);
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.goto(`${server.url}/?session=shop`);
  await page.waitForSelector("#live[data-state=live]");
  const row = (id: string) => page.locator(`#session .tree li[data-id="${id}"]`);
  assert.equal(await page.locator("#session .paths, #session .branch, #session .reserved-by").count(), 0);

  // The backend works in its own work tree, through its own stdio server on the same store.
  await using backend = await spawnStdio({ env, cwd: backendTree.dir, permissions: STDIO_PERMISSIONS });
  const branchShown = await watchFor(page, '#session li[data-id="api"] .branch');
  const waitShown = await watchFor(page, '#session li[data-id="users"] .reserved-by:not([hidden])');
  await ok(backend.client, "claimTask", { sessionId: "shop", agent: "backend" });
  const replied = now();
  for (const shown of [branchShown, waitShown]) {
    const ms = (await shown()) - replied;
    assert.ok(ms < 2000, `shown ${ms.toFixed(0)} ms after the reply`);
  }
  assert.equal(await row("api").locator(".claim .agent").textContent(), "@backend");
  assert.deepEqual(await row("api").locator(".paths .pattern").allTextContents(), [
    "src/api/**",
    EVIL_PATH,
    "docs/api.md",
  ]);
  assert.equal(await row("api").locator(".paths-more").textContent(), " +1");
  assert.equal(await row("api").locator(".lapsed").isVisible(), false, "a live claim reserves its paths");
  assert.equal(await row("api").locator(".branch").textContent(), `feature/api@${head}`);
  assert.ok(
    (await row("api").locator(".branch").getAttribute("title") ?? "").startsWith(
      `Where the work was last seen: feature/api@${head} in ${backendTree.dir}, clean (by backend at `,
    ),
  );
  assert.equal(await row("users").locator(".reserved-by").innerText(), "paths reserved by @backend");
  assert.match(
    await row("users").locator(".reserver").getAttribute("title") ?? "",
    /^src\/api\/users\.ts overlaps src\/api\/\*\* of Build API \(api\), reserved until /,
  );
  assert.equal(await row("web").locator(".reserved-by").count(), 0);

  // Another agent takes the UI (over HTTP: no git record): its paths show, and users waits on both.
  const seq = await updateCount(page);
  const bothShown = await watchFor(page, '#session li[data-id="users"] .reserver[data-agent="ui"]');
  await ok(lead.client, "claimTask", { sessionId: "shop", agent: "ui" });
  const second = now();
  assert.ok((await bothShown()) - second < 2000);
  assert.ok(await updateCount(page) > seq);
  assert.deepEqual(await row("web").locator(".paths .pattern").allTextContents(), ["src/web/**"]);
  assert.equal(await row("web").locator(".branch").count(), 0);
  assert.equal(
    await row("users").locator(".reserved-by").innerText(),
    "paths reserved by @backend, @ui",
  );

  // Text, never markup: the path with markup made no element and ran nothing.
  assert.equal(await page.locator("main img, aside img").count(), 0);
  await page.waitForTimeout(200);
  assert.deepEqual(record.dialogs, []);
  assert.deepEqual(record.errors, []);
  assert.deepEqual(record.consoleErrors, []);
  assert.deepEqual(foreignRequests(record, server.url), []);
});

Deno.test("a lease that ends on an open page, by the viewer's clock: its paths say they reserve nothing and the leaf that waited on them is no longer marked, without a reload", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await ok(mcp.client, "createTask", SHOP);
  await ok(mcp.client, "claimTask", { sessionId: "shop", agent: "backend" });
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.goto(`${server.url}/?session=shop`);
  await page.waitForSelector("#live[data-state=live]");
  const row = (id: string) => page.locator(`#session .tree li[data-id="${id}"]`);
  assert.equal(await row("users").locator(".reserved-by").isVisible(), true);
  assert.equal(await row("api").locator(".lapsed").isVisible(), false);
  const updates = await updateCount(page);

  // The viewer's clock passes the lease's end (30 minutes): the next tick of the lease clock redraws.
  await page.clock.setSystemTime(Date.now() + 31 * 60_000);
  await page.waitForSelector('#session li[data-id="api"] .paths.stale .lapsed:not([hidden])', {
    timeout: 5000,
  });
  assert.equal(
    await row("api").locator(".paths").innerText(),
    `src/api/**, ${EVIL_PATH}, docs/api.md +1 (not reserved: the lease has ended)`,
  );
  assert.equal(await row("api").locator(".claim.stale .agent").textContent(), "@backend");
  assert.equal(await row("users").locator(".reserved-by").isVisible(), false);
  assert.equal(await updateCount(page), updates, "no reload, no new read");
  assert.deepEqual(record.errors, []);
});
