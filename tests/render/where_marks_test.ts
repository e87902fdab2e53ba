/**
 * Where work is, in the view model and its drawing (docs/teams.md "Paths and reservations", "Where the
 * work lives"): a held leaf's paths (own or inherited, the first few and a count) and branch@head; the
 * leaves that would be ready but for another agent's live reservation, with their holders; reservations
 * judged with the builder's clock, leases drawn with the viewer's; patterns drawn as text.
 */
import assert from "node:assert/strict";
import type { Claim, GitRecord, Task, TaskStatus } from "../../lib/domain/schemas.ts";
import { buildSessionView } from "../../lib/render/build.ts";
import { childRows, foldTree } from "../../lib/render/fold.ts";
import { SessionViewSchema, type TaskRow } from "../../lib/render/model.ts";
import { sessionPanel } from "../../lib/render/render.ts";
import { heldWork, PATHS_SHOWN, reservationMarks, RESERVERS_SHOWN } from "../../lib/render/team_marks.ts";
import { toHtml } from "../../lib/render/vnode.ts";
import { run, task, treeOf } from "../support/trees.ts";

const NOW = Date.parse("2026-11-26T06:00:00.000Z");
const at = (ms: number) => new Date(NOW + ms).toISOString();
const HEAD = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";

function st(id: string, status: TaskStatus, ...tasks: Task[]): Task {
  return { ...task(id, ...tasks), status };
}

/** A leaf in progress held by `agent` until `NOW + leftMs`, with `paths` of its own (none: inherited). */
function held(id: string, agent: string, leftMs: number, paths?: string[]): Task {
  const claim: Claim = { agent, since: at(leftMs - 1_800_000), expires_at: at(leftMs) };
  return { ...st(id, "in_progress"), claim, ...(paths ? { paths } : {}) };
}

function withPaths(t: Task, ...paths: string[]): Task {
  return { ...t, paths };
}

function rowsById(rows: ReturnType<typeof foldTree>): Map<string, TaskRow> {
  return new Map(rows.filter((r): r is TaskRow => r.kind === "task").map((r) => [r.id, r]));
}

/**
 * A parallel plan (paths as stored: normalised): `backend` holds `api` (src/api/**), `ui` holds `web`
 * (inherits src/web/**) with a git record; `users` collides with both, `v2` with backend but is blocked, `seq` is a sequential part
 * under src/api/seq/ whose first leaf collides with backend, `free` collides with nobody.
 */
function plan(backendLeftMs = 600_000): ReturnType<typeof treeOf> {
  const git: GitRecord = {
    agent: "ui",
    at: at(-60_000),
    worktree: "/home/me/shop-ui",
    branch: "feature/web",
    head: HEAD,
    dirty_count: 2,
  };
  return treeOf({
    ...st(
      "root",
      "in_progress",
      held("api", "backend", backendLeftMs, [
        "src/api/**",
        "docs/api.md",
        "openapi.yaml",
        "tests/api/**",
        "x/**",
      ]),
      withPaths(st("webpart", "in_progress", { ...held("web", "ui", 600_000), git }), "src/web/**"),
      withPaths(task("users"), "src/api/users.ts", "src/web/account/**"),
      { ...withPaths(task("v2"), "src/api/v2/**"), blocked_by: ["api"] },
      withPaths(task("seq", task("seq1"), task("seq2")), "src/api/seq/**"),
      withPaths(task("free"), "site/**"),
      task("nopaths"),
    ),
    parallel: true,
  });
}

Deno.test("a held leaf's work: its paths, own or inherited, the first few and a count, and its git record in short", () => {
  const tree = plan();
  assert.deepEqual(heldWork(tree, tree.get("api")!), {
    paths: ["src/api/**", "docs/api.md", "openapi.yaml"].slice(0, PATHS_SHOWN),
    paths_more: 5 - PATHS_SHOWN,
  });
  assert.deepEqual(heldWork(tree, tree.get("web")!), {
    paths: ["src/web/**"],
    git: {
      short: "feature/web@1a2b3c4",
      line: "feature/web@1a2b3c4 in /home/me/shop-ui, 2 dirty",
      agent: "ui",
      at: at(-60_000),
    },
  });
  // Nobody holds it, or it has neither paths nor a record: nothing.
  assert.equal(heldWork(tree, tree.get("users")!), undefined);
  assert.equal(heldWork(tree, tree.get("webpart")!), undefined);
  const bare = treeOf({
    ...st("r", "in_progress", held("h", "a", 1000), st("anon", "in_progress")),
    parallel: true,
  });
  assert.equal(heldWork(bare, bare.get("h")!), undefined);
  assert.equal(heldWork(bare, bare.get("anon")!), undefined);
});

