/**
 * The dashboard's session list is windowed (contract "Failures, limits and hostile input"): at most
 * 100 sessions at a time, how many there are, links to the next and previous windows, server-rendered
 * and kept by the live script; a session outside the window can still be chosen. A stored session
 * name with a lone surrogate (a JSON file from before the Unicode rule) never breaks the page: it is
 * left out and logged once.
 */
import assert from "node:assert/strict";
import { createTask } from "../../lib/domain/task_ops.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { PageViewSchema } from "../../lib/render/model.ts";
import { createDashboard } from "../../lib/dashboard/server/routes.ts";
import { launchBrowser, newPage } from "../support/browser.ts";
import { quietLogger, recordingLogger } from "../support/logs.ts";
import { spawnServer } from "../support/server_process.ts";
import { waitForUpdates } from "../support/dashboard.ts";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${String(i).padStart(4, "0")}`);

async function seeded(n: number, store: Store = new MemoryStore()): Promise<Store> {
  for (const id of ids(n)) {
    await store.space("default").updateTree(id, (t) => createTask(t, { id: "t", name: `Task of ${id}` }));
  }
  return store;
}

/** The session links of a served page, and its window links. */
function listed(html: string) {
  const sessions = [...html.matchAll(/<li class="session[^"]*"><a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((
    m,
  ) => m[2]!);
  const link = (rel: string): string | undefined =>
    [...html.matchAll(/<a href="([^"]*)" rel="(prev|next)"/g)].find((m) => m[2] === rel)?.[1]?.replaceAll(
      "&amp;",
      "&",
    );
  const count = /<p class="session-count"[^>]*>([^<]*)<\/p>/.exec(html)?.[1];
  return { sessions, next: link("next"), previous: link("prev"), count };
}

Deno.test("the page lists at most 100 sessions at a time, says how many, and links to the next and previous windows", async () => {
  const { app } = createDashboard({ store: await seeded(250), log: quietLogger() });
  const seen: string[] = [];
  let href: string | undefined = "/";
  const counts: string[] = [];
  const previous: (string | undefined)[] = [];
  while (href !== undefined) {
    const response = await app.request(`http://127.0.0.1/${href.replace(/^\/?/, "")}`);
    assert.equal(response.status, 200);
    const page = listed(await response.text());
    assert.ok(page.sessions.length <= 100 && page.sessions.length > 0, `${page.sessions.length} sessions`);
    seen.push(...page.sessions);
    counts.push(page.count!);
    previous.push(page.previous);
    href = page.next;
    assert.ok(seen.length <= 250, "the windows end");
  }
  assert.deepEqual(seen, ids(250), "every session once, in order");
  assert.deepEqual(counts, ["Sessions 1–100 of 250", "Sessions 101–200 of 250", "Sessions 201–250 of 250"]);
  assert.deepEqual(previous, [undefined, "?ns=default", "?ns=default&after=s0099"]);
});

Deno.test("/api/view carries the window: total, start, cursors, at most 100 sessions; a session outside it can be chosen", async () => {
  const { app } = createDashboard({ store: await seeded(250), log: quietLogger() });
  const read = async (query: string) =>
    PageViewSchema.parse(await (await app.request(`http://127.0.0.1/api/view${query}`)).json());
  const first = await read("");
  const ns = first.namespaces[0]!;
  assert.deepEqual([ns.total, ns.start, ns.sessions.length, ns.previous, ns.next], [
    250,
    0,
    100,
    null,
    "s0099",
  ]);
  const second = (await read("?after=s0099")).namespaces[0]!;
  assert.deepEqual([second.start, second.sessions[0]!.id, second.previous, second.next], [
    100,
    "s0100",
    "",
    "s0199",
  ]);
  // A cursor that is no session starts after where it would sort.
  assert.equal((await read("?after=s0150x")).namespaces[0]!.sessions[0]!.id, "s0151");
  const chosen = await read("?session=s0240");
  assert.equal(chosen.session?.id, "s0240", "a session outside the window shown is still shown");
  const html = await (await app.request("http://127.0.0.1/?after=s0199&session=s0240")).text();
  assert.match(
    html,
    /href="\?ns=default&amp;after=s0199&amp;session=s0240" aria-current="page"/,
    "links keep the window",
  );
});

Deno.test("the page at 5,000 sessions stays small", async () => {
  const { app } = createDashboard({ store: await seeded(5000), log: quietLogger() });
  const html = await (await app.request("http://127.0.0.1/")).text();
  const json = await (await app.request("http://127.0.0.1/api/view")).text();
  assert.equal(listed(html).sessions.length, 100);
  assert.ok(html.length < 120_000, `page ${html.length} characters`);
  assert.ok(json.length < 60_000, `view ${json.length} characters`);
});

Deno.test("a stored session name with a lone surrogate never breaks the page: left out, logged once", async () => {
  // The memory store keeps names as the store API was given them; a file or Deno KV store repairs such
  // names at load instead (tests/store/old_names_test.ts), so only this path can still meet them.
  const store = await seeded(2);
  await store.space("default").updateTree("q\ud800", (t) => createTask(t, { id: "t", name: "T" }));
  const { log, records } = recordingLogger();
  const { app } = createDashboard({ store, log });
  for (let i = 0; i < 2; i++) {
    const page = await app.request("http://127.0.0.1/");
    assert.equal(page.status, 200);
    assert.deepEqual(listed(await page.text()).sessions, ["s0000", "s0001"]);
    const view = await app.request("http://127.0.0.1/api/view");
    assert.equal(view.status, 200);
    assert.deepEqual(PageViewSchema.parse(await view.json()).namespaces[0]!.sessions.map((s) => s.id), [
      "s0000",
      "s0001",
    ]);
  }
  const warnings = records.filter((r) => /not well-formed Unicode/.test(r.msg));
  assert.deepEqual(warnings.map((r) => r.session), ['"q\\ud800"']);
});

Deno.test("the live script keeps the window it shows: after a change, the same window with the new count", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-window-" });
  try {
    const path = `${dir}/store.json`;
    const store = await seeded(150, await JsonFileStore.open(path));
    await store.close();
    await using server = await spawnServer({ env: { FILE_PATH: path } });
    await using browser = await launchBrowser();
    await using tab = await newPage(browser);
    const { page } = tab;
    await page.goto(`${server.url}/?after=s0099&session=s0120`);
    const shown = () => page.$$eval("#sessions li.session a", (els) => els.map((e) => e.textContent));
    assert.deepEqual(await shown(), ids(150).slice(100));
    assert.equal(await page.textContent("#sessions .session-count"), "Sessions 101–150 of 150");
    await page.waitForSelector("#live[data-state=live]");
    // A change from another process: the store file gains a session (the live feed sees it).
    const writer = await JsonFileStore.open(path);
    await writer.space("default").updateTree("s0149z", (t) => createTask(t, { id: "t", name: "new" }));
    await writer.close();
    await waitForUpdates(page, 1, 15_000);
    assert.deepEqual(await shown(), [...ids(150).slice(100), "s0149z"]);
    assert.equal(await page.textContent("#sessions .session-count"), "Sessions 101–151 of 151");
    assert.equal(await page.textContent("#session h2"), "s0120");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
