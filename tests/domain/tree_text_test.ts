/** The text drawing of a task tree: lines, marks, the line cap and the hidden-task count. */
import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import { completeTask, createTask, startTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { renderSession, renderTree } from "../../lib/domain/tree_text.ts";
import { run, task, treeOf } from "../support/trees.ts";

/** a (a1, a2 (a2x, a2y)), b — with a1 done and a2x in progress. */
function sample(): TaskTree {
  const tree = treeOf(task("a", task("a1"), task("a2", task("a2x"), task("a2y"))), task("b"));
  run(tree, (t) => completeTask(t, "a1", "first done"));
  run(tree, (t) => startTask(t, "a2x"));
  return tree;
}

// ---------------------------------------------------------------------------------------------------
// renderTree

Deno.test("renderTree draws one line per task with branches, indents, marks and id: name", () => {
  assert.equal(
    renderTree(sample().roots),
    [
      "├── ◐ a: Task a",
      "│   ├── ✓ a1: Task a1",
      "│   └── ◐ a2: Task a2",
      "│       ├── ◐ a2x: Task a2x",
      "│       └── ○ a2y: Task a2y",
      "└── ○ b: Task b",
    ].join("\n"),
  );
});

Deno.test("renderTree draws a single root, an empty tree and multi-line names", async (t) => {
  await t.step("one root", () => {
    assert.equal(renderTree([task("x", task("y"))]), "└── ○ x: Task x\n    └── ○ y: Task y");
  });
  await t.step("empty", () => assert.equal(renderTree([]), "(no tasks)"));
  await t.step("a name with line breaks stays on one line", () => {
    assert.equal(renderTree([{ ...task("x"), name: "two\nlines" }]), "└── ○ x: two lines");
  });
});

Deno.test(`renderTree draws at most ${LIMITS.treeTextLines} lines by default`, () => {
  const roots = Array.from(
    { length: 10 },
    (_, r) => task(`r${r}`, ...Array.from({ length: 49 }, (_, c) => task(`r${r}c${c}`))),
  );
  const lines = renderTree(roots).split("\n");
  assert.equal(lines.length, LIMITS.treeTextLines + 1);
  assert.equal(
    lines.at(-1),
    "… 100 more tasks not shown (call get_all_tasks on a smaller session, or getTask)",
  );
});

Deno.test("renderTree stops at maxLines and counts the tasks not drawn", () => {
  const tree = sample();
  const text = renderTree(tree.roots, { maxLines: 3 });
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(0, 3), ["├── ◐ a: Task a", "│   ├── ✓ a1: Task a1", "│   └── ◐ a2: Task a2"]);
  assert.match(lines[3]!, /^… 3 more tasks not shown/);
  assert.equal(lines.length, 4);
});

Deno.test("renderSession counts the tasks past the line cap from the tree's index, as a walk would", () => {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      name: "Big",
      tasks: Array.from({ length: 30 }, (_, i) => ({ name: `Part ${i}`, tasks: [{ name: "Step" }] })),
    }));
  run(tree, (t) => createTask(t, { name: "Second", tasks: [{ name: "Only" }] }));
  assert.equal(tree.size, 63);
  const text = renderSession(tree);
  assert.equal(text, renderTree(tree.roots));
  assert.equal(text.split("\n").length, LIMITS.treeTextLines < 63 ? LIMITS.treeTextLines + 1 : 63);
  const capped = renderTree(tree.roots, { maxLines: 10, sizeOf: (task) => tree.subtreeSize(task) });
  assert.equal(capped, renderTree(tree.roots, { maxLines: 10 }));
  assert.match(capped.split("\n")[10]!, /^… 53 more tasks not shown/);
  assert.equal(renderSession(undefined), "(no tasks)");
});
