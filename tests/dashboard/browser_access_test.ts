/**
 * Access in a real browser: a share link lets a person in through an HttpOnly cookie and leaves the
 * address without the token; without it the page is 401. And the page fits a phone.
 */
import assert from "node:assert/strict";
import { connectHttp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";
import { launchBrowser, newPage } from "../support/browser.ts";
import { ok } from "../support/harness.ts";
import { seedPlan, treeRows } from "../support/dashboard.ts";

const TOKEN = "share-me-0123456789";

Deno.test("a share link signs the browser in with an HttpOnly cookie, drops the token from the address, and stays live", async () => {
  await using server = await spawnServer({ env: { AUTH_TOKEN: TOKEN } });
  await using mcp = await connectHttp(`${server.url}/mcp`, { headers: { authorization: `Bearer ${TOKEN}` } });
  await seedPlan(mcp.client, "shared");
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;

  const refused = await page.goto(`${server.url}/`);
  assert.equal(refused?.status(), 401);
  assert.doesNotMatch(await page.content(), /release notes/);

  const shared = await page.goto(`${server.url}/?token=${TOKEN}&session=shared`);
  assert.equal(shared?.status(), 200);
  assert.equal(page.url(), `${server.url}/?session=shared`);
  assert.ok((await treeRows(page)).some((r) => r.name === "Write the release notes"));
  const cookies = await page.context().cookies();
  assert.equal(cookies.length, 1);
  assert.deepEqual(
    [cookies[0]!.name, cookies[0]!.httpOnly, cookies[0]!.sameSite, cookies[0]!.secure],
    ["checklist_token", true, "Strict", false],
  );
  assert.equal(await page.evaluate("document.cookie"), "", "scripts cannot read the token");

  await page.waitForSelector("#live[data-state=live]");
  await ok(mcp.client, "createTask", { sessionId: "shared", name: "Announce the release" });
  await page.waitForSelector("text=Announce the release");

  // Another browser without the cookie is still refused, the JSON routes and the events too.
  await using stranger = await newPage(browser);
  for (const path of ["/", "/api/view", "/events"]) {
    const response = await stranger.page.goto(`${server.url}${path}`);
    assert.equal(response?.status(), 401, path);
  }
  assert.ok(!record.requests.some((url) => url.includes(TOKEN) && !url.includes("token=")));
  assert.equal(
    record.requests.filter((url) => url.includes(TOKEN)).length,
    1,
    "only the share link names the token",
  );
});

Deno.test("the page fits a 390 px phone screen without sideways scrolling, and a wide screen in three columns", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await seedPlan(mcp.client);
  await ok(mcp.client, "createTask", {
    sessionId: "release-2.0",
    name: "A very long task name that goes on and on to see that it wraps instead of widening the page " +
      "x".repeat(90),
  });
  await using browser = await launchBrowser();
  await using phone = await newPage(browser, { viewport: { width: 390, height: 844 }, mobile: true });
  await phone.page.goto(`${server.url}/`);
  const sizes = await phone.page.evaluate<{ screen: number; scroll: number }>(
    "({ screen: screen.width, scroll: document.documentElement.scrollWidth })",
  );
  assert.equal(sizes.screen, 390);
  assert.ok(sizes.scroll <= sizes.screen, `page is ${sizes.scroll} px wide on a ${sizes.screen} px screen`);
  const columns = (p: typeof phone.page) =>
    p.evaluate<number>(
      'getComputedStyle(document.querySelector(".layout")).gridTemplateColumns.split(" ").length',
    );
  assert.equal(await columns(phone.page), 1);

  await using wide = await newPage(browser, { viewport: { width: 1440, height: 900 } });
  await wide.page.goto(`${server.url}/`);
  assert.equal(await columns(wide.page), 3);
});
