/**
 * The dashboard in a real browser (Chromium via playwright-core) against a real server process:
 * what it shows, that agent text stays text, and that it loads nothing from elsewhere.
 */
import assert from "node:assert/strict";
import { connectHttp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";
import { foreignRequests, launchBrowser, newPage } from "../support/browser.ts";
import { ok } from "../support/harness.ts";
import { seedPlan, treeRows, waitForUpdates } from "../support/dashboard.ts";

Deno.test("the page shows the tree, the task in progress, the progress document and the recent works created through MCP", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await seedPlan(mcp.client);
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  const response = await page.goto(`${server.url}/`);
  assert.equal(response?.status(), 200);

  const rows = await treeRows(page);
  assert.deepEqual(rows.map((r) => [r.id, r.name, r.status, r.depth]), [
    ["release", "Ship release 2.0", "in_progress", 0],
    ["notes", "Write the release notes", "in_progress", 1],
    ["notes-draft", "Draft the changelog", "in_progress", 2],
    ["notes-review", "Review the notes with the team", "todo", 2],
    ["bench", "Run the benchmarks", "todo", 1],
    ["tag", "Tag and publish", "todo", 1],
  ]);
  assert.deepEqual(rows.filter((r) => r.path).map((r) => r.id), ["release", "notes", "notes-draft"]);
  assert.deepEqual(rows.filter((r) => r.active).map((r) => r.id), ["notes-draft"]);
  assert.equal(await page.textContent("#session h2"), "release-2.0");
  assert.match((await page.textContent("#session .progress-label")) ?? "", /^0\/8 done/);

  // The task in progress: own and inherited criteria and constraints, root first.
  assert.deepEqual(await page.$$eval("#focus .criteria li .rule", (els) => els.map((e) => e.textContent)), [
    "CI is green on main",
    "Every merged PR is listed",
  ]);
  assert.deepEqual(
    await page.$$eval("#focus .constraints li .rule", (els) => els.map((e) => e.textContent)),
    [
      "No breaking change to the tool names",
    ],
  );
  assert.deepEqual(await page.$$eval("#focus .crumbs li", (els) => els.map((e) => e.textContent)), [
    "Ship release 2.0",
    "Write the release notes",
    "Draft the changelog",
  ]);

  // Folded: "bench" has subtasks that are not in the DOM until opened through the JSON route.
  assert.equal(await page.locator('li[data-id="bench-run"]').count(), 0);
  await page.click('li[data-id="bench"] button.fold');
  await page.waitForSelector('li[data-id="bench-run"]');
  assert.deepEqual((await treeRows(page)).slice(4, 7).map((r) => [r.id, r.depth]), [
    ["bench", 1],
    ["bench-run", 2],
    ["bench-compare", 2],
  ]);
  await page.click('li[data-id="bench"] button.fold');
  assert.equal(await page.locator('li[data-id="bench-run"]').count(), 0);

  // The progress document and the recent works.
  const doc = page.locator('#documents article[data-project="checklist-mcp"]');
  assert.equal(await doc.locator(".goal li").textContent(), "Publish 2.0 this week");
  assert.deepEqual(await doc.locator(".next-steps li").allTextContents(), [
    "Draft the changelog",
    "Run the benchmarks",
  ]);
  assert.deepEqual(await doc.locator(".completed li").allTextContents(), ["Froze the tool list"]);
  assert.deepEqual(await doc.locator(".blockers li").allTextContents(), [
    "Waiting for the CI runner upgrade",
  ]);
  assert.equal(await page.textContent("#works .work-description"), "Started the release notes");

  // The script renders the same markup as the server: after a live update that leaves this session as
  // it was, the session's panel is unchanged to the character.
  const served = await page.locator("#session").evaluate((el) => el.outerHTML);
  await page.waitForSelector("#live[data-state=live]");
  await ok(mcp.client, "save_current_work_info", {
    work_description: "Unrelated",
    work_summarize: "Other work",
  });
  await waitForUpdates(page, 1);
  assert.equal(await page.locator("#session").evaluate((el) => el.outerHTML), served);
  assert.equal(await page.textContent("#works .work-description"), "Unrelated");

  // The session list with done/total.
  assert.equal(await page.textContent("#sessions .session a"), "release-2.0");
  assert.deepEqual(foreignRequests(record, server.url), []);
  assert.deepEqual(record.errors, []);
  assert.deepEqual(record.consoleErrors, []);
});

Deno.test("agent text with HTML and script is shown literally and nothing runs, before and after a live update", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  const evil = `<script>alert("x")</script><img src=x onerror="alert('img')"><b>bold</b>`;
  await ok(mcp.client, "createTask", {
    sessionId: "xss",
    id: "root",
    name: evil,
    description: evil,
    completion_criteria: [evil],
    tasks: [{ id: "leaf", name: `</li><li>${evil}` }],
  });
  await ok(mcp.client, "startTask", { sessionId: "xss", id: "leaf" });
  await ok(mcp.client, "mem_progress", {
    project: evil,
    content: JSON.stringify({ goal: evil, blockers: [evil] }),
  });
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.goto(`${server.url}/?session=xss`);
  const check = async () => {
    assert.equal(await page.textContent('li[data-id="root"] .name'), evil);
    assert.equal(await page.textContent('li[data-id="leaf"] .name'), `</li><li>${evil}`);
    assert.equal(await page.textContent("#focus .criteria .rule"), evil);
    assert.equal(await page.textContent("#documents .goal li"), evil);
    assert.equal(await page.locator("body script:not([src])").count(), 0);
    assert.equal(await page.locator("main img, aside img, main b, aside b").count(), 0);
  };
  await check();
  await page.waitForSelector("#live[data-state=live]");
  await ok(mcp.client, "createTask", { sessionId: "xss", parentId: "root", name: `${evil} 2` });
  await waitForUpdates(page, 1);
  assert.equal(await page.locator("#session .tree > li[data-kind=task]").count(), 3);
  await check();
  await page.waitForTimeout(200);
  assert.deepEqual(record.dialogs, []);
  assert.deepEqual(record.errors, []);
  assert.deepEqual(foreignRequests(record, server.url), []);
});
