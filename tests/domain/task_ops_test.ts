import assert from "node:assert/strict";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { NewTask, Task } from "../../lib/domain/schemas.ts";
import {
  completeTask,
  createTask,
  deleteTask,
  listTasks,
  nextTask,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { idsInOrder, recount, refuses, run, snapshot, statuses, task, treeOf } from "../support/trees.ts";

/** root R with children A (A1, A2 (A2a, A2b)) and B; a second root S. All todo. */
function plan(): TaskTree {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "R",
      name: "Root",
      tasks: [
        {
          id: "A",
          name: "Alpha",
          tasks: [{ id: "A1", name: "A one" }, {
            id: "A2",
            name: "A two",
            tasks: [{ id: "A2a", name: "A two a" }, { id: "A2b", name: "A two b" }],
          }],
        },
        { id: "B", name: "Beta" },
      ],
    }));
  run(tree, (t) => createTask(t, { id: "S", name: "Second root" }));
  return tree;
}

function childIds(tree: TaskTree, id?: string): string[] {
  return (id === undefined ? tree.roots : tree.get(id)!.tasks).map((t) => t.id);
}

function assertInvariants(tree: TaskTree): void {
  assert.deepEqual(invariantViolations(tree), []);
  const again = recount(tree);
  assert.equal(again.size, tree.size);
  assert.deepEqual(again.counts, { ...tree.counts });
}

// ---------------------------------------------------------------------------------------------------
// createTask (R1, R2.1–R2.4, R6)

Deno.test("createTask without a parent creates a root task with name, description, todo status and no subtasks", () => {
  const tree = new TaskTree();
  const { task: created } = run(tree, (t) => createTask(t, { name: "Ship it", description: "the release" }));
  assert.deepEqual(tree.roots, [created]);
  assert.equal(created.name, "Ship it");
  assert.equal(created.description, "the release");
  assert.equal(created.status, "todo");
  assert.deepEqual(created.tasks, []);
  assert.equal(tree.get(created.id), created);
  assert.equal(tree.parentOf(created), undefined);
});

Deno.test("createTask defaults the description to an empty string", () => {
  const tree = new TaskTree();
  const { task: created } = run(tree, (t) => createTask(t, { name: "n" }));
  assert.equal(created.description, "");
  assert.equal(Object.hasOwn(created, "completion_criteria"), false);
  assert.equal(Object.hasOwn(created, "constraints"), false);
});

Deno.test("createTask's message for a new root task recommends breaking it into subtasks (R1.5)", async (t) => {
  await t.step("a root task", () => {
    const tree = new TaskTree();
    const { task: created, message } = run(tree, (t) => createTask(t, { name: "Big goal" }));
    assert.match(message, /subtasks/);
    assert.match(message, new RegExp(`parentId "${created.id}"`));
  });
  await t.step(
    "a root created with its subtasks is already broken down: the message says how to begin",
    () => {
      const tree = new TaskTree();
      const { message } = run(
        tree,
        (t) => createTask(t, { id: "g", name: "Goal", tasks: [{ name: "step" }] }),
      );
      assert.doesNotMatch(message, /Break it into subtasks/);
      assert.match(message, /with 1 subtask\. Call startTask with id "g"/);
    },
  );
  await t.step("a subtask's message does not", () => {
    const tree = plan();
    const { message } = run(tree, (t) => createTask(t, { name: "child", parentId: "S" }));
    assert.doesNotMatch(message, /Break it into subtasks/);
    assert.match(message, /under "Second root" \(S\)/);
  });
});

Deno.test("createTask keeps given ids and generates unique ones for the rest (R1.1, R6.7)", () => {
  const tree = plan();
  const { task: created } = run(tree, (t) =>
    createTask(t, {
      name: "mixed",
      tasks: [{ id: "keep-me", name: "k", tasks: [{ name: "gen1" }] }, { name: "gen2" }],
    }));
  assert.match(created.id, /^[0-9a-z]{8}$/);
  assert.equal(created.tasks[0]!.id, "keep-me");
  const generated = [created.id, created.tasks[0]!.tasks[0]!.id, created.tasks[1]!.id];
  for (const id of generated) assert.match(id, /^[0-9a-z]{8}$/);
  assert.equal(new Set(generated).size, 3);
  for (const id of [...generated, "keep-me"]) assert.ok(tree.get(id), `"${id}" is indexed`);
  assert.equal(tree.size, 8 + 4);
});

