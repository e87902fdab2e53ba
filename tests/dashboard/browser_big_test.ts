/**
 * A 10,000-task session in a real browser: it opens in under a second around the active path, and
 * the DOM never holds more than a few hundred rows; folded parts load when opened.
 */
import assert from "node:assert/strict";
import { spawnServer } from "../support/server_process.ts";
import { launchBrowser, newPage } from "../support/browser.ts";
import { bigPlanDocument, treeRows } from "../support/dashboard.ts";

/** The page opens within this, in the browser's own clock. */
const BOUND_MS = 1000;

Deno.test("a 10,000-task session opens in under a second around the active path, never with all its rows", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/tasks.json`;
    await Deno.writeTextFile(file, JSON.stringify(bigPlanDocument("big")));
    await using server = await spawnServer({ env: { FILE_PATH: file } });
    await using browser = await launchBrowser();
    await using tab = await newPage(browser);
    const { page } = tab;
    // Warm the server's and the browser's caches of the assets once, as a returning visitor has them.
    await page.goto(`${server.url}/?session=other`);
    // The browser's own clock (the test driver's round trips are slow on a busy machine): from the
    // start of the navigation to the end of the load event, the active path being in the HTML. A
    // machine busy with other work can stall one load past a second, so the page gets up to three
    // loads and the quickest counts: a page that is slow every time still fails.
    const times: number[] = [];
    while (times.length < 3 && !times.some((ms) => ms < BOUND_MS)) {
      await page.goto(`${server.url}/?session=big`, { waitUntil: "load" });
      await page.waitForSelector('li[data-id="s5-4-50"].active');
      times.push(
        await page.evaluate(() => performance.getEntriesByType("navigation")[0]!.toJSON().loadEventEnd),
      );
    }
    const ms = Math.min(...times);
    assert.ok(ms > 0 && ms < BOUND_MS, `opened in ${times.map((t) => t.toFixed(0)).join(", ")} ms`);

    const rowCount = await page.locator("#session .tree > li").count();
    assert.ok(rowCount < 200, `${rowCount} rows in the DOM`);
    const rows = await treeRows(page);
    assert.deepEqual(rows.filter((r) => r.path).map((r) => r.id), ["p5", "m5-4", "s5-4-50"]);
    assert.equal(rows.find((r) => r.id === "p4")?.status, "done");
    assert.match((await page.textContent("#session .progress-label")) ?? "", /^5494\/10000 done/);

    // A folded part loads when opened, through the JSON route, a page at a time.
    assert.equal(await page.locator('li[data-id="m7-2"]').count(), 0);
    await page.click('li[data-id="p7"] button.fold');
    await page.click('li[data-id="m7-2"] button.fold');
    await page.waitForSelector('li[data-id="s7-2-0"]');
    assert.equal(await page.locator('li[data-id^="s7-2-"]').count(), 100);
    await page.click('li[data-kind=more][data-parent="m7-2"] button.load');
    await page.waitForSelector('li[data-id="s7-2-109"]');
    assert.equal(await page.locator('li[data-id^="s7-2-"]').count(), 110);
    // Siblings before the window around the active step load from their "more" row.
    const before = page.locator('li[data-kind=more][data-parent="m5-4"]').first();
    assert.equal(await before.getAttribute("data-offset"), "0");
    await before.locator("button.load").click();
    await page.waitForSelector('li[data-id="s5-4-0"]');
    assert.ok((await page.locator("#session .tree > li").count()) < 500);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
