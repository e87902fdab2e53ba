/**
 * Notes on the dashboard (docs/teams.md "Context that travels with the work"): the task in progress shows
 * its notes, the session its latest notes on any task (newest first, older ones counted), all as
 * text, never markup; the plan view's data carries none. In a real browser against a real server, a
 * note added over MCP shows live.
 */
import assert from "node:assert/strict";
import { LOCAL_CREDENTIAL } from "../../lib/auth/credential.ts";
import { DashboardData } from "../../lib/dashboard/server/data.ts";
import { renderPage } from "../../lib/dashboard/server/dashboard_page.ts";
import { sessionViewWithin } from "../../lib/render/budget.ts";
import { NOTES_SHOWN, PageViewSchema } from "../../lib/render/model.ts";
import { connectHttp } from "../support/http.ts";
import { foreignRequests, launchBrowser, newPage } from "../support/browser.ts";
import { connectInMemory, ok } from "../support/harness.ts";
import { quietLogger } from "../support/logs.ts";
import { spawnServer } from "../support/server_process.ts";
import { updateCount, waitForUpdates } from "../support/dashboard.ts";
import type { Client } from "../support/sdk_client.ts";

const EVIL = `<img src=x onerror="alert('note')"><b>bold</b> & "quotes"`;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");

async function plan(client: Client): Promise<void> {
  await ok(client, "createTask", {
    sessionId: "shop",
    id: "build",
    name: "Build the shop",
    parallel: true,
    tasks: [{ id: "api", name: "Build API" }, { id: "web", name: "Build UI" }],
  });
}

Deno.test("the dashboard's data shows the task in progress's notes and the session's latest notes, newest first; the plan view's none", async () => {
  let now = T0;
  await using conn = await connectInMemory({ agent: "w1", now: () => now++ });
  await plan(conn.client);
  await ok(conn.client, "claimTask", { sessionId: "shop", agent: "w1" });
  for (let i = 0; i < NOTES_SHOWN + 2; i++) {
    await ok(conn.client, "updateTask", { sessionId: "shop", id: i % 2 ? "api" : "web", note: `note ${i}` });
  }
  await ok(conn.client, "updateTask", { sessionId: "shop", id: "api", note: EVIL });
  const data = new DashboardData(conn.store, quietLogger());
  const page = await data.page(LOCAL_CREDENTIAL, { session: "shop" });
  PageViewSchema.parse(page);
  const session = page.session!;
  assert.equal(session.focus!.id, "api");
  assert.deepEqual(
    session.focus!.notes!.map((n) => n.text),
    [...Array.from({ length: 11 }, (_, k) => `note ${2 * k + 1}`), EVIL],
  );
  assert.equal(session.notes!.length, NOTES_SHOWN);
  assert.deepEqual(session.notes!.slice(0, 3).map((n) => [n.task_id, n.agent, n.text]), [
    ["api", "w1", EVIL],
    ["api", "w1", "note 21"],
    ["web", "w1", "note 20"],
  ]);
  assert.equal(session.notes_more, 3);
  const html = String(await renderPage(page, { script: "/s.js", styles: "/s.css", icon: "/i.svg" }));
  assert.ok(!html.includes("<img src=x"), "a note is never markup");
  assert.ok(
    html.includes("&lt;img src=x onerror=&quot;alert(&#39;note&#39;)&quot;&gt;&lt;b&gt;bold&lt;/b&gt; &amp;"),
  );
  assert.match(html, /3 older notes not shown \(getTask has them\)/);
  // The plan view reads the same session without notes.
  const view = await conn.store.space("default").readTree(
    "shop",
    (tree) => sessionViewWithin("default", "shop", tree!),
  );
  assert.equal(view.notes, undefined);
  assert.equal(view.focus!.notes, undefined);
  assert.doesNotMatch(JSON.stringify(view), /note \d|onerror/);
});

Deno.test("a note added over MCP shows on the dashboard live, as text", async () => {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await plan(mcp.client);
  await ok(mcp.client, "claimTask", { sessionId: "shop", agent: "backend" });
  await ok(mcp.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "first finding",
    agent: "backend",
  });
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page, record } = tab;
  await page.goto(`${server.url}/?session=shop`);
  assert.deepEqual(await page.locator("#focus .task-notes .note-text").allTextContents(), ["first finding"]);
  await page.waitForSelector("#live[data-state=live]");
  const seq = await updateCount(page);
  await ok(mcp.client, "updateTask", { sessionId: "shop", id: "web", note: EVIL, agent: "frontend" });
  await waitForUpdates(page, seq + 1);
  assert.deepEqual(await page.locator("#notes .note-text").allTextContents(), [EVIL, "first finding"]);
  assert.deepEqual(await page.locator("#notes .note .agent").allTextContents(), ["@frontend", "@backend"]);
  assert.equal(await page.locator('#notes .note[data-id="web"] .note-task .name').textContent(), "Build UI");
  assert.equal(await page.locator("main img, main b").count(), 0);
  await page.waitForTimeout(200);
  assert.deepEqual(record.dialogs, []);
  assert.deepEqual(record.errors, []);
  assert.deepEqual(record.consoleErrors, []);
  assert.deepEqual(foreignRequests(record, server.url), []);
});
