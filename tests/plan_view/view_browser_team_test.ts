/**
 * Who holds what in the plan view (docs/teams.md), in a real browser inside the test host
 * built on the official MCP Apps host side, after agents claim tasks through claimTask over a real
 * SDK client: each held leaf with its agent and lease, what the blocked task waits for, the agents at
 * work, the view centred on the caller's own leaf; agent names never markup.
 */
import assert from "node:assert/strict";
import { foreignRequests, launchBrowser } from "../support/browser.ts";
import { fails, ok, type ToolResult } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";
import { EVIL_AGENT, seedTeamPlan } from "../support/dashboard.ts";
import { connectUi, openPlanHost, type PlanHost } from "../support/plan_view.ts";

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return await client.callTool({ name, arguments: args }) as ToolResult;
}

function texts(host: PlanHost, selector: string): Promise<string[]> {
  return host.view.$$eval(selector, (els) => els.map((el) => el.textContent ?? ""));
}

Deno.test("after agents claim tasks the view shows each agent on its leaf with its lease, the blocked task and the agents at work, centred on the caller's leaf", async () => {
  await using conn = await connectUi();
  const { args } = await seedTeamPlan(conn.client);
  // The host shows frontend's claimTask as the call came back (through the same client).
  await ok(conn.client, "completeTask", {
    sessionId: "beta",
    id: "signup",
    agent: "frontend",
    resolution: "r",
  });
  const claim = await callTool(conn.client, "claimTask", args);
  await using browser = await launchBrowser();
  await using host = await openPlanHost(browser, conn.client);
  await host.show(args, claim);
  const { view } = host;

  const row = (id: string) => view.locator(`#session .tree li[data-id="${id}"]`);
  assert.equal((claim.structuredContent as { task: { id: string } }).task.id, "e2e");
  assert.equal(await row("api").locator(".agent").textContent(), "@backend");
  assert.equal(await row("e2e").locator(".agent").textContent(), "@frontend");
  assert.match(await row("e2e").locator(".lease").textContent() ?? "", /^(30m 00s|29m \d\ds) left$/);
  assert.match(await row("guide").getAttribute("class") ?? "", /\bblocked\b/);
  assert.equal(await row("guide").locator(".blocked-by").textContent(), "waits for Build the API");
  assert.equal(await row("launch").locator(".parallel-mark").count(), 1);
  assert.deepEqual(await texts(host, "#agents .agent"), ["@backend", "@frontend"]);
  // Centred on the leaf this call claimed, not on backend's: its path, its holder, its criteria.
  assert.equal(await view.textContent("#focus .focus-name"), "◐ Write the end-to-end tests");
  assert.equal(await view.textContent("#focus .holder .agent"), "@frontend");
  assert.deepEqual(await texts(host, "#focus .criteria .rule"), ["Sign-up works end to end"]);
  assert.deepEqual(
    await view.$$eval("li.row.path", (els) => els.map((el) => el.getAttribute("data-id"))),
    ["launch", "e2e"],
  );
  assert.deepEqual(
    await view.$$eval("li.row:has(.c-started)", (els) => els.map((el) => el.getAttribute("data-id"))),
    ["e2e"],
  );

  // Nothing left for a third agent: the reply is not an error and the view still shows the session.
  const lateArgs = { sessionId: "beta", agent: "late" };
  const none = await callTool(conn.client, "claimTask", lateArgs);
  assert.equal((none.structuredContent as { task: unknown }).task, null);
  await host.show(lateArgs, none);
  assert.equal(await view.getAttribute("#session", "data-session"), "beta");
  assert.equal(await view.locator(".change").count(), 0);
  assert.deepEqual(await texts(host, "#agents .agent"), ["@backend", "@frontend"]);

  const largest = Math.max(...host.calls.map((c) => c.bytes));
  assert.ok(largest <= 64 * 1024, `largest read ${largest} bytes`);
  assert.deepEqual(host.record.errors, []);
  assert.deepEqual(host.record.consoleErrors, []);
  assert.deepEqual(
    foreignRequests(host.record, host.origins.host).filter((u) => !u.startsWith(host.origins.view)),
    [],
  );
});

Deno.test("in the view an agent name with markup is refused by the name rule, and a held task named with markup is text", async () => {
  await using conn = await connectUi();
  await seedTeamPlan(conn.client);
  const evilTask = `<img src=x onerror="alert('task')"><script>alert('task')</script>`;
  await ok(conn.client, "createTask", { sessionId: "beta", parentId: "launch", id: "evil", name: evilTask });
  for (const tool of ["claimTask", "startTask"]) {
    await fails(conn.client, tool, { sessionId: "beta", id: "evil", agent: EVIL_AGENT }, "INVALID_INPUT");
  }
  const args = { sessionId: "beta", id: "evil", agent: "reviewer" };
  await using browser = await launchBrowser();
  await using host = await openPlanHost(browser, conn.client);
  await host.show(args, await callTool(conn.client, "claimTask", args));
  const { view } = host;
  assert.equal(await view.textContent('#session .tree li[data-id="evil"] .name'), evilTask);
  assert.equal(await view.textContent('#session .tree li[data-id="evil"] .agent'), "@reviewer");
  assert.equal(await view.textContent('#agents li[data-id="evil"] .name'), evilTask);
  assert.equal(await view.locator("#plan img, #plan script").count(), 0, "no element came from agent text");
  assert.ok(!(await view.content()).includes(EVIL_AGENT));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(host.record.dialogs, []);
  assert.deepEqual(host.record.errors, []);
});