Deno.test("createTask creates nested subtasks recursively at any depth, all todo (R1.7, R6.3, R6.4, R6.6, R6.8)", () => {
  const tree = new TaskTree();
  let input: NewTask = { id: "L9", name: "level 9", completion_criteria: ["deepest"] };
  for (let i = 8; i >= 0; i--) {
    input = { id: `L${i}`, name: `level ${i}`, tasks: [input, { name: `side ${i}` }] };
  }
  const { task: created, message } = run(tree, (t) => createTask(t, input));
  assert.equal(tree.size, 19);
  assert.match(message, /with 18 subtasks/);
  let node: Task = created;
  for (let i = 0; i < 9; i++) {
    assert.equal(node.id, `L${i}`);
    assert.equal(node.tasks.length, 2);
    node = node.tasks[0]!;
  }
  assert.equal(node.id, "L9");
  assert.deepEqual(node.completion_criteria, ["deepest"]);
  assert.deepEqual(
    tree.pathTo(tree.get("L9")!).map((x) => x.id),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `L${i}`),
  );
  assert.deepEqual({ ...tree.counts }, { todo: 19, in_progress: 0, done: 0 });
});

Deno.test("createTask stores completion criteria and constraints (R2.2)", () => {
  const tree = new TaskTree();
  const { task: created } = run(
    tree,
    (t) =>
      createTask(t, {
        id: "x",
        name: "x",
        completion_criteria: ["tests pass"],
        constraints: ["no new deps"],
      }),
  );
  assert.deepEqual(created.completion_criteria, ["tests pass"]);
  assert.deepEqual(created.constraints, ["no new deps"]);
});

Deno.test("createTask places the task in the parent's tasks at insertIndex (R1.2, R2.3, R2.4)", async (t) => {
  await t.step("omitted: appended", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "A3", name: "a3", parentId: "A" }));
    assert.deepEqual(childIds(tree, "A"), ["A1", "A2", "A3"]);
    assert.equal(tree.parentOf(tree.get("A3")!)?.id, "A");
  });
  await t.step("0: first, later siblings shift back", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "A0", name: "a0", parentId: "A", insertIndex: 0 }));
    assert.deepEqual(childIds(tree, "A"), ["A0", "A1", "A2"]);
  });
  await t.step("in the middle", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "Am", name: "am", parentId: "A", insertIndex: 1 }));
    assert.deepEqual(childIds(tree, "A"), ["A1", "Am", "A2"]);
  });
  await t.step("equal to the length: appended", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "Az", name: "az", parentId: "A", insertIndex: 2 }));
    assert.deepEqual(childIds(tree, "A"), ["A1", "A2", "Az"]);
  });
  await t.step("at root level", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "R0", name: "r0", insertIndex: 1 }));
    assert.deepEqual(childIds(tree), ["R", "R0", "S"]);
  });
  await t.step("under a leaf: its first subtask", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "B1", name: "b1", parentId: "B", insertIndex: 0 }));
    assert.deepEqual(childIds(tree, "B"), ["B1"]);
  });
});

Deno.test("createTask refuses an insertIndex out of range with INVALID_INPUT and changes nothing", async (t) => {
  for (
    const [where, parentId, index] of [
      ["negative", "A", -1],
      ["past the end", "A", 3],
      ["fractional", "A", 0.5],
      ["NaN", "A", Number.NaN],
      ["past the end of the roots", undefined, 3],
      ["past the end of a leaf's empty list", "B", 1],
    ] as const
  ) {
    await t.step(where, () => {
      const tree = plan();
      const error = refuses(
        tree,
        "INVALID_INPUT",
        (t) => createTask(t, { name: "x", parentId, insertIndex: index }),
      );
      assert.match(error.message, /insertIndex/);
    });
  }
});

Deno.test("createTask refuses an unknown parentId with NOT_FOUND", () => {
  const tree = plan();
  const error = refuses(tree, "NOT_FOUND", (t) => createTask(t, { name: "x", parentId: "ghost" }));
  assert.match(error.message, /"ghost"/);
});