Deno.test("a leaf that would be ready but for other agents' live reservations names them; blocked, out-of-order, held and free leaves do not", () => {
  const tree = plan();
  const mark = reservationMarks(tree, NOW);
  assert.deepEqual(mark(tree.get("users")!), {
    reserved_by: [
      {
        agent: "backend",
        expires_at: at(600_000),
        id: "api",
        name: "Task api",
        pair: ["src/api/users.ts", "src/api/**"],
      },
      {
        agent: "ui",
        expires_at: at(600_000),
        id: "web",
        name: "Task web",
        pair: ["src/web/account/**", "src/web/**"],
      },
    ],
  });
  assert.deepEqual(mark(tree.get("seq1")!).reserved_by?.map((r) => r.agent), ["backend"]);
  for (const id of ["seq2", "v2", "free", "nopaths", "api", "web", "root", "seq", "webpart"]) {
    assert.deepEqual(mark(tree.get(id)!), {}, id);
  }
});

Deno.test("an ended lease reserves nothing: no leaf waits on it, and its own leaf, ready for others, may wait on someone else's", () => {
  const tree = plan(-1000);
  const mark = reservationMarks(tree, NOW);
  assert.deepEqual(mark(tree.get("users")!).reserved_by?.map((r) => r.agent), ["ui"]);
  assert.deepEqual(mark(tree.get("seq1")!), {});
  // The stale leaf's paths now collide with a live reservation: it waits on it.
  const lapsed = treeOf({
    ...st("r", "in_progress", held("old", "a", -1000, ["src/**"]), held("new", "b", 60_000, ["src/b.ts"])),
    parallel: true,
  });
  assert.deepEqual(reservationMarks(lapsed, NOW)(lapsed.get("old")!).reserved_by?.map((r) => r.agent), ["b"]);
});

Deno.test("a leaf colliding with more holders than are listed counts the rest", () => {
  const agents = Array.from(
    { length: RESERVERS_SHOWN + 2 },
    (_, i) => held(`h${i}`, `agent-${i}`, 60_000, [`src/${i}/**`]),
  );
  const tree = treeOf({
    ...st("r", "in_progress", ...agents, withPaths(task("all"), "src/**")),
    parallel: true,
  });
  const mark = reservationMarks(tree, NOW)(tree.get("all")!);
  assert.equal(mark.reserved_by?.length, RESERVERS_SHOWN);
  assert.equal(mark.reserved_more, 2);
});

Deno.test("the rows carry where work is only when asked (the dashboard), folded parts too; the plan view's rows never", () => {
  const tree = plan();
  const rows = rowsById(foldTree(tree, { work: { now: NOW }, open: ["seq"] }));
  assert.deepEqual(rows.get("api")!.work?.paths_more, 2);
  assert.deepEqual(rows.get("users")!.reserved_by?.map((r) => r.agent), ["backend", "ui"]);
  assert.deepEqual(rows.get("seq1")!.reserved_by?.map((r) => r.agent), ["backend"]);
  const part = rowsById(childRows(tree, { parentId: "seq", offset: 0, count: 10 }, { work: { now: NOW } })!);
  assert.deepEqual(part.get("seq1")!.reserved_by?.map((r) => r.agent), ["backend"]);
  SessionViewSchema.parse(buildSessionView("default", "s", tree, { work: { now: NOW } }));
  const plain = [
    ...foldTree(tree, { open: ["seq"] }),
    ...childRows(tree, { parentId: "seq", offset: 0, count: 10 })!,
  ];
  for (const row of rowsById(plain).values()) {
    assert.deepEqual([row.work, row.reserved_by], [undefined, undefined]);
  }
});

Deno.test("drawn: patterns and the branch as text, what a lease's end changes hidden or shown by the viewer's clock", () => {
  const evil = `<img src=x onerror="alert('path')">`;
  const tree = plan();
  run(tree, (t) => t.setField(t.get("api")!, "paths", [evil, "src/api/**"]));
  const view = buildSessionView("default", "s", tree, { work: { now: NOW } });
  const live = toHtml(sessionPanel(view, NOW));
  assert.ok(!live.includes("<img"));
  assert.match(
    live,
    /<span class="paths" data-expires="[^"]+" title="[^"]+"><code class="pattern">&lt;img src=x onerror=&quot;alert\(&#39;path&#39;\)&quot;&gt;<\/code>, <code class="pattern">src\/api\/\*\*<\/code><span class="lapsed" data-while="stale" hidden> \(not reserved: the lease has ended\)<\/span><\/span>/,
  );
  assert.match(
    live,
    /<span class="branch" title="Where the work was last seen: feature\/web@1a2b3c4 in \/home\/me\/shop-ui, 2 dirty \(by ui at 2026-11-26 05:59:00 UTC\)">feature\/web@1a2b3c4<\/span>/,
  );
  assert.match(
    live,
    /<span class="reserved-by" data-expires="[^"]+" data-while="live" title="[^"]+">paths reserved by <span class="reserver" data-agent="backend"/,
  );
  // Eleven minutes later on the viewer's clock, both leases have ended: the paths say so, and the
  // leaf no longer shows as waiting (the server judges again on the next change).
  const later = toHtml(sessionPanel(view, NOW + 660_000));
  assert.match(
    later,
    /<span class="paths stale"[^>]*>.*<span class="lapsed" data-while="stale"> \(not reserved/,
  );
  assert.match(later, /<span class="reserved-by" data-expires="[^"]+" data-while="live" hidden title=/);
  assert.match(later, /<span class="reserver stale" data-agent="backend"/);
});
