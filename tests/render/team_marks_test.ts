/**
 * Who holds what in the views (docs/teams.md): lease time left and stale claims against the
 * viewer's clock, what a blocked task waits for (own and inherited blockers), parallel parents, and
 * the agents at work of a session.
 */
import assert from "node:assert/strict";
import type { Claim, Task, TaskStatus } from "../../lib/domain/schemas.ts";
import { jsonBytes, READ_BYTES, sessionViewWithin } from "../../lib/render/budget.ts";
import { buildSessionView, summarizeSession } from "../../lib/render/build.ts";
import { foldTree, HELD_WINDOW } from "../../lib/render/fold.ts";
import { AGENTS_SHOWN, SessionViewSchema, type TaskRow } from "../../lib/render/model.ts";
import { claimNode, sessionList, sessionPanel } from "../../lib/render/render.ts";
import { agentsAtWork, blockedMark, BLOCKERS_SHOWN } from "../../lib/render/team_marks.ts";
import { unfinishedBlockers } from "../../lib/domain/team.ts";
import { durationLabel, escapeHtml, leaseLabel, leaseLive } from "../../lib/render/text.ts";
import { toHtml } from "../../lib/render/vnode.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { task, treeOf } from "../support/trees.ts";

const NOW = Date.parse("2026-11-26T06:00:00.000Z");
const at = (ms: number) => new Date(NOW + ms).toISOString();

function st(id: string, status: TaskStatus, ...tasks: Task[]): Task {
  return { ...task(id, ...tasks), status };
}

/** A leaf in progress held by `agent` until `NOW + leftMs`. */
function held(id: string, agent: string, leftMs: number): Task {
  const claim: Claim = { agent, since: at(leftMs - 1_800_000), expires_at: at(leftMs) };
  return { ...st(id, "in_progress"), claim };
}

function rowsById(rows: ReturnType<typeof foldTree>): Map<string, TaskRow> {
  return new Map(rows.filter((r): r is TaskRow => r.kind === "task").map((r) => [r.id, r]));
}

Deno.test("a lease is live while the viewer's clock is before expires_at, and stale from then on", () => {
  assert.equal(leaseLive(at(1), NOW), true);
  assert.equal(leaseLive(at(0), NOW), false);
  assert.equal(leaseLive(at(-5000), NOW), false);
  assert.equal(leaseLive("not a time", NOW), false);
});

Deno.test("the time left on a lease is counted from the viewer's clock, coarser as it grows", () => {
  assert.equal(durationLabel(45_900), "45s");
  assert.equal(durationLabel(12 * 60_000 + 5_000), "12m 05s");
  assert.equal(durationLabel(3_600_000 + 5 * 60_000), "1h 05m");
  assert.equal(durationLabel(2 * 86_400_000 + 3 * 3_600_000), "2d 3h");
  assert.equal(leaseLabel(at(29 * 60_000 + 59_000), NOW), "29m 59s left");
  assert.equal(leaseLabel(at(29 * 60_000 + 59_000), NOW + 60_000), "28m 59s left");
  assert.equal(leaseLabel(at(-180_000), NOW), "stale, ended 3m 00s ago");
  assert.equal(leaseLabel(at(0), NOW), "stale, ended 0s ago");
});

Deno.test("a task waits for its own unfinished blockers and its ancestors', root first, done ones and unknown ids left out", () => {
  const tree = treeOf(
    st("done1", "done"),
    task("todo1"),
    task("todo2"),
    {
      ...task("p", { ...task("c"), blocked_by: ["todo2", "done1", "todo1"] }),
      blocked_by: ["todo1", "gone"],
    },
  );
  const c = tree.get("c")!;
  assert.deepEqual(unfinishedBlockers(tree, c).map((t) => t.id), ["todo1", "todo2"]);
  assert.deepEqual(unfinishedBlockers(tree, tree.get("p")!).map((t) => t.id), ["todo1"]);
  assert.deepEqual(unfinishedBlockers(tree, tree.get("todo1")!), []);
  assert.deepEqual(blockedMark(tree, c), {
    blocked_by: [{ id: "todo1", name: "Task todo1" }, { id: "todo2", name: "Task todo2" }],
  });
  // A done task is not marked, whatever its blockers.
  const doneTree = treeOf(task("x"), { ...st("y", "done"), blocked_by: ["x"] });
  assert.deepEqual(blockedMark(doneTree, doneTree.get("y")!), {});
});

Deno.test("a row lists the first few blockers and counts the rest", () => {
  const blockers = Array.from({ length: 5 }, (_, i) => task(`b${i}`));
  const tree = treeOf(...blockers, { ...task("w"), blocked_by: blockers.map((b) => b.id) });
  const mark = blockedMark(tree, tree.get("w")!);
  assert.equal(mark.blocked_by?.length, BLOCKERS_SHOWN);
  assert.equal(mark.blocked_more, 5 - BLOCKERS_SHOWN);
});