Deno.test("createTask is all-or-nothing: a failing nested task leaves the tree as it was (R6.9)", async (t) => {
  await t.step("an id deep in the input already used in the session", () => {
    const tree = plan();
    const error = refuses(tree, "DUPLICATE_ID", (t) =>
      createTask(t, {
        id: "new-top",
        name: "top",
        parentId: "S",
        tasks: [{ name: "ok" }, {
          id: "mid",
          name: "mid",
          tasks: [{ name: "fine" }, { id: "A2b", name: "clash" }],
        }],
      }));
    assert.match(error.message, /"A2b"/);
    assert.equal(tree.get("new-top"), undefined);
    assert.equal(tree.get("mid"), undefined);
  });
  await t.step("the same id twice in one input", () => {
    const tree = plan();
    const error = refuses(
      tree,
      "DUPLICATE_ID",
      (t) =>
        createTask(t, {
          name: "top",
          tasks: [{ id: "twin", name: "1" }, { name: "2", tasks: [{ id: "twin", name: "3" }] }],
        }),
    );
    assert.match(error.message, /"twin"/);
  });
  await t.step("the new task's own id already used", () => {
    const tree = plan();
    refuses(tree, "DUPLICATE_ID", (t) => createTask(t, { id: "R", name: "again" }));
  });
});

Deno.test("createTask under a done parent makes it and its ancestors todo again", () => {
  const tree = plan();
  run(tree, (t) => completeTask(t, "A1", "ok"));
  run(tree, (t) => completeTask(t, "A2a", "ok"));
  run(tree, (t) => completeTask(t, "A2b", "ok"));
  assert.deepEqual(statuses(tree, "A", "A2"), { A: "done", A2: "done" });
  run(tree, (t) => createTask(t, { id: "A2c", name: "more", parentId: "A2" }));
  assert.deepEqual(statuses(tree, "A2c", "A2", "A", "R"), { A2c: "todo", A2: "todo", A: "todo", R: "todo" });
  assertInvariants(tree);
});

Deno.test("createTask under the in-progress leaf turns it into a todo parent and says so", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "A1"));
  const { message } = run(tree, (t) => createTask(t, { id: "A1x", name: "split", parentId: "A1" }));
  assert.deepEqual(statuses(tree, "A1x", "A1", "A", "R"), { A1x: "todo", A1: "todo", A: "todo", R: "todo" });
  assert.deepEqual(tree.activeLeaves(), []);
  assert.match(message, /no longer in progress/);
  assertInvariants(tree);
});

Deno.test("createTask enforces the limits with LIMIT_EXCEEDED and changes nothing", async (t) => {
  await t.step(`more than ${LIMITS.tasksPerCall} tasks in one call`, () => {
    const tree = plan();
    const tasks = Array.from({ length: LIMITS.tasksPerCall }, (_, i) => ({ name: `t${i}` }));
    refuses(tree, "LIMIT_EXCEEDED", (t) => createTask(t, { name: "many", tasks }));
    // Exactly the limit is fine.
    run(tree, (t) => createTask(t, { name: "many", tasks: tasks.slice(1) }));
    assert.equal(tree.size, 8 + LIMITS.tasksPerCall);
  });
  await t.step(`deeper than ${LIMITS.depth} levels`, () => {
    const tree = plan();
    const chain = (n: number): NewTask =>
      n === 1 ? { name: "leaf" } : { name: `d${n}`, tasks: [chain(n - 1)] };
    // A2a is on level 4: a chain of depth - 4 more levels under it reaches exactly the limit.
    refuses(tree, "LIMIT_EXCEEDED", (t) => createTask(t, { ...chain(LIMITS.depth - 3), parentId: "A2a" }));
    refuses(tree, "LIMIT_EXCEEDED", (t) => createTask(t, chain(LIMITS.depth + 1)));
    run(tree, (t) => createTask(t, { ...chain(LIMITS.depth - 4), parentId: "A2a" }));
    const deepest = [...tree.walk()].reduce((m, x) => Math.max(m, x.depth), 0);
    assert.equal(deepest + 1, LIMITS.depth);
  });
  await t.step(`more than ${LIMITS.childrenPerTask} direct subtasks`, () => {
    const kids = Array.from({ length: LIMITS.childrenPerTask }, (_, i) => task(`k${i}`));
    const tree = treeOf(task("p", ...kids));
    refuses(tree, "LIMIT_EXCEEDED", (t) => createTask(t, { name: "one too many", parentId: "p" }));
    const roots = treeOf(...Array.from({ length: LIMITS.childrenPerTask }, (_, i) => task(`r${i}`)));
    refuses(roots, "LIMIT_EXCEEDED", (t) => createTask(t, { name: "one root too many" }));
  });
  await t.step(`more than ${LIMITS.tasksPerSession} tasks in a session`, () => {
    const perRoot = 999;
    const roots: Task[] = [];
    let n = 0;
    for (let r = 0; n < LIMITS.tasksPerSession; r++) {
      const kids: Task[] = [];
      for (let i = 0; i < perRoot && n + 1 + kids.length < LIMITS.tasksPerSession; i++) {
        kids.push(task(`r${r}c${i}`));
      }
      roots.push(task(`r${r}`, ...kids));
      n += 1 + kids.length;
    }
    const tree = new TaskTree(roots);
    assert.equal(tree.size, LIMITS.tasksPerSession);
    const error = refuses(tree, "LIMIT_EXCEEDED", (t) => createTask(t, { name: "straw", parentId: "r0c0" }));
    assert.match(error.message, new RegExp(`${LIMITS.tasksPerSession}`));
  });
});

