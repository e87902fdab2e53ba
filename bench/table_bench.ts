/**
 * The progress table alone, on a warm tree of 100 and of 100,000 tasks (shape: roots x 9 x leaves,
 * 10 tasks done, one leaf in progress): what each startTask/completeTask spends on it.
 *
 *   deno bench bench/table_bench.ts
 */
import { taskTable } from "../lib/domain/task_table.ts";
import { completeTask, createTask, nextTask, startTask } from "../lib/domain/task_ops.ts";
import { TaskTree } from "../lib/domain/task_tree.ts";

function plan(roots: number, leaves: number): { tree: TaskTree; focus: ReturnType<TaskTree["require"]> } {
  const tree = new TaskTree();
  for (let r = 0; r < roots; r++) {
    tree.transact((t) => createTask(t, { id: `r${r}`, name: `Root task ${r}` }));
    for (let c = 0; c < 9; c++) {
      const tasks = Array.from({ length: leaves }, (_, i) => ({ name: `Leaf task ${i}` }));
      tree.transact((t) => createTask(t, { parentId: `r${r}`, name: `Subtask ${c}`, tasks }));
    }
  }
  for (let i = 0; i < 10; i++) {
    const next = nextTask(tree)!;
    tree.transact((t) => startTask(t, next.id));
    tree.transact((t) => completeTask(t, next.id, "done"));
  }
  const focus = nextTask(tree)!;
  tree.transact((t) => startTask(t, focus.id));
  return { tree, focus };
}

const small = plan(1, 10);
const big = plan(100, 110);

Deno.bench(`progress table, ${small.tree.size} tasks`, { group: "table", baseline: true }, () => {
  taskTable(small.tree, { focus: small.focus });
});

Deno.bench(`progress table, ${big.tree.size} tasks`, { group: "table" }, () => {
  taskTable(big.tree, { focus: big.focus });
});