Deno.test("the agents at work are the held leaves in progress, live and stale, by agent name; an anonymous leaf is none", () => {
  const tree = treeOf({
    ...st(
      "root",
      "in_progress",
      held("a", "zed", 600_000),
      held("b", "amy", -60_000),
      st("c", "in_progress"),
      task("d"),
    ),
    parallel: true,
  });
  assert.deepEqual(agentsAtWork(tree), {
    agents: [
      { agent: "amy", expires_at: at(-60_000), id: "b", name: "Task b" },
      { agent: "zed", expires_at: at(600_000), id: "a", name: "Task a" },
    ],
  });
  const summary = summarizeSession("default", "s", tree);
  assert.deepEqual(summary.agents, [
    { agent: "amy", expires_at: at(-60_000) },
    { agent: "zed", expires_at: at(600_000) },
  ]);
  // Stale at the viewer's clock: drawn as stale, live ones with their time left.
  const html = toHtml(sessionPanel(buildSessionView("default", "s", tree), NOW));
  assert.match(
    html,
    /<span class="claim stale" data-agent="amy"[^>]*><span class="agent">@amy<\/span> <time class="lease"[^>]*>stale, ended 1m 00s ago<\/time>/,
  );
  assert.match(
    html,
    /<span class="claim" data-agent="zed"[^>]*><span class="agent">@zed<\/span> <time class="lease"[^>]*>10m 00s left<\/time>/,
  );
  // Ten minutes later the same view draws zed's lease as stale too.
  assert.match(
    toHtml(sessionPanel(buildSessionView("default", "s", tree), NOW + 600_000)),
    /class="claim stale" data-agent="zed"/,
  );
});

Deno.test("more agents at work than are listed are counted", () => {
  const leaves = Array.from({ length: AGENTS_SHOWN + 3 }, (_, i) => held(`l${i}`, `agent-${i}`, 60_000));
  const tree = treeOf({ ...st("root", "in_progress", ...leaves), parallel: true });
  const { agents, agents_more } = agentsAtWork(tree);
  assert.equal(agents.length, AGENTS_SHOWN);
  assert.equal(agents_more, 3);
});

Deno.test("rows show parallel parents, the holder of each leaf in progress and what blocked tasks wait for; held leaves are unfolded", () => {
  const tree = treeOf(
    task("setup"),
    {
      ...st(
        "work",
        "in_progress",
        st("api", "in_progress", held("api-1", "backend", 60_000)),
        st("ui", "in_progress", task("ui-0"), held("ui-1", "frontend", 60_000)),
        { ...task("docs", task("docs-1")), blocked_by: ["api"] },
      ),
      parallel: true,
    },
  );
  const rows = rowsById(foldTree(tree));
  assert.deepEqual([...rows.keys()], ["setup", "work", "api", "api-1", "ui", "ui-0", "ui-1", "docs"]);
  assert.equal(rows.get("work")!.parallel, true);
  assert.equal(rows.get("api")!.parallel, undefined);
  assert.deepEqual(rows.get("api-1")!.claim, { agent: "backend", expires_at: at(60_000) });
  assert.deepEqual(rows.get("ui-1")!.claim, { agent: "frontend", expires_at: at(60_000) });
  assert.equal(rows.get("api-1")!.active && rows.get("ui-1")!.active, true, "every held leaf is in progress");
  assert.equal(rows.get("api")!.claim, undefined, "a parent holds nothing");
  assert.deepEqual(rows.get("docs")!.blocked_by, [{ id: "api", name: "Task api" }]);
  assert.equal(rows.get("docs")!.open, false);
  const view = buildSessionView("default", "s", tree);
  SessionViewSchema.parse(view);
  const html = toHtml(sessionPanel(view, NOW));
  assert.match(html, /class="row s-todo d-1 blocked"[^>]*data-id="docs"/);
  assert.match(html, /waits for <span class="blocker" data-id="api">Task api<\/span>/);
  assert.match(html, /class="row s-in_progress d-0 path parallel"[^>]*data-id="work"/);
});

Deno.test("another agent's leaf in a long list shows with a narrow window of its siblings", () => {
  const steps = Array.from({ length: 30 }, (_, i) => (i < 20 ? st(`b${i}`, "done") : task(`b${i}`)));
  steps[20] = held("b20", "other", 60_000);
  const tree = treeOf({
    ...st(
      "r",
      "in_progress",
      st("a", "in_progress", held("a0", "me", 60_000)),
      st("b", "in_progress", ...steps),
    ),
    parallel: true,
  });
  const rows = foldTree(tree, { focus: "a0" });
  const under = rows.filter((r) => r.parent_id === "b");
  assert.equal(under.filter((r) => r.kind === "task").length, HELD_WINDOW);
  assert.deepEqual(
    under.map((r) => (r.kind === "task" ? r.id : `+${r.count}@${r.offset}`)),
    ["+17@0", "b17", "b18", "b19", "b20", "b21", "b22", "b23", "+6@24"],
  );
  assert.equal((under[4] as TaskRow).claim?.agent, "other");
});

