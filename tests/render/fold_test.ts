import assert from "node:assert/strict";
import fc from "fast-check";
import { buildSessionView } from "../../lib/render/build.ts";
import { completeTask, startTask } from "../../lib/domain/task_ops.ts";
import { childRows, foldTree, PAGE_ROWS, SIBLING_WINDOW, WINDOW_BEFORE } from "../../lib/render/fold.ts";
import type { Task, TaskStatus } from "../../lib/domain/schemas.ts";
import type { Row, TaskRow } from "../../lib/render/model.ts";
import { run, task, treeOf } from "../support/trees.ts";

function ids(rows: Row[]): string[] {
  return rows.map((r) => (r.kind === "task" ? r.id : `+${r.count}@${r.offset}`));
}

function many(prefix: string, n: number, status: (i: number) => TaskStatus = () => "todo") {
  return Array.from({ length: n }, (_, i) => ({ ...task(`${prefix}${i}`), status: status(i) }));
}

/** A task with a status given directly (trees built as a store would load them). */
function st(id: string, status: TaskStatus, ...tasks: Task[]): Task {
  return { ...task(id, ...tasks), status };
}

Deno.test("foldTree unfolds the path to the task in progress and folds everything else with its counts", () => {
  const tree = treeOf(
    st("a", "in_progress", st("a1", "in_progress", st("a1x", "done"), st("a1y", "in_progress")), task("a2")),
    task("b", task("b1"), task("b2", task("b2x"))),
  );
  const rows = foldTree(tree);
  assert.deepEqual(ids(rows), ["a", "a1", "a1x", "a1y", "a2", "b"]);
  const byId = new Map(rows.map((r) => [(r as TaskRow).id, r as TaskRow]));
  assert.deepEqual(
    rows.filter((r) => r.kind === "task" && r.on_path).map((r) => (r as TaskRow).id),
    ["a", "a1", "a1y"],
  );
  assert.equal(byId.get("a1y")!.active, true);
  assert.equal(byId.get("a1")!.active, false);
  assert.equal(byId.get("b")!.open, false);
  assert.deepEqual([byId.get("b")!.children, byId.get("b")!.total, byId.get("b")!.done], [2, 4, 0]);
  assert.deepEqual([byId.get("a1y")!.depth, byId.get("a1y")!.parent_id], [2, "a1"]);
});

Deno.test("foldTree counts done tasks of a folded task's subtree, itself included", () => {
  const tree = treeOf(task("a", task("a1"), task("a2")), task("b", task("b1")));
  run(tree, (t) => startTask(t, "a1"));
  run(tree, (t) => completeTask(t, "a1", "done"));
  run(tree, (t) => startTask(t, "a2"));
  run(tree, (t) => completeTask(t, "a2", "done"));
  const rows = foldTree(tree) as TaskRow[];
  // Nothing in progress: the view centres on the next task (b1), and "a" is folded with 3/3 done
  // (itself and its two subtasks).
  assert.deepEqual(ids(rows), ["a", "b", "b1"]);
  assert.deepEqual([rows[0]!.open, rows[0]!.done, rows[0]!.total, rows[0]!.status], [false, 3, 3, "done"]);
  assert.equal(rows.some((r) => r.active), false);
  assert.equal(rows[2]!.on_path, true);
});

Deno.test("foldTree unfolds the tasks a person opened, and no more than asked", () => {
  const tree = treeOf(task("a", task("a1")), task("b", task("b1", task("b1x"))));
  assert.deepEqual(ids(foldTree(tree, { open: ["b"] })), ["a", "a1", "b", "b1"]);
  assert.deepEqual(ids(foldTree(tree, { open: ["b", "b1"] })), ["a", "a1", "b", "b1", "b1x"]);
});

Deno.test("foldTree shows a window of a long sibling list around the path and counts the rest", () => {
  const tree = treeOf(task("p", ...many("c", 300)));
  run(tree, (t) => startTask(t, "c0"));
  for (let i = 0; i < 200; i++) {
    run(tree, (t) => completeTask(t, `c${i}`, "ok"));
    run(tree, (t) => startTask(t, `c${i + 1}`));
  }
  const rows = foldTree(tree);
  const from = 200 - WINDOW_BEFORE;
  assert.equal(rows.length, 1 + 1 + SIBLING_WINDOW + 1);
  assert.deepEqual(rows[1], { kind: "more", depth: 1, parent_id: "p", offset: 0, count: from });
  assert.equal((rows[2] as TaskRow).id, `c${from}`);
  assert.equal(rows.filter((r) => r.kind === "task" && r.active).length, 1);
  assert.deepEqual(rows.at(-1), {
    kind: "more",
    depth: 1,
    parent_id: "p",
    offset: from + SIBLING_WINDOW,
    count: 300 - from - SIBLING_WINDOW,
  });
});

