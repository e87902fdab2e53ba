import assert from "node:assert/strict";
import { type ChecklistItem, markDone, resolvePath, updateTasks } from "../../lib/domain/checklist.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { completeTask, createTask, startTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { renderTree } from "../../lib/domain/tree_text.ts";
import { idsInOrder, recount, refuses, run, snapshot, statuses, task, treeOf } from "../support/trees.ts";

/** a (a1, a2 (a2x, a2y)), b — with a1 done and a2x in progress. */
function sample(): TaskTree {
  const tree = treeOf(task("a", task("a1"), task("a2", task("a2x"), task("a2y"))), task("b"));
  run(tree, (t) => completeTask(t, "a1", "first done"));
  run(tree, (t) => startTask(t, "a2x"));
  return tree;
}

function assertInvariants(tree: TaskTree): void {
  assert.deepEqual(invariantViolations(tree), []);
  const again = recount(tree);
  assert.deepEqual([again.size, again.counts, again.indexProblems], [tree.size, { ...tree.counts }, []]);
}

function item(taskId: string, extra: Partial<ChecklistItem> = {}): ChecklistItem {
  return { taskId, description: `Item ${taskId}`, ...extra };
}

// ---------------------------------------------------------------------------------------------------
// resolvePath

Deno.test("resolvePath finds the parent a checklist path names", () => {
  const tree = sample();
  assert.equal(resolvePath(tree, "/"), undefined);
  assert.equal(resolvePath(tree, ""), undefined);
  assert.equal(resolvePath(tree, "/a/a2/")!.id, "a2");
  assert.equal(resolvePath(tree, "/b/")!.id, "b");
  assert.throws(
    () => resolvePath(tree, "/a2/"),
    (e) => e instanceof Error && /not a root task/.test(e.message),
  );
  assert.throws(
    () => resolvePath(tree, "/b/a2/"),
    (e) => e instanceof Error && /not a subtask of "b"/.test(e.message),
  );
});

// ---------------------------------------------------------------------------------------------------
// updateTasks

Deno.test("updateTasks at / replaces the root tasks", () => {
  const tree = sample();
  const result = run(tree, (t) => updateTasks(t, "/", [item("n1"), item("n2", { status: "DONE" })]));
  assert.equal(result.updated, 2);
  assert.deepEqual(idsInOrder(tree), ["n1", "n2"]);
  assert.deepEqual(statuses(tree, "n1", "n2"), { n1: "todo", n2: "done" });
  assert.equal(tree.get("n1")!.name, "Item n1");
  assert.equal(tree.get("a"), undefined);
  assert.equal(tree.size, 2);
  assertInvariants(tree);
});

Deno.test("updateTasks at /a/b/ replaces that task's children only", () => {
  const tree = sample();
  const result = run(
    tree,
    (t) =>
      updateTasks(t, "/a/a2/", [item("z1", { status: "DONE" }), item("z2", { children: [item("z2a")] })]),
  );
  assert.equal(result.updated, 3);
  assert.deepEqual(idsInOrder(tree), ["a", "a1", "a2", "z1", "z2", "z2a", "b"]);
  assert.equal(tree.get("a2x"), undefined);
  assert.equal(tree.parentOf(tree.get("z2a")!)?.id, "z2");
  // The in-progress leaf a2x is gone, so nothing is in progress any more.
  assert.deepEqual(statuses(tree, "a2", "a", "z2"), { a2: "todo", a: "todo", z2: "todo" });
  assert.deepEqual(tree.activeLeaves(), []);
  assertInvariants(tree);
});

Deno.test("updateTasks keeps an existing task's other fields and takes its new name", () => {
  const tree = sample();
  run(tree, (t) => {
    t.setField(t.get("a1")!, "description", "long words");
    t.setField(t.get("a1")!, "completion_criteria", ["crit"]);
    t.setField(t.get("a1")!, "constraints", ["cons"]);
  });
  run(tree, (t) => updateTasks(t, "/a/", [{ taskId: "a1", description: "A1 renamed" }, item("a2")]));
  assert.deepEqual(tree.get("a1"), {
    id: "a1",
    name: "A1 renamed",
    description: "long words",
    status: "done",
    resolution: "first done",
    completion_criteria: ["crit"],
    constraints: ["cons"],
    tasks: [],
  });
});

