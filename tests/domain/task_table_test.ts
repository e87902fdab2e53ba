import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import { taskTable } from "../../lib/domain/task_table.ts";
import type { Task, TaskStatus } from "../../lib/domain/schemas.ts";
import { completeTask, createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { run, task } from "../support/trees.ts";

interface Row {
  task: string;
  id: string;
  parent: string;
  status: string;
  changed: string;
  subtasks: string;
  progress: string;
}

/** The table's body rows as cells (header and separator dropped). */
function rowsOf(table: string): Row[] {
  return table.split("\n").filter((l) => l.startsWith("| ")).slice(2).map((line) => {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    assert.equal(cells.length, 7, line);
    const [task, id, parent, status, changed, subtasks, progress] = cells as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    return { task, id, parent, status, changed, subtasks, progress };
  });
}

function taskRows(table: string): Row[] {
  return rowsOf(table).filter((r) => r.id !== "");
}

/** R (A (A1, A2), B), S */
function small(): TaskTree {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "R",
      name: "Root",
      tasks: [{ id: "A", name: "Alpha", tasks: [{ id: "A1", name: "A one" }, { id: "A2", name: "A two" }] }, {
        id: "B",
        name: "Beta",
      }],
    }));
  run(tree, (t) => createTask(t, { id: "S", name: "Second" }));
  return tree;
}

Deno.test("progress table has one row per task in tree order with every column (R3.6, R3.14)", () => {
  const tree = small();
  run(tree, (t) => completeTask(t, "A1", "ok"));
  const { table } = taskTable(tree);
  assert.equal(
    table.split("\n").slice(0, 2).join("\n"),
    "| Task | ID | Parent | Status | Changed | Subtasks | Progress |\n| --- | --- | --- | --- | --- | --- | --- |",
  );
  assert.deepEqual(rowsOf(table), [
    { task: "Root", id: "R", parent: "-", status: "todo", changed: "", subtasks: "0/2", progress: "0%" },
    { task: ". Alpha", id: "A", parent: "R", status: "todo", changed: "", subtasks: "1/2", progress: "50%" },
    { task: ". . A one", id: "A1", parent: "A", status: "done", changed: "", subtasks: "-", progress: "-" },
    { task: ". . A two", id: "A2", parent: "A", status: "todo", changed: "", subtasks: "-", progress: "-" },
    { task: ". Beta", id: "B", parent: "R", status: "todo", changed: "", subtasks: "-", progress: "-" },
    { task: "Second", id: "S", parent: "-", status: "todo", changed: "", subtasks: "-", progress: "-" },
  ]);
  assert.doesNotMatch(table, /Showing/);
});

Deno.test("progress table escapes a name that would break its cell", () => {
  const tree = new TaskTree();
  run(tree, (t) => createTask(t, { id: "x", name: "a | b\nc" }));
  const rows = rowsOf(taskTable(tree).table);
  assert.equal(rows.length, 1);
  assert.match(taskTable(tree).table, /\| a \\\| b c \| x \|/);
});

Deno.test("progress table marks exactly the tasks this call changed", async (t) => {
  await t.step("start: the leaf and its ancestors", () => {
    const tree = small();
    const { hierarchy_summary } = run(tree, (t) => startTask(t, "A1"));
    const changed = rowsOf(hierarchy_summary).filter((r) => r.changed !== "");
    assert.deepEqual(changed.map((r) => [r.id, r.changed]), [
      ["R", "todo -> in_progress"],
      ["A", "todo -> in_progress"],
      ["A1", "todo -> in_progress"],
    ]);
  });
  await t.step("complete: the leaf and the parents it completed", () => {
    const tree = small();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    run(tree, (t) => startTask(t, "A2"));
    const { progress_summary } = run(tree, (t) => completeTask(t, "A2", "ok"));
    const changed = rowsOf(progress_summary.table).filter((r) => r.changed !== "");
    assert.deepEqual(changed.map((r) => [r.id, r.changed]), [
      ["R", "in_progress -> todo"],
      ["A", "in_progress -> done"],
      ["A2", "in_progress -> done"],
    ]);
  });
  await t.step("a parent that left and regained its status within the call is not marked", () => {
    const tree = small();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    run(tree, (t) => startTask(t, "A2"));
    run(tree, (t) => updateTask(t, { id: "A1", status: "todo" }));
    // Starting A1 puts A2 back to todo (A and R pass through todo) and A1 in progress (A, R back).
    const { hierarchy_summary } = run(tree, (t) => startTask(t, "A1"));
    const changed = rowsOf(hierarchy_summary).filter((r) => r.changed !== "");
    assert.deepEqual(changed.map((r) => [r.id, r.changed]), [
      ["A1", "todo -> in_progress"],
      ["A2", "in_progress -> todo"],
    ]);
  });
  await t.step("without statusBefore nothing is marked", () => {
    const tree = small();
    run(tree, (t) => startTask(t, "A1"));
    assert.deepEqual(rowsOf(taskTable(tree).table).filter((r) => r.changed !== ""), []);
  });
});

Deno.test("progress summary has a line per parent with done, remaining and percent (R3.12)", () => {
  const tree = small();
  run(tree, (t) => completeTask(t, "A1", "ok"));
  const { table } = taskTable(tree);
  const lines = table.split("\n");
  const start = lines.indexOf("Parent progress:");
  assert.ok(start > 0);
  assert.deepEqual(lines.slice(start + 1, start + 3), [
    "- Root (R): 0/2 subtasks done, 2 remaining (0%)",
    "- Alpha (A): 1/2 subtasks done, 1 remaining (50%)",
  ]);
  assert.equal(lines[start + 3], "");
});

