import assert from "node:assert/strict";
import { startTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { buildSessionView, documentView, workViews } from "../../lib/render/build.ts";
import { PageViewSchema, SessionViewSchema } from "../../lib/render/model.ts";
import {
  changeSummary,
  documentsPanel,
  focusPanel,
  historyList,
  sessionPanel,
  worksPanel,
} from "../../lib/render/render.ts";
import { escapeHtml, progressLabel } from "../../lib/render/text.ts";
import { h, toHtml } from "../../lib/render/vnode.ts";
import { run } from "../support/trees.ts";

const EVIL = `<script>alert("x")</script>&<img src=x onerror='y'>`;

function evilTree(): TaskTree {
  const tree = new TaskTree([{
    id: "root",
    name: EVIL,
    description: EVIL,
    status: "todo",
    completion_criteria: [`root ${EVIL}`],
    constraints: ["stay calm"],
    tasks: [{
      id: "leaf",
      name: "leaf",
      description: "",
      status: "todo",
      completion_criteria: ["leaf rule"],
      tasks: [],
    }],
  }]);
  run(tree, (t) => startTask(t, "leaf"));
  return tree;
}

Deno.test("escapeHtml turns every markup character into an entity", () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>&</a>`),
    "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
  );
});

Deno.test("toHtml escapes text and attribute values and drops false attributes", () => {
  assert.equal(
    toHtml(h("p", { class: `a"b`, hidden: true, title: undefined, open: false }, EVIL)),
    `<p class="a&quot;b" hidden>${escapeHtml(EVIL)}</p>`,
  );
});

Deno.test("a session's HTML carries agent text only as escaped text", () => {
  const html = toHtml(sessionPanel(buildSessionView("default", "s", evilTree())));
  assert.ok(!html.includes("<script>"));
  assert.ok(!html.includes("<img"));
  assert.ok(html.includes(escapeHtml(EVIL)));
});

Deno.test("the focus lists own and inherited criteria and constraints, root first, each with its task", () => {
  const view = buildSessionView("default", "s", evilTree());
  SessionViewSchema.parse(view);
  assert.equal(view.focus?.id, "leaf");
  assert.deepEqual(view.focus?.criteria, [
    { text: `root ${EVIL}`, from_id: "root", from_name: EVIL },
    { text: "leaf rule", from_id: "leaf", from_name: "leaf" },
  ]);
  assert.deepEqual(view.focus?.constraints.map((r) => r.text), ["stay calm"]);
  assert.deepEqual(view.focus?.path.map((p) => p.id), ["root", "leaf"]);
  assert.equal(view.next, null);
  assert.equal(view.history, null);
});

Deno.test("with nothing in progress the view names the next task and shows no focus", () => {
  const tree = new TaskTree([{ id: "a", name: "A", description: "", status: "todo", tasks: [] }]);
  const view = buildSessionView("default", "s", tree);
  assert.equal(view.focus, null);
  assert.deepEqual(view.next, { id: "a", name: "A" });
});

Deno.test("history renders entries newest first when kept, and nothing when the store keeps none", () => {
  assert.equal(historyList(null), null);
  const html = toHtml(
    historyList({
      revision: 3,
      entries: [
        { revision: 3, at: "2026-11-23T08:00:00.000Z", tool: "startTask", summary: `started ${EVIL}` },
        { revision: 2, at: "2026-11-23T07:59:00.000Z", tool: "createTask", summary: "added 3 tasks" },
      ],
    })!,
  );
  assert.ok(html.indexOf("#3") < html.indexOf("#2"));
  assert.ok(html.includes("2026-11-23 08:00:00 UTC"));
  assert.ok(html.includes(escapeHtml(`started ${EVIL}`)) && !html.includes("<script>"));
  const view = buildSessionView("default", "s", evilTree(), { history: { revision: 0, entries: [] } });
  assert.ok(toHtml(sessionPanel(view)).includes("No changes recorded yet."));
});

Deno.test("a progress document shows its four fields as text lists, other JSON as JSON text", () => {
  const doc = documentView({
    project: "p",
    revision: 2,
    updated_at: "2026-11-23T08:00:00.000Z",
    content: { goal: "g", completed: ["a", { step: 1 }], next_steps: [], blockers: null, extra: 1 },
  });
  assert.deepEqual([doc.goal, doc.completed, doc.next_steps, doc.blockers], [
    ["g"],
    ["a", '{"step":1}'],
    [],
    [],
  ]);
  const html = toHtml(documentsPanel([doc]));
  assert.ok(html.includes("<li>a</li>") && html.includes("{&quot;step&quot;:1}"));
});

Deno.test("works are listed most recently used first, long summaries cut", () => {
  const works = workViews([
    {
      workId: "00000001",
      work_timestamp: "t1",
      work_description: "old",
      work_summarize: "x".repeat(5000),
      used: 1,
    },
    { workId: "00000002", work_timestamp: "t2", work_description: EVIL, work_summarize: "s", used: 2 },
  ]);
  assert.deepEqual(works.map((w) => w.workId), ["00000002", "00000001"]);
  assert.equal(works[1]!.summary_cut, true);
  assert.ok(works[1]!.summary.length <= 2000);
  PageViewSchema.shape.works.parse(works);
  assert.ok(!toHtml(worksPanel(works)).includes("<script>"));
});

Deno.test("progressLabel gives done/total and a whole percent rounded down", () => {
  assert.equal(progressLabel(2, 3), "2/3 done (66%)");
  assert.equal(progressLabel(0, 0), "0/0 done (0%)");
});

Deno.test("a cut focus says how many rules it left out, and a call's changes are summed up by kind", () => {
  const focus = {
    id: "a",
    name: "A",
    description: "long",
    path: [{ id: "a", name: "A" }],
    criteria: [],
    constraints: [],
    rules_cut: 7,
    description_cut: true,
  };
  const html = toHtml(focusPanel(focus, null));
  assert.match(html, /<p class="description">long …<\/p>/);
  assert.match(html, /7 more criteria or constraints not shown/);
  assert.doesNotMatch(toHtml(focusPanel({ ...focus, rules_cut: undefined }, null)), /not shown/);

  assert.equal(changeSummary({}), null);
  const summary = toHtml(changeSummary({ a: "started", b: "started", c: "completed" })!);
  assert.match(summary, /This call: <span class="change c-started">started<\/span> 2 · /);
  assert.match(summary, /<span class="change c-completed">completed<\/span> 1/);
});