Deno.test("updateTasks keeps the subtree of a listed task whose children are omitted", () => {
  const tree = sample();
  run(tree, (t) => updateTasks(t, "/a/", [item("a2"), item("a1")]));
  assert.deepEqual(idsInOrder(tree), ["a", "a2", "a2x", "a2y", "a1", "b"]);
  assert.deepEqual(statuses(tree, "a2x", "a2", "a"), {
    a2x: "in_progress",
    a2: "in_progress",
    a: "in_progress",
  });
  assert.deepEqual(tree.activeLeaves().map((t) => t.id), ["a2x"]);
  assertInvariants(tree);
});

Deno.test("updateTasks deletes the tasks it no longer lists, with their subtrees", async (t) => {
  await t.step("at a path", () => {
    const tree = sample();
    run(tree, (t) => updateTasks(t, "/a/", [item("a1")]));
    assert.deepEqual(idsInOrder(tree), ["a", "a1", "b"]);
    for (const id of ["a2", "a2x", "a2y"]) assert.equal(tree.get(id), undefined);
    // Only a1 (done) is left under a, so a is done.
    assert.equal(tree.get("a")!.status, "done");
    assertInvariants(tree);
  });
  await t.step("children: [] empties a listed task", () => {
    const tree = sample();
    run(tree, (t) => updateTasks(t, "/a/", [item("a1"), item("a2", { children: [] })]));
    assert.deepEqual(tree.get("a2")!.tasks, []);
    assert.equal(tree.get("a2")!.status, "todo");
    assert.deepEqual(tree.activeLeaves(), []);
    assertInvariants(tree);
  });
  await t.step("an empty list at a path empties that task", () => {
    const tree = sample();
    run(tree, (t) => updateTasks(t, "/a/", []));
    assert.deepEqual(idsInOrder(tree), ["a", "b"]);
    assert.equal(tree.get("a")!.status, "todo");
    assertInvariants(tree);
  });
});

Deno.test("updateTasks moves a listed task from elsewhere, and its old parent follows what is left", async (t) => {
  await t.step("a todo task moves with its subtree", () => {
    const tree = treeOf(task("p", task("p1"), task("p2", task("p2x"))), task("q", task("q1")));
    run(tree, (t) => completeTask(t, "p1", "ok"));
    run(tree, (t) => updateTasks(t, "/q/", [item("q1"), item("p2")]));
    assert.deepEqual(idsInOrder(tree), ["p", "p1", "q", "q1", "p2", "p2x"]);
    assert.equal(tree.parentOf(tree.get("p2")!)?.id, "q");
    // p keeps only its done subtask: p is done.
    assert.equal(tree.get("p")!.status, "done");
    assertInvariants(tree);
  });
  await t.step("the in-progress leaf moves away from its old parents", () => {
    const tree = sample();
    run(tree, (t) => updateTasks(t, "/b/", [item("a2x")]));
    assert.deepEqual(idsInOrder(tree), ["a", "a1", "a2", "a2y", "b", "a2x"]);
    assert.deepEqual(statuses(tree, "a2", "a", "b", "a2x"), {
      a2: "todo",
      a: "todo",
      b: "in_progress",
      a2x: "in_progress",
    });
    assertInvariants(tree);
  });
  await t.step("the only child moves: its old parent becomes a leaf, not in progress", () => {
    const tree = treeOf(task("p", task("p1")), task("q"));
    run(tree, (t) => startTask(t, "p1"));
    run(tree, (t) => updateTasks(t, "/q/", [item("p1")]));
    assert.deepEqual(idsInOrder(tree), ["p", "q", "p1"]);
    assert.deepEqual(statuses(tree, "p", "q", "p1"), { p: "todo", q: "in_progress", p1: "in_progress" });
    assertInvariants(tree);
  });
});