// ---------------------------------------------------------------------------------------------------
// listTasks (R2.6)

Deno.test("listTasks lists the roots, or the subtasks of a parent, as views", () => {
  const tree = plan();
  run(tree, (t) => completeTask(t, "A1", "done"));
  assert.deepEqual(listTasks(tree).map((v) => v.id), ["R", "S"]);
  const level = listTasks(tree, "A");
  assert.deepEqual(level.map((v) => [v.id, v.parent_id, v.status, v.subtasks_done, v.subtasks_total]), [
    ["A1", "A", "done", 0, 0],
    ["A2", "A", "todo", 0, 2],
  ]);
  assert.equal(listTasks(tree)[0]!.parent_id, undefined);
  assert.deepEqual(listTasks(tree, "B"), []);
  refuses(tree, "NOT_FOUND", (t) => listTasks(t, "ghost"));
});

// ---------------------------------------------------------------------------------------------------
// startTask (R3.1–R3.6, R3.17, R3.18)

Deno.test("startTask sets the leaf and all its ancestors in progress (R3.1, R3.18)", () => {
  const tree = plan();
  const result = run(tree, (t) => startTask(t, "A1"));
  assert.deepEqual(statuses(tree, "A1", "A", "R", "A2", "B", "S"), {
    A1: "in_progress",
    A: "in_progress",
    R: "in_progress",
    A2: "todo",
    B: "todo",
    S: "todo",
  });
  assert.equal(result.task.id, "A1");
  assert.equal(result.task.status, "in_progress");
  assert.deepEqual(result.started_tasks.map((x) => x.id), ["R", "A", "A1"]);
  assert.match(result.message, /Started "A one" \(A1\)/);
  assert.match(result.message, /completeTask with id "A1"/);
  assertInvariants(tree);
});

Deno.test("startTask descends to the first unfinished leaf (R3.4, R3.5)", async (t) => {
  await t.step("from a root, through every intermediate level", () => {
    const tree = plan();
    const result = run(tree, (t) => startTask(t, "R"));
    assert.equal(result.task.id, "A1");
    assert.deepEqual(statuses(tree, "R", "A", "A1"), {
      R: "in_progress",
      A: "in_progress",
      A1: "in_progress",
    });
    assert.match(result.message, /first unfinished leaf "A one" \(A1\)/);
  });
  await t.step("skipping done subtasks to the deepest level", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    const result = run(tree, (t) => startTask(t, "R"));
    assert.equal(result.task.id, "A2a");
    assert.deepEqual(result.started_tasks.map((x) => x.id), ["R", "A", "A2", "A2a"]);
    assert.deepEqual(statuses(tree, "A2", "A2a", "A2b"), {
      A2: "in_progress",
      A2a: "in_progress",
      A2b: "todo",
    });
  });
  await t.step("past a finished subtree", () => {
    const tree = plan();
    for (const id of ["A1", "A2a", "A2b"]) run(tree, (t) => completeTask(t, id, "ok"));
    const result = run(tree, (t) => startTask(t, "R"));
    assert.equal(result.task.id, "B");
  });
  await t.step("on a parent already in progress: stays on its active leaf", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    const before = snapshot(tree);
    const result = run(tree, (t) => startTask(t, "R"));
    assert.equal(result.task.id, "A1");
    assert.deepEqual(result.started_tasks, []);
    assert.match(result.message, /already in progress/);
    assert.deepEqual(snapshot(tree), before);
  });
});

