/**
 * Where work is, in the dashboard's data (docs/teams.md "Paths and reservations", "Where the work
 * lives"): each held leaf's row carries its paths (own or inherited, the first three and a count) and
 * its branch@head; a leaf that would be ready but for other agents' live reservations names their
 * holders, and no other leaf does (blocked, out of order, held, or colliding only with an ended
 * lease). Made through a real client, with a real git recorder on a real repository. The plan view's
 * reads carry none of it.
 */
import assert from "node:assert/strict";
import { LOCAL_CREDENTIAL } from "../../lib/auth/credential.ts";
import { createGitRecorder } from "../../lib/git/git_recorder.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { DashboardData } from "../../lib/dashboard/server/data.ts";
import { PageViewSchema, type Row, SessionViewSchema, type TaskRow } from "../../lib/render/model.ts";
import { ok, type ToolResult } from "../support/harness.ts";
import { gitPlace } from "../support/git_repos.ts";
import { quietLogger } from "../support/logs.ts";
import { connectUi } from "../support/plan_view.ts";
import { sleep } from "../support/time.ts";

/** The shop of docs/teams.md, and a few leaves that collide with it in other ways. */
const SHOP = {
  sessionId: "shop",
  id: "build",
  name: "Build the shop",
  parallel: true,
  tasks: [
    { id: "api", name: "Build API", paths: ["src/api/", "docs/api.md", "openapi.yaml", "tests/api/"] },
    { id: "users", name: "User accounts", paths: ["src/api/users.ts", "src/web/account/"] },
    { id: "web", name: "Build UI", paths: ["src/web/"] },
    { id: "later", name: "API v2", paths: ["src/api/v2/"], blocked_by: ["api"] },
    {
      id: "orders",
      name: "Orders",
      paths: ["src/api/orders/"],
      tasks: [{ id: "o1", name: "Order model" }, { id: "o2", name: "Order routes" }],
    },
    { id: "site", name: "Site", paths: ["site/"], tasks: [{ id: "s1", name: "Landing page" }] },
  ],
};

function taskRows(rows: readonly Row[]): Map<string, TaskRow> {
  return new Map(rows.filter((r): r is TaskRow => r.kind === "task").map((r) => [r.id, r]));
}