Deno.test("progress summary gives the overall totals (R3.13)", async (t) => {
  await t.step("mixed", () => {
    const tree = small();
    run(tree, (t) => completeTask(t, "A1", "ok"));
    run(tree, (t) => startTask(t, "A2"));
    const summary = taskTable(tree);
    assert.deepEqual({ ...summary, table: "" }, {
      total_tasks: 6,
      completed_tasks: 1,
      in_progress_tasks: 3,
      todo_tasks: 2,
      completion_percentage: 16.7,
      table: "",
    });
    assert.equal(
      summary.table.split("\n").at(-1),
      "Overall: 6 tasks, 1 done, 3 in progress, 2 todo (16.7% complete)",
    );
  });
  await t.step("empty session", () => {
    const summary = taskTable(new TaskTree());
    assert.equal(summary.total_tasks, 0);
    assert.equal(summary.completion_percentage, 0);
    assert.equal(summary.table, "No tasks in this session.");
  });
});

/** 10 roots × 10 children × 49 grandchildren: 5,010 tasks; ids r3, r3c4, r3c4g17. */
function bigTree(): TaskTree {
  const roots: Task[] = [];
  for (let r = 0; r < 10; r++) {
    const children: Task[] = [];
    for (let c = 0; c < 10; c++) {
      const leaves: Task[] = [];
      for (let g = 0; g < 49; g++) leaves.push(task(`r${r}c${c}g${g}`));
      children.push(task(`r${r}c${c}`, ...leaves));
    }
    roots.push(task(`r${r}`, ...children));
  }
  return new TaskTree(roots);
}

function hiddenCounts(table: string): number[] {
  return rowsOf(table).filter((r) => r.id === "").map((r) => {
    const m = /\.\.\. (\d+) more/.exec(r.task);
    assert.ok(m, `a row without id is a "... N more" row: ${r.task}`);
    return Number(m[1]);
  });
}

function assertNothingCutSilently(tree: TaskTree, table: string, cap: number): Row[] {
  const rows = taskRows(table);
  assert.ok(rows.length <= cap, `${rows.length} task rows for a cap of ${cap}`);
  const hidden = hiddenCounts(table);
  assert.ok(hidden.length > 0);
  assert.equal(rows.length + hidden.reduce((a, b) => a + b, 0), tree.size);
  assert.equal(new Set(rows.map((r) => r.id)).size, rows.length, "no task shown twice");
  assert.match(table, new RegExp(`Showing ${rows.length} of ${tree.size} tasks`));
  assert.match(table, new RegExp(`Overall: ${tree.size} tasks`));
  return rows;
}

Deno.test("progress table of a big tree keeps to the row cap around the active path and counts the rest", async (t) => {
  await t.step("focus deep in the middle, small cap", () => {
    const tree = bigTree();
    const cap = 8;
    const focus = tree.get("r5c5g25")!;
    const { table, total_tasks } = taskTable(tree, { focus, rowCap: cap });
    assert.equal(total_tasks, 5010);
    const rows = assertNothingCutSilently(tree, table, cap);
    const ids = rows.map((r) => r.id);
    for (const id of ["r5", "r5c5", "r5c5g25"]) assert.ok(ids.includes(id), `row for ${id}`);
    assert.ok(ids.indexOf("r5") < ids.indexOf("r5c5") && ids.indexOf("r5c5") < ids.indexOf("r5c5g25"));
    assert.equal(rows.find((r) => r.id === "r5c5g25")!.parent, "r5c5");
  });
  await t.step("the cap equal to the focus path", () => {
    const tree = bigTree();
    const { table } = taskTable(tree, { focus: tree.get("r9c9g48")!, rowCap: 3 });
    const rows = assertNothingCutSilently(tree, table, 3);
    assert.deepEqual(rows.map((r) => r.id), ["r9", "r9c9", "r9c9g48"]);
  });
  await t.step("the default cap, after a real start", () => {
    const tree = bigTree();
    for (let g = 0; g < 49; g++) tree.transact((t) => completeTask(t, `r0c0g${g}`, "ok"));
    const { hierarchy_summary } = run(tree, (t) => startTask(t, "r0"));
    const rows = assertNothingCutSilently(tree, hierarchy_summary, LIMITS.tableRows);
    const ids = rows.map((r) => r.id);
    for (const id of ["r0", "r0c1", "r0c1g0"]) assert.ok(ids.includes(id), `row for ${id}`);
    assert.equal(rows.find((r) => r.id === "r0c1g0")!.changed, "todo -> in_progress");
    assert.equal(rows.find((r) => r.id === "r0c0")!.status, "done");
  });
  await t.step("no focus: the top of the tree", () => {
    const tree = bigTree();
    const { table } = taskTable(tree, { rowCap: 12 });
    const rows = assertNothingCutSilently(tree, table, 12);
    assert.equal(rows[0]!.id, "r0");
  });
  await t.step("the changed tasks are shown too", () => {
    const tree = bigTree();
    const before = new Map<string, TaskStatus>([["r7c2g3", "done"]]);
    const { table } = taskTable(tree, { focus: tree.get("r1c1g1")!, statusBefore: before, rowCap: 10 });
    const rows = assertNothingCutSilently(tree, table, 10);
    assert.equal(rows.find((r) => r.id === "r7c2g3")?.changed, "done -> todo");
  });
});