Deno.test("startTask refuses while an earlier sibling is not done, naming it, and changes nothing (R3.3)", async (t) => {
  await t.step("the task's own earlier siblings", () => {
    const tree = plan();
    run(tree, (t) => createTask(t, { id: "A3", name: "A three", parentId: "A" }));
    const error = refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "A3"));
    assert.match(error.message, /"A one" \(A1\)/);
    assert.match(error.message, /"A two" \(A2\)/);
    assert.match(error.message, /are not done/);
  });
  await t.step("an ancestor's earlier sibling", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    const error = refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "B"));
    assert.match(error.message, /"Alpha" \(A\)/);
    const deeper = refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "S"));
    assert.match(deeper.message, /"Root" \(R\)/);
  });
  await t.step("an earlier sibling in progress is not done either", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    const error = refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "A2"));
    assert.match(error.message, /earlier sibling "A one" \(A1\) is not done/);
  });
  await t.step("the first task is never blocked", () => {
    const tree = plan();
    assert.equal(run(tree, (t) => startTask(t, "A1")).task.id, "A1");
  });
});

Deno.test("startTask puts another in-progress leaf back to todo and says so (R3.17)", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "A1"));
  // A new first root: starting it is in order, while A1 is still in progress.
  run(tree, (t) => createTask(t, { id: "P", name: "Prelude", insertIndex: 0 }));
  const result = run(tree, (t) => startTask(t, "P"));
  assert.deepEqual(statuses(tree, "P", "A1", "A", "R"), {
    P: "in_progress",
    A1: "todo",
    A: "todo",
    R: "todo",
  });
  assert.deepEqual(tree.activeLeaves().map((x) => x.id), ["P"]);
  assert.match(result.message, /"A one" \(A1\) was in progress and is back to todo/);
  assertInvariants(tree);
});

Deno.test("startTask returns the criteria and constraints of the leaf and every ancestor, root first (R3.2)", async (t) => {
  const build = () => {
    const tree = new TaskTree();
    run(tree, (t) =>
      createTask(t, {
        id: "top",
        name: "top",
        completion_criteria: ["root criterion", "shared"],
        constraints: ["root constraint"],
        tasks: [{
          id: "mid",
          name: "mid",
          completion_criteria: ["middle criterion", "shared"],
          constraints: ["middle constraint"],
          tasks: [{
            id: "leaf",
            name: "leaf",
            completion_criteria: ["leaf criterion"],
            constraints: ["leaf constraint"],
          }],
        }, { id: "other", name: "other", completion_criteria: ["not on the path"] }],
      }));
    return tree;
  };
  await t.step("started on the leaf", () => {
    const result = run(build(), (t) => startTask(t, "leaf"));
    assert.deepEqual(result.aggregated_completion_criteria, [
      "root criterion",
      "shared",
      "middle criterion",
      "leaf criterion",
    ]);
    assert.deepEqual(result.aggregated_constraints, [
      "root constraint",
      "middle constraint",
      "leaf constraint",
    ]);
    assert.match(
      result.message,
      /Completion criteria:\n- root criterion\n- shared\n- middle criterion\n- leaf criterion/,
    );
    assert.match(result.message, /Constraints:\n- root constraint/);
  });
  await t.step("started on the root: those of the leaf actually started", () => {
    const result = run(build(), (t) => startTask(t, "top"));
    assert.equal(result.task.id, "leaf");
    assert.deepEqual(result.aggregated_completion_criteria, [
      "root criterion",
      "shared",
      "middle criterion",
      "leaf criterion",
    ]);
  });
  await t.step("none anywhere: empty lists", () => {
    const result = run(plan(), (t) => startTask(t, "A1"));
    assert.deepEqual(result.aggregated_completion_criteria, []);
    assert.deepEqual(result.aggregated_constraints, []);
  });
});