Deno.test("foldTree keeps a 10,000-task tree to a few hundred rows", () => {
  const status = (r: number) => (i: number): TaskStatus =>
    r < 4 || (r === 4 && i < 500) ? "done" : r === 4 && i === 500 ? "in_progress" : "todo";
  const tree = treeOf(
    ...Array.from(
      { length: 10 },
      (_, r) =>
        st(`r${r}`, r < 4 ? "done" : r === 4 ? "in_progress" : "todo", ...many(`r${r}-`, 999, status(r))),
    ),
  );
  assert.equal(tree.size, 10_000);
  const started = performance.now();
  const rows = foldTree(tree);
  const ms = performance.now() - started;
  assert.ok(rows.length <= 10 + SIBLING_WINDOW + 2, `${rows.length} rows`);
  assert.ok(rows.some((r) => r.kind === "task" && r.id === "r4-500" && r.active));
  // Its speed is the benchmarks' (BENCHMARKS.md "Dashboard"); this only catches a fold that walks the
  // tree over and over (seconds), with room for a loaded machine (it took 200 ms under CI's load).
  assert.ok(ms < 2000, `folding took ${ms} ms`);
});

Deno.test("childRows pages through a range of subtasks and leaves the rest as one more row", () => {
  const tree = treeOf(task("p", ...many("c", 250)), task("q"));
  const first = childRows(tree, { parentId: "p", offset: 0, count: 250 })!;
  assert.equal(first.length, PAGE_ROWS + 1);
  assert.deepEqual(first.at(-1), { kind: "more", depth: 1, parent_id: "p", offset: PAGE_ROWS, count: 150 });
  assert.ok(first.slice(0, -1).every((r) => r.kind === "task" && r.depth === 1 && !r.open));
  const last = childRows(tree, { parentId: "p", offset: 200, count: 50 })!;
  assert.deepEqual(ids(last), many("c", 250).slice(200).map((t) => t.id));
  assert.deepEqual(ids(childRows(tree, { offset: 0, count: 10 })!), ["p", "q"]);
  assert.equal(childRows(tree, { parentId: "nope", offset: 0, count: 1 }), undefined);
  assert.deepEqual(childRows(tree, { parentId: "p", offset: 999, count: 5 }), []);
});

Deno.test("foldTree marks what a call changed and unfolds the way to it", () => {
  const tree = treeOf(task("a", task("a1")), task("b", task("b1", task("b1x")), task("b2")));
  const rows = foldTree(tree, { changes: new Map([["b1x", "added"]]) });
  assert.deepEqual(ids(rows), ["a", "a1", "b", "b1", "b1x", "b2"]);
  const marked = rows.filter((r) => r.kind === "task" && r.change !== undefined) as TaskRow[];
  assert.deepEqual(marked.map((r) => [r.id, r.change]), [["b1x", "added"]]);
});

Deno.test("a session's header and its root rows agree: one root of 31 tasks, 14 done, reads 14/31 in both", () => {
  // The tree: a root with 30 tasks below it, 14 of them done; the header said 14/31, the row 14/30.
  const leaves = (g: number, done: number) =>
    Array.from(
      { length: 9 },
      (_, i) => ({ ...task(`g${g}-${i}`), status: (i < done ? "done" : "todo") as TaskStatus }),
    );
  const tree = treeOf(
    task("root", st("g0", "done", ...leaves(0, 9)), task("g1", ...leaves(1, 4)), task("g2", ...leaves(2, 0))),
  );
  const view = buildSessionView("default", "s", tree);
  const row = view.rows.find((r) => r.kind === "task" && r.id === "root") as TaskRow;
  assert.deepEqual([view.done, view.total], [14, 31]);
  assert.deepEqual([row.done, row.total], [14, 31]);
});

Deno.test("the header's done/total are the sums of the root rows' counts, for any tree", () => {
  fc.assert(
    fc.property(
      fc.array(fc.nat(4), { minLength: 1, maxLength: 30 }),
      fc.array(fc.boolean(), { maxLength: 30 }),
      (shape, doneBits) => {
        // Task i goes under task shape[i] mod i (or is a root), leaves done by doneBits.
        const tasks: Task[] = [];
        const roots: Task[] = [];
        shape.forEach((p, i) => {
          const t = task(`t${i}`);
          tasks.push(t);
          if (i === 0 || p === 0) roots.push(t);
          else tasks[(p * 7) % i]!.tasks.push(t);
        });
        tasks.forEach((t, i) => {
          if (t.tasks.length === 0 && doneBits[i]) t.status = "done";
        });
        const settle = (t: Task): void => {
          t.tasks.forEach(settle);
          if (t.tasks.length > 0) t.status = t.tasks.every((c) => c.status === "done") ? "done" : "todo";
        };
        roots.forEach(settle);
        const view = buildSessionView("default", "s", treeOf(...roots), { open: tasks.map((t) => t.id) });
        const rootRows = view.rows.filter((r): r is TaskRow => r.kind === "task" && r.depth === 0);
        assert.equal(rootRows.length, roots.length);
        assert.equal(rootRows.reduce((n, r) => n + r.done, 0), view.done);
        assert.equal(rootRows.reduce((n, r) => n + r.total, 0), view.total);
      },
    ),
    { seed: 20261126, numRuns: 300 },
  );
});
