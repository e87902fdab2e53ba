/**
 * Who holds what on the dashboard, in a real browser against a real server process, with agents
 * claiming tasks through claimTask over MCP (docs/teams.md): each held leaf with its agent
 * and lease, blocked tasks with what they wait for, the parallel parent, the agents at work; leases
 * judged on the viewer's clock; agent names never markup.
 */
import assert from "node:assert/strict";
import { connectHttp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";
import { foreignRequests, launchBrowser, newPage } from "../support/browser.ts";
import { fails, ok } from "../support/harness.ts";
import { EVIL_AGENT, seedTeamPlan, updateCount, waitForUpdates } from "../support/dashboard.ts";

Deno.test("the page shows each agent's leaf with its lease, what blocked tasks wait for, the parallel parent and the agents at work, and follows them live", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await seedTeamPlan(mcp.client);
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.goto(`${server.url}/?session=beta`);

  const row = (id: string) => page.locator(`#session .tree li[data-id="${id}"]`);
  assert.equal(await row("api").locator(".claim .agent").textContent(), "@backend");
  assert.equal(await row("signup").locator(".claim .agent").textContent(), "@frontend");
  assert.match(await row("api").locator(".lease").textContent() ?? "", /^(30m 00s|29m \d\ds) left$/);
  assert.match(await row("api").getAttribute("class") ?? "", /\bactive\b/);
  assert.match(await row("signup").getAttribute("class") ?? "", /\bactive\b/);
  assert.equal(await row("e2e").locator(".claim").count(), 0);
  // The blocked task says what it waits for.
  assert.match(await row("guide").getAttribute("class") ?? "", /\bblocked\b/);
  assert.equal(await row("guide").locator(".blocked-by").textContent(), "waits for Build the API");
  assert.equal(await row("launch").locator(".parallel-mark").count(), 1);
  // The agents at work, by name, each with its task; and in the session list.
  // Read in one go: the page redraws every lease each second, and separate reads can straddle a redraw.
  const [agents, apiLease, signupLease] = await page.evaluate<[string[], string, string]>(`(() => {
    const text = (selector) => document.querySelector(selector).textContent;
    const agents = [...document.querySelectorAll("#agents li")].map((li) => li.textContent);
    const lease = (id) => text('#session .tree li[data-id="' + id + '"] .lease');
    return [agents, lease("api"), lease("signup")];
  })()`);
  assert.deepEqual(agents, [
    `@backend ${apiLease} on Build the API api`,
    `@frontend ${signupLease} on Build the sign-up page signup`,
  ]);
  assert.deepEqual(await page.locator("#sessions .session-agents .agent").allTextContents(), [
    "@backend",
    "@frontend",
  ]);

  // A short lease ends on the viewer's clock: marked stale without any change to the store.
  await page.waitForSelector("#live[data-state=live]");
  const seq = await updateCount(page);
  await ok(mcp.client, "claimTask", { sessionId: "beta", agent: "tester", lease_seconds: 2 });
  await waitForUpdates(page, seq + 1);
  assert.match(await row("e2e").locator(".lease").textContent() ?? "", /^[12]s left$/);
  const updates = await updateCount(page);
  await page.waitForSelector('#session .tree li[data-id="e2e"] .claim.stale', { timeout: 5000 });
  assert.match(await row("e2e").locator(".lease").textContent() ?? "", /^stale, ended \ds ago$/);
  assert.match(
    await page.locator('#agents li[data-id="e2e"] .claim').getAttribute("class") ?? "",
    /\bstale\b/,
  );
  assert.equal(await updateCount(page), updates, "no reload, no new read");

  // The API done: the guide waits for nothing, and backend is no longer at work.
  await ok(mcp.client, "completeTask", {
    sessionId: "beta",
    id: "api",
    agent: "backend",
    resolution: "Done",
  });
  await waitForUpdates(page, updates + 1);
  assert.equal(await row("guide").locator(".blocked-by").count(), 0);
  assert.doesNotMatch(await row("guide").getAttribute("class") ?? "", /\bblocked\b/);
  assert.deepEqual(await page.locator("#agents .agent").allTextContents(), ["@frontend", "@tester"]);
  assert.deepEqual(record.errors, []);
  assert.deepEqual(record.consoleErrors, []);
  assert.deepEqual(foreignRequests(record, server.url), []);
});

Deno.test("an agent name with markup is refused by the name rule and changes nothing; a held task named with markup shows as text", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await seedTeamPlan(mcp.client);
  const evilTask = `<img src=x onerror="alert('task')"><b>bold</b>`;
  await ok(mcp.client, "createTask", { sessionId: "beta", parentId: "launch", id: "evil", name: evilTask });
  const before = await ok(mcp.client, "getTask", { sessionId: "beta", id: "launch" });
  for (const tool of ["claimTask", "startTask"]) {
    const message = await fails(
      mcp.client,
      tool,
      { sessionId: "beta", id: "evil", agent: EVIL_AGENT },
      "INVALID_INPUT",
    );
    assert.match(message, /agent/);
  }
  assert.deepEqual(await ok(mcp.client, "getTask", { sessionId: "beta", id: "launch" }), before);
  await ok(mcp.client, "claimTask", { sessionId: "beta", id: "evil", agent: "reviewer" });

  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.goto(`${server.url}/?session=beta`);
  await page.waitForSelector("#live[data-state=live]");
  const check = async () => {
    assert.equal(await page.textContent('#session .tree li[data-id="evil"] .name'), evilTask);
    assert.equal(await page.textContent('#session .tree li[data-id="evil"] .agent'), "@reviewer");
    assert.equal(await page.textContent('#agents li[data-id="evil"] .name'), evilTask);
    assert.equal(await page.locator("main img, aside img, main b, aside b").count(), 0);
    assert.ok(!(await page.content()).includes(EVIL_AGENT));
  };
  await check();
  await ok(mcp.client, "claimTask", { sessionId: "beta", agent: "reviewer" }); // a renewal: no change
  await ok(mcp.client, "updateTask", { sessionId: "beta", id: "e2e", name: `${evilTask} 2` });
  await waitForUpdates(page, 1);
  await check();
  await page.waitForTimeout(200);
  assert.deepEqual(record.dialogs, []);
  assert.deepEqual(record.errors, []);
});

Deno.test("lease time left is counted by the viewer's clock: a browser 40 minutes ahead shows the leases stale at once", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await seedTeamPlan(mcp.client);
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.clock.setSystemTime(Date.now() + 40 * 60_000);
  await page.goto(`${server.url}/?session=beta`);
  const row = (id: string) => page.locator(`#session .tree li[data-id="${id}"]`);
  // The server drew the page with its own clock ("29m 59s left"); the viewer's says otherwise.
  // The page's script has run by the load event, so this is before any tick of the lease clock.
  assert.match(await row("api").locator(".claim").getAttribute("class") ?? "", /\bstale\b/);
  assert.match(
    await row("api").locator(".lease").textContent() ?? "",
    /^stale, ended (9m 5\ds|10m 0\ds) ago$/,
  );
  assert.match(await row("signup").locator(".claim").getAttribute("class") ?? "", /\bstale\b/);
  assert.match(
    await page.locator('#agents li[data-id="api"] .claim').getAttribute("class") ?? "",
    /\bstale\b/,
  );
  assert.deepEqual(record.errors, []);
});
