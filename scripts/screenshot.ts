/**
 * `deno task screenshot`: starts a server with small realistic plans (made through MCP, as agents
 * would: a team plan where two agents hold tasks and one task is blocked), opens the dashboard in the
 * same Chromium the tests use, and saves docs/dashboard.png.
 */
import { fileURLToPath } from "node:url";
import { connectHttp } from "../tests/support/http.ts";
import { spawnServer } from "../tests/support/server_process.ts";
import { launchBrowser, newPage } from "../tests/support/browser.ts";
import { ok } from "../tests/support/harness.ts";
import { seedPlan, seedTeamPlan } from "../tests/support/dashboard.ts";

const OUT = fileURLToPath(new URL("../docs/dashboard.png", import.meta.url));

await using server = await spawnServer();
await using mcp = await connectHttp(`${server.url}/mcp`);
await seedPlan(mcp.client);
await ok(mcp.client, "completeTask", {
  sessionId: "release-2.0",
  id: "notes-draft",
  resolution: "Changelog drafted from the 42 merged PRs",
});
await ok(mcp.client, "startTask", { sessionId: "release-2.0", id: "notes-review" });
await seedTeamPlan(mcp.client, "beta");
// A finding left for whoever takes the task next (docs/teams.md: notes).
await ok(mcp.client, "updateTask", {
  sessionId: "beta",
  id: "api",
  agent: "backend",
  note: "Rate limits live in api/limits.ts; the sign-up route reuses them.",
});
await ok(mcp.client, "createTask", {
  sessionId: "docs-site",
  name: "Refresh the documentation site",
  tasks: [{ name: "Move the guides to the new layout" }, { name: "Check every link" }],
});

await using browser = await launchBrowser();
await using tab = await newPage(browser, { viewport: { width: 1400, height: 720 } });
await tab.page.goto(`${server.url}/?session=beta`);
await tab.page.waitForSelector("#live[data-state=live]");
await tab.page.screenshot({ path: OUT, fullPage: false });
console.error(`saved ${OUT}`);
