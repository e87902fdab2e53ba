/**
 * The plan view in a real browser, inside a test host built on the official MCP Apps host side: the
 * view in a sandboxed iframe of another origin under the CSP its resource asks for, every call it
 * makes relayed to the real server through the SDK client.
 */
import assert from "node:assert/strict";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { foreignRequests, launchBrowser } from "../support/browser.ts";
import { ok, type ToolResult } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";
import { bigPlanDocument } from "../support/dashboard.ts";
import { connectUi, openPlanHost, type PlanHost } from "../support/plan_view.ts";

const SESSION = "release";

/** What the tests read in the view's window (tests are type-checked without the DOM lib). */
interface ViewWindow {
  document: {
    body: object;
    documentElement: { scrollWidth: number; dataset: Record<string, string | undefined> };
  };
  innerWidth: number;
  getComputedStyle(element: object): { backgroundColor: string };
}

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

Deno.test("the view shows the checklist tools' results: update_tasks and mark_task_as_done", async () => {
  await using conn = await connectUi();
  await using browser = await launchBrowser();
  await using host = await openPlanHost(browser, conn.client);
  const updateArgs = {
    sessionId: "list",
    tasks: [
      {
        taskId: "docs",
        description: "Write the docs",
        children: [{ taskId: "docs-api", description: "API page" }],
      },
      { taskId: "ship", description: "Ship it" },
    ],
  };
  await host.show(updateArgs, await callTool(conn.client, "update_tasks", updateArgs));
  const { view } = host;
  assert.equal(await view.getAttribute("#session", "data-session"), "list");
  assert.match(await view.textContent("#session .progress-label") ?? "", /^0\/3 done/);
  assert.deepEqual(
    await view.$$eval("li.row:has(.c-changed)", (els) => els.map((el) => el.getAttribute("data-id"))),
    ["docs", "docs-api", "ship"],
  );

  const markArgs = { sessionId: "list", taskIds: ["docs-api"] };
  await host.show(markArgs, await callTool(conn.client, "mark_task_as_done", markArgs));
  assert.match(await view.textContent("#session .progress-label") ?? "", /^[12]\/3 done/);
  assert.equal(await view.textContent('li[data-id="docs-api"] .change'), "completed");
  assert.match(await view.getAttribute('li[data-id="docs-api"]', "class") ?? "", /\bs-done\b/);

  const getArgs = { sessionId: "list" };
  await host.show(getArgs, await callTool(conn.client, "get_all_tasks", getArgs));
  assert.equal(await view.locator(".change").count(), 0, "a read marks nothing");
  await assertOnlyViewReads(host, conn.client);
  assert.deepEqual(host.record.errors, []);
});

Deno.test("agent text is text in the view: an XSS payload in names and criteria shows literally and runs nothing", async () => {
  const payload = `<img src=x onerror="alert('xss')"><script>alert('xss')</script>"'&`;
  await using conn = await connectUi();
  const args = {
    sessionId: "xss",
    id: "evil",
    name: `Root ${payload}`,
    description: payload,
    completion_criteria: [`Criterion ${payload}`],
    constraints: [`Constraint ${payload}`],
    tasks: [{ id: "leaf", name: `Leaf ${payload}`, description: payload }],
  };
  await callTool(conn.client, "createTask", args);
  const startArgs = { sessionId: "xss", id: "evil" };
  await using browser = await launchBrowser();
  await using host = await openPlanHost(browser, conn.client);
  await host.show(startArgs, await callTool(conn.client, "startTask", startArgs));
  const { view } = host;
  assert.equal(await view.textContent('li[data-id="evil"] .name'), `Root ${payload}`);
  assert.equal(await view.textContent('li[data-id="leaf"] .name'), `Leaf ${payload}`);
  assert.deepEqual(await texts(host, "#focus .criteria .rule"), [`Criterion ${payload}`]);
  assert.deepEqual(await texts(host, "#focus .constraints .rule"), [`Constraint ${payload}`]);
  assert.equal(await view.textContent("#focus .description"), payload);
  assert.equal(await view.locator("#plan img, #plan script").count(), 0, "no element came from agent text");
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(host.record.dialogs, []);
  assert.deepEqual(host.record.errors, []);
});

Deno.test("a 10,000-task session: the active path shows within a second of the result, and no read passes 64 KiB", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/tasks.json`;
    await Deno.writeTextFile(file, JSON.stringify(bigPlanDocument("big")));
    await using conn = await connectUi({ store: await JsonFileStore.open(file) });
    await using browser = await launchBrowser();
    await using host = await openPlanHost(browser, conn.client);
    const args = { sessionId: "big", id: "s5-4-50" };
    await host.show(args, await callTool(conn.client, "startTask", args));
    const { view } = host;
    assert.equal(await view.getAttribute("li.row.active", "data-id"), "s5-4-50");
    assert.deepEqual(
      await view.$$eval("li.row.path", (els) => els.map((el) => el.getAttribute("data-id"))),
      ["p5", "m5-4", "s5-4-50"],
    );
    // Measured in the view: from the result reaching it to the path drawn (performance marks).
    const ms = await view.evaluate(() => {
      const [result] = performance.getEntriesByName("checklist:result").slice(-1);
      const [shown] = performance.getEntriesByName("checklist:shown").slice(-1);
      return shown!.startTime - result!.startTime;
    });
    assert.ok(ms > 0 && ms < 1000, `active path shown after ${ms.toFixed(0)} ms`);
    assert.ok((await view.locator("#session .tree > li").count()) < 200, "never all the rows");

    await view.click('li[data-id="p7"] button.fold');
    await view.click('li[data-id="m7-2"] button.fold');
    await view.waitForSelector('li[data-id="s7-2-0"]');
    await view.click('li[data-kind=more][data-parent="m7-2"] button.load');
    await view.waitForSelector('li[data-id="s7-2-109"]');
    const largest = Math.max(...host.calls.map((c) => c.bytes));
    assert.ok(largest <= 64 * 1024, `largest read ${largest} bytes`);
    await assertOnlyViewReads(host, conn.client);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the view follows the host's light and dark theme, and fits a narrow chat column", async () => {
  await using conn = await connectUi();
  await seed(conn.client);
  const args = { sessionId: SESSION, id: "notes" };
  const started = await callTool(conn.client, "startTask", args);
  await using browser = await launchBrowser();
  const background = (host: PlanHost) =>
    host.view.evaluate(() => {
      const w = globalThis as unknown as ViewWindow;
      return w.getComputedStyle(w.document.body).backgroundColor;
    });
  {
    await using host = await openPlanHost(browser, conn.client, { theme: "dark", width: 320 });
    await host.show(args, started);
    assert.equal(await background(host), "rgb(21, 23, 26)");
    assert.equal(
      await host.view.evaluate(() =>
        (globalThis as unknown as ViewWindow).document.documentElement.dataset.theme
      ),
      "dark",
    );
    const overflow = await host.view.evaluate(() => {
      const w = globalThis as unknown as ViewWindow;
      return w.document.documentElement.scrollWidth - w.innerWidth;
    });
    assert.ok(overflow <= 0, `${overflow}px wider than a 320px column`);
    await host.theme("light");
    assert.equal(await background(host), "rgb(251, 251, 250)");
  }
  {
    await using host = await openPlanHost(browser, conn.client, { theme: "light" });
    await host.show(args, started);
    assert.equal(await background(host), "rgb(251, 251, 250)");
    await host.theme("dark");
    assert.equal(await background(host), "rgb(21, 23, 26)");
  }
});
