/**
 * The plan view in a real browser, inside a test host built on the official MCP Apps host side: the
 * view in a sandboxed iframe of another origin under the CSP its resource asks for, every call it
 * makes relayed to the real server through the SDK client.
 */
import assert from "node:assert/strict";
import { foreignRequests, launchBrowser } from "../support/browser.ts";
import { ok, type ToolResult } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";
import { connectUi, openPlanHost, type PlanHost } from "./app_support.ts";

const SESSION = "release";

async function seed(client: Client): Promise<void> {
  await ok(client, "createTask", {
    sessionId: SESSION,
    id: "release",
    name: "Ship release 2.0",
    completion_criteria: ["CI is green on main"],
    constraints: ["No breaking change to the tool names"],
    tasks: [
      {
        id: "notes",
        name: "Write the release notes",
        constraints: ["Plain English"],
        tasks: [
          {
            id: "notes-draft",
            name: "Draft the changelog",
            completion_criteria: ["Every merged PR is listed"],
          },
          { id: "notes-review", name: "Review the notes with the team" },
        ],
      },
      { id: "bench", name: "Run the benchmarks", tasks: [{ id: "bench-run", name: "Run deno task bench" }] },
      { id: "tag", name: "Tag and publish" },
    ],
  });
}

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return await client.callTool({ name, arguments: args }) as ToolResult;
}

function texts(host: PlanHost, selector: string): Promise<string[]> {
  return host.view.$$eval(selector, (els) => els.map((el) => el.textContent ?? ""));
}

/** Every tool the view called is one the server lists to it as app-only and read-only. */
async function assertOnlyViewReads(host: PlanHost, client: Client): Promise<void> {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  assert.ok(host.calls.length > 0, "the view read through the host");
  for (const call of host.calls) {
    const tool = byName.get(call.name);
    assert.ok(tool, `${call.name} is listed`);
    assert.equal(tool.annotations?.readOnlyHint, true, `${call.name} only reads`);
    assert.deepEqual((tool._meta as { ui?: { visibility?: string[] } }).ui?.visibility, ["app"]);
  }
}

Deno.test("the view shows a real startTask, then updates in place with completeTask, reading only", async () => {
  await using conn = await connectUi();
  await seed(conn.client);
  const startArgs = { sessionId: SESSION, id: "notes" };
  const started = await callTool(conn.client, "startTask", startArgs);
  await using browser = await launchBrowser();
  await using host = await openPlanHost(browser, conn.client);
  await host.show(startArgs, started);

  const { view } = host;
  assert.match(await view.textContent("#session .progress-label") ?? "", /^0\/7 done/);
  assert.equal(await view.getAttribute("li.row.active", "data-id"), "notes-draft");
  assert.deepEqual(
    await view.$$eval("li.row.path", (els) => els.map((el) => el.getAttribute("data-id"))),
    ["release", "notes", "notes-draft"],
  );
  // What the call did: the tasks it started are marked.
  assert.deepEqual(
    await view.$$eval("li.row:has(.c-started)", (els) => els.map((el) => el.getAttribute("data-id"))),
    ["release", "notes", "notes-draft"],
  );
  // The rest is folded: bench's subtask is not drawn until opened.
  assert.equal(await view.locator('li[data-id="bench-run"]').count(), 0);
  // Criteria and constraints that apply, own and inherited.
  assert.deepEqual(await texts(host, "#focus .criteria .rule"), [
    "CI is green on main",
    "Every merged PR is listed",
  ]);
  assert.deepEqual(await texts(host, "#focus .constraints .rule"), [
    "No breaking change to the tool names",
    "Plain English",
  ]);
  assert.deepEqual(await texts(host, "#focus .criteria .from"), ["from Ship release 2.0", "this task"]);

  // A newer result redraws the same document: no reload.
  await view.evaluate(() => void ((globalThis as Record<string, unknown>).__kept = "same document"));
  const completeArgs = { sessionId: SESSION, id: "notes-draft", resolution: "Listed all 42 PRs" };
  const completed = await callTool(conn.client, "completeTask", completeArgs);
  await host.show(completeArgs, completed);
  assert.equal(await view.evaluate(() => (globalThis as Record<string, unknown>).__kept), "same document");
  assert.match(await view.textContent("#session .progress-label") ?? "", /^1\/7 done/);
  assert.match(await view.getAttribute('li[data-id="notes-draft"]', "class") ?? "", /\bs-done\b/);
  // Nothing in progress now: the view says what comes next.
  assert.match(await view.textContent("#focus") ?? "", /Next: Review the notes with the team/);
  assert.equal(await view.textContent('li[data-id="notes-draft"] .change'), "completed");
  assert.match(await view.textContent("#changed") ?? "", /completed 1/);

  // Unfolding on demand reads the folded part through the host.
  await view.click('li[data-id="bench"] button.fold');
  await view.waitForSelector('li[data-id="bench-run"]');
  assert.ok(host.calls.some((c) => c.name === "view_rows" && c.arguments.parentId === "bench"));

  await assertOnlyViewReads(host, conn.client);
  assert.deepEqual(host.record.errors, []);
  assert.deepEqual(host.record.consoleErrors, []);
  assert.deepEqual(
    foreignRequests(host.record, host.origins.host).filter((u) => !u.startsWith(host.origins.view)),
    [],
  );
});