Deno.test("each held leaf shows its paths and branch@head; a leaf waiting on reservations names their holders; the plan view shows none of it", async () => {
  await using place = await gitPlace();
  const repo = await place.init("shop");
  await repo.write("README.md", "shop\n");
  await repo.commit("init");
  await repo.git("checkout", "-q", "-b", "feature/api");
  const head = await repo.head();
  const store = new MemoryStore();
  await using conn = await connectUi({
    store,
    readGit: createGitRecorder({ dir: repo.dir, log: quietLogger() }),
  });
  await ok(conn.client, "createTask", SHOP);
  await ok(conn.client, "claimTask", { sessionId: "shop", agent: "backend" });
  await ok(conn.client, "claimTask", { sessionId: "shop", agent: "ui" });
  await ok(conn.client, "claimTask", { sessionId: "shop", agent: "web2", id: "site" });

  const data = new DashboardData(store, quietLogger());
  const page = await data.page(LOCAL_CREDENTIAL, { session: "shop", open: ["orders"] });
  PageViewSchema.parse(page);
  const rows = taskRows(page.session!.rows);
  assert.deepEqual(rows.get("api")!.work, {
    paths: ["src/api/**", "docs/api.md", "openapi.yaml"],
    paths_more: 1,
    git: {
      short: `feature/api@${head.slice(0, 7)}`,
      line: `feature/api@${head.slice(0, 7)} in ${repo.dir}, clean`,
      agent: "backend",
      at: rows.get("api")!.work!.git!.at,
    },
  });
  assert.equal(rows.get("web")!.claim?.agent, "ui");
  assert.deepEqual(rows.get("web")!.work?.paths, ["src/web/**"]);
  // Inherited from its parent.
  assert.deepEqual(rows.get("s1")!.work?.paths, ["site/**"]);
  // users collides with both holders; o1 (first of a sequential part) with backend; o2 waits for o1.
  const reservers = (id: string) =>
    rows.get(id)!.reserved_by?.map((r) => [r.agent, r.id, r.name, r.pair[0], r.pair[1]]);
  assert.deepEqual(reservers("users"), [
    ["backend", "api", "Build API", "src/api/users.ts", "src/api/**"],
    ["ui", "web", "Build UI", "src/web/account/**", "src/web/**"],
  ]);
  assert.deepEqual(reservers("o1"), [["backend", "api", "Build API", "src/api/orders/**", "src/api/**"]]);
  assert.equal(rows.get("o2")!.reserved_by, undefined, "out of order: not ready anyway");
  assert.equal(rows.get("later")!.reserved_by, undefined, "blocked: marked as blocked instead");
  assert.deepEqual(rows.get("later")!.blocked_by, [{ id: "api", name: "Build API" }]);
  for (const id of ["api", "web", "s1", "build", "orders", "site"]) {
    assert.equal(rows.get(id)!.reserved_by, undefined, id);
  }
  for (const id of ["users", "later", "o1", "o2", "build", "orders"]) {
    assert.equal(rows.get(id)!.work, undefined, id);
  }

  // A folded part read on its own carries the same marks.
  const children = await data.children(LOCAL_CREDENTIAL, {
    namespace: "default",
    session: "shop",
    parentId: "orders",
    offset: 0,
    count: 10,
  });
  assert.deepEqual(taskRows(children!.rows).get("o1")!.reserved_by?.map((r) => r.agent), ["backend"]);
  const roots = await data.children(LOCAL_CREDENTIAL, {
    namespace: "default",
    session: "shop",
    parentId: "build",
    offset: 0,
    count: 10,
  });
  assert.deepEqual(taskRows(roots!.rows).get("api")!.work?.paths_more, 1);

  // The plan view's reads: the same rows without where work is.
  const view = await conn.client.callTool({ name: "view_session", arguments: { sessionId: "shop" } });
  const planRows = taskRows(SessionViewSchema.parse((view as ToolResult).structuredContent).rows);
  assert.equal(planRows.get("api")!.claim?.agent, "backend");
  for (const row of planRows.values()) {
    assert.deepEqual([row.work, row.reserved_by], [undefined, undefined], row.id);
  }
  const planChildren = await conn.client.callTool({
    name: "view_rows",
    arguments: { sessionId: "shop", parentId: "orders", offset: 0, count: 10 },
  }) as ToolResult;
  for (const row of (planChildren.structuredContent as { rows: TaskRow[] }).rows) {
    assert.equal(row.reserved_by, undefined, row.id);
  }
});

Deno.test("a stale claim keeps its paths and branch on its row, but reserves nothing: no leaf waits on it", async () => {
  const store = new MemoryStore();
  await using conn = await connectUi({ store });
  await ok(conn.client, "createTask", SHOP);
  await ok(conn.client, "claimTask", { sessionId: "shop", agent: "backend", lease_seconds: 1 });
  await ok(conn.client, "claimTask", { sessionId: "shop", agent: "ui" });
  const data = new DashboardData(store, quietLogger());
  const read = async () =>
    taskRows((await data.page(LOCAL_CREDENTIAL, { session: "shop", open: ["orders"] })).session!.rows);
  const before = await read();
  assert.deepEqual(before.get("users")!.reserved_by?.map((r) => r.agent), ["backend", "ui"]);
  assert.deepEqual(before.get("o1")!.reserved_by?.map((r) => r.agent), ["backend"]);
  await sleep(1100);
  const after = await read();
  assert.equal(after.get("api")!.claim?.agent, "backend");
  assert.deepEqual(after.get("api")!.work?.paths, ["src/api/**", "docs/api.md", "openapi.yaml"]);
  assert.equal(after.get("api")!.work?.git, undefined, "no git record without a recorder");
  assert.deepEqual(after.get("users")!.reserved_by?.map((r) => r.agent), ["ui"]);
  assert.deepEqual(after.get("o1")!.reserved_by, undefined);
  // The stale leaf itself is ready for others again, and collides with nobody's live reservation.
  assert.equal(after.get("api")!.reserved_by, undefined);
});