Deno.test("updateTasks refuses to place a task under itself", () => {
  const tree = sample();
  const error = refuses(tree, "INVALID_INPUT", (t) => updateTasks(t, "/a/a2/", [item("a")]));
  assert.match(error.message, /under itself/);
  refuses(tree, "INVALID_INPUT", (t) => updateTasks(t, "/a/a2/", [item("new", { children: [item("a2")] })]));
});

Deno.test("updateTasks refuses a listed id that also sits in a subtree it keeps", () => {
  const tree = sample();
  refuses(tree, "INVALID_INPUT", (t) => updateTasks(t, "/a/", [item("a2"), item("a2x")]));
});

Deno.test("updateTasks refuses DONE on a parent with unfinished children: UNFINISHED_SUBTASKS, nothing changed", async (t) => {
  await t.step("kept children", () => {
    const tree = sample();
    refuses(
      tree,
      "UNFINISHED_SUBTASKS",
      (t) => updateTasks(t, "/a/", [item("a1"), item("a2", { status: "DONE" })]),
    );
  });
  await t.step("given children", () => {
    const tree = sample();
    refuses(
      tree,
      "UNFINISHED_SUBTASKS",
      (t) =>
        updateTasks(t, "/", [
          item("x", { status: "DONE", children: [item("x1", { status: "DONE" }), item("x2")] }),
        ]),
    );
  });
  await t.step("all children DONE is fine", () => {
    const tree = sample();
    run(
      tree,
      (t) =>
        updateTasks(t, "/", [
          item("x", { status: "DONE", children: [item("x1", { status: "DONE" })] }),
          item("b"),
        ]),
    );
    assert.deepEqual(statuses(tree, "x", "x1", "b"), { x: "done", x1: "done", b: "todo" });
    assertInvariants(tree);
  });
});

Deno.test("updateTasks with TODO reopens a done task; a parent's status follows its children", () => {
  const tree = sample();
  run(tree, (t) => updateTasks(t, "/a/", [item("a1", { status: "TODO" }), item("a2")]));
  assert.equal(tree.get("a1")!.status, "todo");
  const result = run(
    tree,
    (t) =>
      updateTasks(t, "/", [
        item("a"),
        item("b", { status: "TODO", children: [item("b1", { status: "DONE" })] }),
      ]),
  );
  assert.equal(tree.get("b")!.status, "done");
  assert.match(result.notes.join(" "), /"b" is done because all its subtasks are/);
  assertInvariants(tree);
});

Deno.test("updateTasks refuses an unknown path with NOT_FOUND and duplicate ids with DUPLICATE_ID", () => {
  const tree = sample();
  refuses(tree, "NOT_FOUND", (t) => updateTasks(t, "/ghost/", [item("x")]));
  refuses(tree, "NOT_FOUND", (t) => updateTasks(t, "/a/b/", [item("x")]));
  refuses(
    tree,
    "DUPLICATE_ID",
    (t) => updateTasks(t, "/", [item("x"), item("y", { children: [item("x")] })]),
  );
});