Deno.test("the view centres on the leaf a call started when several are in progress", () => {
  const tree = treeOf({
    ...st("r", "in_progress", held("a", "one", 1000), held("b", "two", 1000)),
    parallel: true,
  });
  const first = tree.activeLeaves()[0]!.id;
  const other = first === "a" ? "b" : "a";
  assert.equal(buildSessionView("default", "s", tree).focus?.id, first);
  const view = buildSessionView("default", "s", tree, { focus: other });
  assert.equal(view.focus?.id, other);
  assert.deepEqual(view.focus?.claim, { agent: other === "a" ? "one" : "two", expires_at: at(1000) });
  assert.deepEqual(view.rows.filter((r) => r.kind === "task" && r.on_path).map((r) => (r as TaskRow).id), [
    "r",
    other,
  ]);
  // A focus that is not a leaf in progress is ignored.
  assert.equal(buildSessionView("default", "s", tree, { focus: "r" }).focus?.id, first);
});

Deno.test("without agents the view carries no claims, blockers or agents at work", () => {
  const tree = treeOf(st("a", "in_progress", st("a1", "in_progress"), task("a2")));
  const view = buildSessionView("default", "s", tree);
  assert.deepEqual(view.agents, []);
  assert.equal(view.agents_more, undefined);
  for (const row of view.rows) {
    assert.deepEqual(Object.keys(row).filter((k) => ["claim", "blocked_by", "parallel"].includes(k)), []);
  }
  assert.ok(!toHtml(sessionPanel(view, NOW)).includes('id="agents"'));
});

Deno.test("agent names and everything agents wrote are drawn as text", () => {
  const evil = `<img src=x onerror="alert(1)">`;
  const html = toHtml(claimNode({ agent: evil, expires_at: at(1000) }, NOW));
  assert.ok(!html.includes("<img"));
  assert.ok(html.includes(escapeHtml(`@${evil}`)));
  const tree = treeOf(
    { ...st("r", "in_progress", held("x", evil, 1000), { ...task("y"), blocked_by: ["x"] }), parallel: true },
  );
  tree.get("x")!.name = evil;
  const page = toHtml(sessionPanel(buildSessionView("default", "s", tree), NOW)) +
    toHtml(
      sessionList(
        [{
          name: "default",
          total: 1,
          start: 0,
          after: "",
          sessions: [summarizeSession("default", "s", tree)],
          previous: null,
          next: null,
        }],
        undefined,
        NOW,
      ),
    );
  assert.ok(!page.includes("<img"));
});

Deno.test("a session view with agents and blockers at every limit still fits one read", () => {
  const heavy = (n: number, seed: string) => (seed + "\u0001".repeat(n)).slice(0, n);
  const ids = (p: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${p}${i}`.padEnd(LIMITS.taskIdLength, "x"));
  const blockers = ids("b", LIMITS.blockedBy).map((id) => ({
    ...task(id),
    name: heavy(LIMITS.nameLength, id),
  }));
  const agent = (i: number) => `${i}`.padEnd(64, "a");
  // 12 levels; at each level 40 siblings, each blocked by 50 heavy tasks; the first of each level on
  // the path, the last leaf held; and AGENTS_SHOWN held leaves under a parallel parent at the top.
  const level = (depth: number): Task[] =>
    Array.from({ length: 40 }, (_, i) => {
      const id = `${depth}-${i}`.padEnd(LIMITS.taskIdLength, "y");
      const leaf = depth === LIMITS.depth - 1 || i > 0;
      const base: Task = {
        ...task(id),
        name: heavy(LIMITS.nameLength, id),
        status: i === 0 ? "in_progress" : "todo",
        blocked_by: blockers.map((b) => b.id),
        tasks: leaf ? [] : level(depth + 1),
      };
      return leaf && i === 0
        ? { ...base, claim: { agent: agent(999), since: at(0), expires_at: at(1000) } }
        : base;
    });
  const team: Task = {
    ...st(
      "team",
      "in_progress",
      ...Array.from({ length: AGENTS_SHOWN + 5 }, (_, i) => ({
        ...held(`t${i}`.padEnd(LIMITS.taskIdLength, "z"), agent(i), 1000),
        name: heavy(LIMITS.nameLength, `t${i}`),
        blocked_by: blockers.map((b) => b.id),
      })),
    ),
    parallel: true,
  };
  const tree = treeOf(
    { ...task("blockers", ...blockers) },
    { ...st("top", "in_progress", ...level(1)) },
    team,
  );
  assert.ok(jsonBytes(buildSessionView("default", "s", tree)) > 2 * READ_BYTES);
  const view = sessionViewWithin("default", "s", tree);
  assert.ok(jsonBytes(view) <= READ_BYTES, `${jsonBytes(view)} bytes`);
  SessionViewSchema.parse(view);
  const active = view.rows.find((r) => r.kind === "task" && r.active) as TaskRow;
  assert.equal(active.id, tree.activeLeaves()[0]!.id);
  assert.ok(view.agents.length > 0, "agents at work are kept as far as they fit");
  assert.equal(view.agents.length + (view.agents_more ?? 0), AGENTS_SHOWN + 6);
});
