/**
 * `deno task screenshot:app`: makes a small team plan through MCP (as agents would: two agents hold
 * tasks, one task is blocked), shows the plan view after the second agent's `claimTask` in the test
 * host (the official MCP Apps host side, the same Chromium the tests use), and saves
 * docs/plan-view.png.
 */
import { fileURLToPath } from "node:url";
import { connectUi, openPlanHost } from "../tests/support/plan_view.ts";
import { launchBrowser } from "../tests/support/browser.ts";
import { seedTeamPlan } from "../tests/support/dashboard.ts";

const OUT = fileURLToPath(new URL("../docs/plan-view.png", import.meta.url));

await using conn = await connectUi();
const { args, result } = await seedTeamPlan(conn.client, "beta");

await using browser = await launchBrowser();
await using host = await openPlanHost(browser, conn.client, { width: 520 });
await host.show(args, result);
await host.page.waitForTimeout(200); // the host follows the view's reported height
await host.page.locator("iframe").screenshot({ path: OUT });
console.error(`saved ${OUT}`);