Deno.test("updateTasks enforces the limits with LIMIT_EXCEEDED and changes nothing", async (t) => {
  await t.step(`more than ${LIMITS.childrenPerTask} tasks in one list`, () => {
    const tree = sample();
    const items = Array.from({ length: LIMITS.childrenPerTask + 1 }, (_, i) => item(`x${i}`));
    refuses(tree, "LIMIT_EXCEEDED", (t) => updateTasks(t, "/", items));
  });
  await t.step(`more than ${LIMITS.tasksPerCall} tasks in one call`, () => {
    const tree = sample();
    const items = Array.from(
      { length: 20 },
      (_, i) => item(`x${i}`, { children: Array.from({ length: 25 }, (_, j) => item(`x${i}y${j}`)) }),
    );
    assert.equal(items.length * 26, 520);
    refuses(tree, "LIMIT_EXCEEDED", (t) => updateTasks(t, "/", items));
  });
  await t.step(`deeper than ${LIMITS.depth} levels`, () => {
    const tree = sample();
    const chain = (n: number): ChecklistItem => item(`d${n}`, n === 1 ? {} : { children: [chain(n - 1)] });
    // a2 is on level 2: depth - 2 more levels fit, one more does not.
    refuses(tree, "LIMIT_EXCEEDED", (t) => updateTasks(t, "/a/a2/", [chain(LIMITS.depth - 1)]));
    run(tree, (t) => updateTasks(t, "/a/a2/", [chain(LIMITS.depth - 2)]));
    assert.equal(tree.pathTo(tree.get("d1")!).length, LIMITS.depth);
  });
  await t.step(`more than ${LIMITS.tasksPerSession} tasks in a session`, () => {
    // r0 has 400 subtasks; the other roots fill the session up to the limit.
    const roots = [task("r0", ...Array.from({ length: 400 }, (_, i) => task(`r0c${i}`)))];
    for (let r = 1, n = 401; n < LIMITS.tasksPerSession; r++) {
      const kids = Math.min(999, LIMITS.tasksPerSession - n - 1);
      roots.push(task(`r${r}`, ...Array.from({ length: kids }, (_, i) => task(`r${r}c${i}`))));
      n += kids + 1;
    }
    const tree = new TaskTree(roots);
    assert.equal(tree.size, LIMITS.tasksPerSession);
    const keep = tree.get("r0")!.tasks.map((t) => item(t.id));
    refuses(tree, "LIMIT_EXCEEDED", (t) => updateTasks(t, "/r0/", [...keep, item("new")]));
    // Replacing one is fine.
    run(tree, (t) => updateTasks(t, "/r0/", [...keep.slice(1), item("new")]));
    assert.equal(tree.size, LIMITS.tasksPerSession);
  });
});

// ---------------------------------------------------------------------------------------------------
// markDone

Deno.test("markDone marks children then their parent in one call", () => {
  const tree = sample();
  const result = run(tree, (t) => markDone(t, ["a2x", "a2y", "a2"]));
  assert.deepEqual(result, { marked: ["a2x", "a2y", "a2"], failed: [] });
  assert.deepEqual(statuses(tree, "a2", "a", "b"), { a2: "done", a: "done", b: "todo" });
  assert.deepEqual(tree.activeLeaves(), []);
  assertInvariants(tree);
});

Deno.test("markDone fails a parent with unfinished children, with the reason, and still marks the others", () => {
  const tree = sample();
  const result = run(tree, (t) => markDone(t, ["a2", "a2x", "ghost", "b"]));
  assert.deepEqual(result.marked, ["a2x", "b"]);
  assert.deepEqual(result.failed.map((f) => [f.taskId, f.code]), [
    ["a2", "UNFINISHED_SUBTASKS"],
    ["ghost", "NOT_FOUND"],
  ]);
  assert.match(result.failed[0]!.reason, /2 subtasks not done \(a2x, a2y\)/);
  assert.match(result.failed[1]!.reason, /no task "ghost"/);
  assert.deepEqual(statuses(tree, "a2", "a2x", "a2y", "b"), {
    a2: "todo",
    a2x: "done",
    a2y: "todo",
    b: "done",
  });
  assertInvariants(tree);
});

Deno.test("markDone of a done task succeeds without changing anything", () => {
  const tree = sample();
  const before = snapshot(tree);
  assert.deepEqual(run(tree, (t) => markDone(t, ["a1"])), { marked: ["a1"], failed: [] });
  assert.deepEqual(snapshot(tree), before);
});

Deno.test("checklist and task tools share one tree", () => {
  const tree = new TaskTree();
  run(tree, (t) => updateTasks(t, "/", [item("c", { children: [item("c1"), item("c2")] })]));
  run(tree, (t) => createTask(t, { id: "c3", name: "third", parentId: "c" }));
  run(tree, (t) => markDone(t, ["c1"]));
  const started = run(tree, (t) => startTask(t, "c"));
  assert.equal(started.task.id, "c2");
  assert.equal(
    renderTree(tree.roots),
    "└── ◐ c: Item c\n    ├── ✓ c1: Item c1\n    ├── ◐ c2: Item c2\n    └── ○ c3: third",
  );
});