Deno.test("startTask returns a table marking what changed (R3.6)", () => {
  const tree = plan();
  const result = run(tree, (t) => startTask(t, "R"));
  const rows = result.hierarchy_summary.split("\n").filter((l) =>
    l.startsWith("| ") && !/^\| (Task|---) /.test(l)
  );
  assert.equal(rows.length, tree.size);
  const changed = rows.filter((r) => r.includes("todo -> in_progress")).map((r) => r.split("|")[2]!.trim());
  assert.deepEqual(changed, ["R", "A", "A1"]);
});

Deno.test("startTask refuses a done task and an unknown id", async (t) => {
  await t.step("done", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    const error = refuses(tree, "INVALID_INPUT", (t) => startTask(t, "A1"));
    assert.match(error.message, /already done/);
  });
  await t.step("unknown", () => {
    refuses(plan(), "NOT_FOUND", (t) => startTask(t, "ghost"));
  });
});

// ---------------------------------------------------------------------------------------------------
// completeTask (R3.7–R3.16)

Deno.test("completeTask marks the leaf done and records the resolution (R3.7)", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "A1"));
  run(tree, (t) => completeTask(t, "A1", "wrote it"));
  assert.equal(tree.get("A1")!.status, "done");
  assert.equal(tree.get("A1")!.resolution, "wrote it");
  assert.deepEqual(tree.activeLeaves(), []);
  // A is no longer in progress: nothing under it is.
  assert.deepEqual(statuses(tree, "A", "R"), { A: "todo", R: "todo" });
  assertInvariants(tree);
});

Deno.test("completeTask completes parents whose subtasks are all done (R3.16)", () => {
  const tree = plan();
  run(tree, (t) => completeTask(t, "A1", "ok"));
  run(tree, (t) => completeTask(t, "A2a", "ok"));
  run(tree, (t) => startTask(t, "A2b"));
  const result = run(tree, (t) => completeTask(t, "A2b", "ok"));
  assert.deepEqual(statuses(tree, "A2", "A", "R"), { A2: "done", A: "done", R: "todo" });
  assert.match(result.message, /also completed: "A two" \(A2\), "Alpha" \(A\)/);
  run(tree, (t) => completeTask(t, "B", "ok"));
  assert.equal(tree.get("R")!.status, "done");
  assertInvariants(tree);
});

Deno.test("completeTask names the next task: the first unfinished leaf in tree order (R3.8, R3.10)", async (t) => {
  await t.step("a sibling", () => {
    const tree = plan();
    const result = run(tree, (t) => completeTask(t, "A1", "ok"));
    // A2 is a parent: the next task is its first leaf.
    assert.equal(result.next_task_id, "A2a");
    assert.match(result.message, /Next task: "A two a" \(A2a\)\. Call startTask with id "A2a"/);
  });
  await t.step("in the next root", () => {
    const tree = plan();
    for (const id of ["A1", "A2a", "A2b"]) run(tree, (t) => completeTask(t, id, "ok"));
    const result = run(tree, (t) => completeTask(t, "B", "ok"));
    assert.equal(result.next_task_id, "S");
  });
  await t.step("an earlier unfinished leaf comes first", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    // Inserted before the task in progress, which is then completed.
    run(tree, (t) => createTask(t, { id: "P", name: "Prelude", insertIndex: 0 }));
    const result = run(tree, (t) => completeTask(t, "A1", "ok"));
    assert.equal(result.next_task_id, "P");
    assert.equal(nextTask(tree)?.id, "P");
  });
});

Deno.test('completeTask says "All tasks are complete" when none is left (R3.9)', () => {
  const tree = plan();
  let result;
  for (const id of ["A1", "A2a", "A2b", "B", "S"]) result = run(tree, (t) => completeTask(t, id, "ok"));
  assert.match(result!.message, /All tasks are complete\./);
  assert.equal(result!.next_task_id, undefined);
  assert.equal(Object.hasOwn(result!, "next_task_id"), false);
  assert.equal(result!.progress_summary.completion_percentage, 100);
  assert.equal(nextTask(tree), undefined);
});

