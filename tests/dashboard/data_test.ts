/**
 * What the dashboard reads from the store's namespaces (docs/namespaces.md): the namespaces a
 * credential may see (`"*"`: its own and every one that holds anything; else its list), the chosen
 * session, history; and its JSON routes never serve a namespace the credential may not see.
 */
import assert from "node:assert/strict";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { PageViewSchema } from "../../lib/render/model.ts";
import { Authenticator } from "../../lib/auth/authenticator.ts";
import type { Credential } from "../../lib/auth/credential.ts";
import { DashboardData } from "../../lib/dashboard/server/data.ts";
import { createDashboard } from "../../lib/dashboard/server/routes.ts";
import { quietLogger } from "../support/logs.ts";

function reader(namespaces: Credential["namespaces"], own = "a"): Credential {
  return { name: "t", namespaces, own, access: "read" };
}

/** Namespaces a (a plan, a progress document) and b (a plan with a task in progress). */
async function store(options: { historySize?: number } = {}): Promise<MemoryStore> {
  const store = new MemoryStore(options);
  await store.space("a").updateTree("plan-a", (tree) => createTask(tree, { id: "x", name: "X" }), {
    tool: "createTask",
  });
  await store.space("a").updateProgress(
    "app",
    (c) => upsertProgress(c, { project: "app", content: { goal: "goal of a" }, now: "t" }),
  );
  await store.space("b").updateTree("plan-b", (tree) => {
    createTask(tree, { id: "y", name: "Y" });
    return startTask(tree, "y");
  });
  return store;
}

Deno.test("the page lists only the namespaces the credential may see", async () => {
  const data = new DashboardData(await store(), quietLogger());
  const onlyA = await data.page(reader(["a"]), {});
  PageViewSchema.parse(onlyA);
  assert.deepEqual(onlyA.namespaces.map((ns) => ns.name), ["a"]);
  assert.equal(onlyA.session?.id, "plan-a");
  assert.deepEqual(onlyA.documents.map((d) => d.project), ["app"]);
  const both = await data.page(reader("*"), {});
  assert.deepEqual(both.namespaces.map((ns) => ns.name), ["a", "b"]);
  // Without a choice, the first session with a task in progress is shown.
  assert.deepEqual([both.session?.namespace, both.session?.id], ["b", "plan-b"]);
  assert.deepEqual(both.documents, [], "the documents are those of the shown session's namespace");
  assert.equal(
    await data.children(reader(["a"]), { namespace: "b", session: "plan-b", offset: 0, count: 5 }),
    undefined,
  );
  assert.equal((await data.page(reader(["a"]), { namespace: "b", session: "plan-b" })).session, null);
});

Deno.test('with "*" the page lists the credential\'s own namespace and every namespace holding anything', async () => {
  const data = new DashboardData(await store(), quietLogger());
  assert.deepEqual((await data.page(reader("*", "default"), {})).namespaces.map((ns) => ns.name), [
    "default",
    "a",
    "b",
  ]);
  const empty = new DashboardData(new MemoryStore(), quietLogger());
  assert.deepEqual((await empty.page(reader("*", "default"), {})).namespaces, [{
    name: "default",
    total: 0,
    start: 0,
    after: "",
    sessions: [],
    previous: null,
    next: null,
  }]);
  // A listed namespace shows even while it is empty; an invalid name in a list is never read.
  const listed = await data.page(reader(["c", "a/b", "a"], "c"), {});
  assert.deepEqual(listed.namespaces.map((ns) => ns.name), ["c", "a"]);
});

Deno.test("asking for a namespace without a session shows that namespace's sessions and documents", async () => {
  const data = new DashboardData(await store(), quietLogger());
  const a = await data.page(reader("*"), { namespace: "a" });
  assert.deepEqual([a.session?.namespace, a.session?.id], ["a", "plan-a"]);
  assert.deepEqual(a.documents.map((d) => d.project), ["app"]);
});

Deno.test("a session's history shows when the store keeps one, and is null otherwise", async () => {
  const kept = await new DashboardData(await store(), quietLogger()).page(reader("*"), {
    namespace: "a",
    session: "plan-a",
  });
  assert.deepEqual(kept.session?.history?.entries.map((e) => e.tool), ["createTask"]);
  const off = await new DashboardData(await store({ historySize: 0 }), quietLogger()).page(reader("*"), {
    namespace: "a",
    session: "plan-a",
  });
  assert.equal(off.session?.history, null);
});

Deno.test("the dashboard's JSON routes answer 404 for a namespace the credential may not see", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-data-" });
  await Deno.writeTextFile(
    `${dir}/tokens.json`,
    JSON.stringify([{ name: "t", token: "only-a", namespaces: ["a"], access: "read" }]),
  );
  const access = await Authenticator.fromSettings({ authTokensFile: `${dir}/tokens.json` }, quietLogger());
  const { app } = createDashboard({ store: await store(), log: quietLogger(), access });
  const get = (path: string) =>
    app.request(`http://127.0.0.1${path}`, { headers: { authorization: "Bearer only-a" } });
  const seen = await get("/api/view?ns=a&session=plan-a");
  assert.equal(seen.status, 200);
  assert.equal((await seen.json()).session.id, "plan-a");
  for (
    const path of [
      "/api/view?ns=b",
      "/api/view?ns=b&session=plan-b",
      "/api/view?ns=nobody",
      "/api/view?ns=a%2Fb",
      "/api/children?ns=b&session=plan-b",
      "/api/children?ns=default&session=plan-a", // default, which this credential may not see
    ]
  ) {
    const response = await get(path);
    assert.equal(response.status, 404, path);
    const body = await response.text();
    assert.doesNotMatch(body, /plan-b|Y/, path);
  }
  const page = await get("/?ns=b&session=plan-b");
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /No such namespace here/);
  assert.doesNotMatch(html, /plan-b/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the page names the namespaces when it shows more than one", async () => {
  const both = createDashboard({ store: await store(), log: quietLogger() }).app;
  const html = await (await both.request("http://127.0.0.1/")).text();
  assert.match(html, /<section class="namespace" data-namespace="a"><h3>a<\/h3>/);
  assert.match(html, /<section class="namespace" data-namespace="b"><h3>b<\/h3>/);
  const one = new MemoryStore();
  await one.space("default").updateTree("plan", (tree) => createTask(tree, { id: "x", name: "X" }));
  const single = createDashboard({ store: one, log: quietLogger() }).app;
  const alone = await (await single.request("http://127.0.0.1/")).text();
  assert.match(alone, /data-namespace="default"><p class="session-count"[^>]*>1 session<\/p><ul/);
  assert.doesNotMatch(alone, /<h3>default<\/h3>/);
});
