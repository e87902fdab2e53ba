/**
 * Live updates in a real browser: a change made through another server process sharing the store
 * (the same JSON file, the same Deno KV) shows on an open page within 2 seconds, without a reload.
 */
import assert from "node:assert/strict";
import { connectHttp } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";
import { launchBrowser, newPage } from "../support/browser.ts";
import { ok } from "../support/harness.ts";
import { now, treeRows, waitForUpdates, watchFor } from "../support/dashboard.ts";

async function liveAcrossProcesses(env: Record<string, string>): Promise<void> {
  await using shown = await spawnServer({ env });
  await using other = await spawnServer({ env });
  await using writer = await connectHttp(`${other.url}/mcp`);
  await ok(writer.client, "createTask", {
    sessionId: "shared",
    id: "plan",
    name: "Shared plan",
    tasks: [{ id: "first", name: "First step" }, { id: "second", name: "Second step" }],
  });
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page } = tab;
  await page.goto(`${shown.url}/?session=shared`);
  await page.waitForSelector("#live[data-state=live]");
  assert.deepEqual((await treeRows(page)).map((r) => [r.id, r.status]), [
    ["plan", "todo"],
    ["first", "todo"],
    ["second", "todo"],
  ]);
  const navigations: string[] = [];
  page.on("framenavigated", (frame) => void navigations.push(frame.url()));

  const shownAt = await watchFor(page, 'li[data-id="first"].s-in_progress.active');
  await ok(writer.client, "startTask", { sessionId: "shared", id: "first" });
  const replied = now();
  const ms = (await shownAt()) - replied;
  assert.ok(ms < 2000, `shown ${ms.toFixed(0)} ms after the reply`);
  assert.equal(await page.textContent("#focus .focus-name"), "◐ First step");

  await ok(writer.client, "completeTask", { sessionId: "shared", id: "first", resolution: "done" });
  await ok(writer.client, "mem_progress", {
    project: "shared-project",
    content: JSON.stringify({ goal: "Show live updates", next_steps: ["Second step"] }),
  });
  await page.waitForSelector('#documents article[data-project="shared-project"]');
  await page.waitForSelector('li[data-id="first"].s-done');
  assert.deepEqual(navigations, [], "the page did not reload");
  await waitForUpdates(page, 1);
}

Deno.test("a change through a second server process on the same JSON file shows within 2 s", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await liveAcrossProcesses({ FILE_PATH: `${dir}/tasks.json` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a change through a second server process on the same Deno KV shows within 2 s", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await liveAcrossProcesses({ KV_PATH: `${dir}/tasks.kv` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