Deno.test("completeTask refuses a task with unfinished subtasks: UNFINISHED_SUBTASKS, nothing changed (R3.15)", () => {
  const tree = plan();
  run(tree, (t) => completeTask(t, "A1", "ok"));
  const error = refuses(tree, "UNFINISHED_SUBTASKS", (t) => completeTask(t, "A", "all of it"));
  assert.match(error.message, /1 subtask is not done: "A two" \(A2\)/);
  refuses(tree, "UNFINISHED_SUBTASKS", (t) => completeTask(t, "R", "all"));
});

Deno.test("completeTask returns the overall totals and the table (R3.11, R3.13)", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "A1"));
  const { progress_summary: p } = run(tree, (t) => completeTask(t, "A1", "ok"));
  assert.deepEqual({ ...p, table: undefined }, {
    total_tasks: 8,
    completed_tasks: 1,
    in_progress_tasks: 0,
    todo_tasks: 7,
    completion_percentage: 12.5,
    table: undefined,
  });
  assert.match(p.table, /\| (\. )*A one \| A1 \| A \| done \| in_progress -> done \|/);
  assert.match(p.table, /Overall: 8 tasks, 1 done, 0 in progress, 7 todo \(12\.5% complete\)/);
});

Deno.test("completeTask refuses a done task, an unknown id, and a todo leaf out of order", async (t) => {
  await t.step("done", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    refuses(tree, "INVALID_INPUT", (t) => completeTask(t, "A1", "again"));
  });
  await t.step("unknown", () => {
    refuses(plan(), "NOT_FOUND", (t) => completeTask(t, "ghost", "x"));
  });
  await t.step("out of order", () => {
    const error = refuses(plan(), "EXECUTION_ORDER_VIOLATION", (t) => completeTask(t, "B", "x"));
    assert.match(error.message, /Cannot complete "Beta" \(B\)/);
  });
});

// ---------------------------------------------------------------------------------------------------
// updateTask (R2.7)

Deno.test("updateTask changes the given fields and keeps the rest (R2.7)", () => {
  const tree = plan();
  run(tree, (t) => updateTask(t, { id: "A2", completion_criteria: ["c1"], constraints: ["k1"] }));
  const { task: view } = run(
    tree,
    (t) => updateTask(t, { id: "A2", name: "Renamed", description: "new words", resolution: "notes" }),
  );
  assert.deepEqual(view, {
    id: "A2",
    name: "Renamed",
    description: "new words",
    status: "todo",
    resolution: "notes",
    completion_criteria: ["c1"],
    constraints: ["k1"],
    parent_id: "A",
    subtasks_total: 2,
    subtasks_done: 0,
  });
  assert.deepEqual(childIds(tree, "A2"), ["A2a", "A2b"]);
  run(tree, (t) => updateTask(t, { id: "A2", completion_criteria: [] }));
  assert.equal(Object.hasOwn(tree.get("A2")!, "completion_criteria"), false);
  assert.deepEqual(tree.get("A2")!.constraints, ["k1"]);
});

Deno.test("updateTask refuses an empty update and an unknown id", () => {
  const tree = plan();
  refuses(tree, "INVALID_INPUT", (t) => updateTask(t, { id: "A1" }));
  refuses(tree, "NOT_FOUND", (t) => updateTask(t, { id: "ghost", name: "x" }));
});

