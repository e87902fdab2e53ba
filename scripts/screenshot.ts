/**
 * `deno task screenshot`: starts a server with small realistic plans (made through MCP, as agents
 * would: a team plan where two agents hold tasks with paths, one task is blocked and one waits on a
 * reservation; the backend's own stdio server, in a git work tree of its branch, records where its work
 * lives), opens the dashboard in the same Chromium the tests use, and saves docs/dashboard.png.
 */
import { fileURLToPath } from "node:url";
import { connectHttp } from "../tests/support/http.ts";
import { spawnServer } from "../tests/support/server_process.ts";
import { launchBrowser, newPage } from "../tests/support/browser.ts";
import { ok, spawnStdio } from "../tests/support/harness.ts";
import { seedPlan, seedTeamPlan } from "../tests/support/dashboard.ts";
import { gitPlace } from "../tests/support/git_repos.ts";

const OUT = fileURLToPath(new URL("../docs/dashboard.png", import.meta.url));

await using place = await gitPlace();
const env = { FILE_PATH: `${place.dir}/tasks.json` };
await using server = await spawnServer({ env });
await using mcp = await connectHttp(`${server.url}/mcp`);
await seedPlan(mcp.client);
await ok(mcp.client, "completeTask", {
  sessionId: "release-2.0",
  id: "notes-draft",
  resolution: "Changelog drafted from the 42 merged PRs",
});
await ok(mcp.client, "startTask", { sessionId: "release-2.0", id: "notes-review" });
await seedTeamPlan(mcp.client, "beta", { paths: true });
// The backend works in its own work tree on its branch; its stdio server renews the claim and records where.
const repo = await place.init("shop");
await repo.write("README.md", "shop\n");
await repo.commit("Start the shop");
const backendTree = await repo.addWorktree("shop-api", "feature/api");
await backendTree.write("src/api/signup.ts", "export {};\n");
await backendTree.commit("Sign-up endpoint");
await backendTree.write("src/api/limits.ts", "export {};\n");
{
  await using backend = await spawnStdio({
    env,
    cwd: backendTree.dir,
    permissions: ["--allow-env", "--allow-read", "--allow-write", "--allow-run=git"],
  });
  await ok(backend.client, "claimTask", { sessionId: "beta", agent: "backend" });
}
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
