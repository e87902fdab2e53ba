/**
 * `deno task screenshot:app`: makes a small realistic plan through MCP (as an agent would), shows the
 * plan view after a `startTask` in the test host (the official MCP Apps host side, the same Chromium
 * the tests use), and saves docs/plan-view.png.
 */
import { fileURLToPath } from "node:url";
import { connectUi, openPlanHost } from "../tests/app/app_support.ts";
import { launchBrowser } from "../tests/support/browser.ts";
import { ok, type ToolResult } from "../tests/support/harness.ts";
import { seedPlan } from "../tests/web/web_support.ts";

const OUT = fileURLToPath(new URL("../docs/plan-view.png", import.meta.url));

await using conn = await connectUi();
await seedPlan(conn.client);
await ok(conn.client, "completeTask", {
  sessionId: "release-2.0",
  id: "notes-draft",
  resolution: "Changelog drafted from the 42 merged PRs",
});
const args = { sessionId: "release-2.0", id: "notes-review" };
const started = await conn.client.callTool({ name: "startTask", arguments: args }) as ToolResult;

await using browser = await launchBrowser();
await using host = await openPlanHost(browser, conn.client, { width: 520 });
await host.show(args, started);
await host.page.waitForTimeout(200); // the host follows the view's reported height
await host.page.locator("iframe").screenshot({ path: OUT });
console.error(`saved ${OUT}`);