Deno.test("updateTask status changes follow the start and complete rules", async (t) => {
  await t.step("in_progress starts the task", () => {
    const tree = plan();
    const { message } = run(tree, (t) => updateTask(t, { id: "A1", status: "in_progress" }));
    assert.deepEqual(statuses(tree, "A1", "A", "R"), {
      A1: "in_progress",
      A: "in_progress",
      R: "in_progress",
    });
    assert.match(message, /Started/);
  });
  await t.step("in_progress on a parent descends to its first unfinished leaf", () => {
    const tree = plan();
    run(tree, (t) => updateTask(t, { id: "R", status: "in_progress" }));
    assert.deepEqual(tree.activeLeaves().map((x) => x.id), ["A1"]);
  });
  await t.step("in_progress out of order is refused, other fields unchanged too", () => {
    const tree = plan();
    refuses(
      tree,
      "EXECUTION_ORDER_VIOLATION",
      (t) => updateTask(t, { id: "B", name: "new", status: "in_progress" }),
    );
    assert.equal(tree.get("B")!.name, "Beta");
  });
  await t.step("done completes the leaf and its finished parents", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    run(tree, (t) => completeTask(t, "A2a", "ok"));
    run(tree, (t) => updateTask(t, { id: "A2b", status: "done", resolution: "via update" }));
    assert.deepEqual(statuses(tree, "A2b", "A2", "A"), { A2b: "done", A2: "done", A: "done" });
    assert.equal(tree.get("A2b")!.resolution, "via update");
  });
  await t.step("done on a parent with unfinished subtasks is refused", () => {
    refuses(plan(), "UNFINISHED_SUBTASKS", (t) => updateTask(t, { id: "A", status: "done" }));
  });
  await t.step("todo on a parent is refused", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    const error = refuses(tree, "INVALID_INPUT", (t) => updateTask(t, { id: "A", status: "todo" }));
    assert.match(error.message, /status follows them/);
  });
  await t.step("todo on a done leaf reopens it and its parents", () => {
    const tree = plan();
    for (const id of ["A1", "A2a", "A2b"]) run(tree, (t) => completeTask(t, id, "ok"));
    run(tree, (t) => updateTask(t, { id: "A2a", status: "todo" }));
    assert.deepEqual(statuses(tree, "A2a", "A2", "A"), { A2a: "todo", A2: "todo", A: "todo" });
    assertInvariants(tree);
  });
  await t.step("todo on the in-progress leaf stops it and its parents", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    run(tree, (t) => updateTask(t, { id: "A1", status: "todo" }));
    assert.deepEqual(statuses(tree, "A1", "A", "R"), { A1: "todo", A: "todo", R: "todo" });
    assert.deepEqual(tree.activeLeaves(), []);
  });
  await t.step("the same status is not a change", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    const before = snapshot(tree);
    run(tree, (t) => updateTask(t, { id: "A", status: "in_progress" }));
    assert.deepEqual(snapshot(tree), before);
  });
});

// ---------------------------------------------------------------------------------------------------
// deleteTask (R2.8)

Deno.test("deleteTask removes the task and its whole subtree (R2.8)", () => {
  const tree = plan();
  const result = run(tree, (t) => deleteTask(t, "A"));
  assert.deepEqual(result, { id: "A", deleted: 5 });
  assert.deepEqual(childIds(tree, "R"), ["B"]);
  for (const id of ["A", "A1", "A2", "A2a", "A2b"]) assert.equal(tree.get(id), undefined);
  assert.equal(tree.size, 3);
  assertInvariants(tree);
  refuses(tree, "NOT_FOUND", (t) => deleteTask(t, "A"));
});

Deno.test("deleteTask re-derives the statuses of what remains", async (t) => {
  await t.step("deleting the in-progress leaf: its parents go back to todo", () => {
    const tree = plan();
    run(tree, (t) => startTask(t, "A1"));
    run(tree, (t) => deleteTask(t, "A1"));
    assert.deepEqual(statuses(tree, "A", "R"), { A: "todo", R: "todo" });
    assert.deepEqual(tree.activeLeaves(), []);
    assertInvariants(tree);
  });
  await t.step("deleting the last unfinished subtask completes the parent", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    run(tree, (t) => completeTask(t, "A2a", "ok"));
    run(tree, (t) => deleteTask(t, "A2b"));
    assert.deepEqual(statuses(tree, "A2", "A", "R"), { A2: "done", A: "done", R: "todo" });
    assertInvariants(tree);
  });
  await t.step("deleting the only subtree of an in-progress parent leaves it a todo leaf", () => {
    const tree = plan();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    run(tree, (t) => startTask(t, "A2a"));
    run(tree, (t) => deleteTask(t, "A2a"));
    run(tree, (t) => deleteTask(t, "A2b"));
    assert.deepEqual(statuses(tree, "A2", "A", "R"), { A2: "todo", A: "todo", R: "todo" });
    assert.deepEqual(tree.activeLeaves(), []);
    assertInvariants(tree);
  });
  await t.step("deleting a root", () => {
    const tree = plan();
    run(tree, (t) => deleteTask(t, "R"));
    assert.deepEqual(idsInOrder(tree), ["S"]);
    assert.deepEqual({ ...tree.counts }, { todo: 1, in_progress: 0, done: 0 });
  });
});
