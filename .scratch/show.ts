import { TaskTree } from "../lib/domain/task_tree.ts";
import { createTask, nextTask, startTask } from "../lib/domain/task_ops.ts";
const mk = (n: number, d: number): any[] =>
  Array.from({ length: n }, (_, i) => ({ name: `Leaf task number ${i}`, tasks: d > 0 ? mk(n, d - 1) : [] }));
const tree = new TaskTree();
for (let r = 0; r < 10; r++) {
  tree.transact((t) =>
    createTask(t, { name: "root " + r, tasks: mk(9, 0).map((t) => ({ ...t, tasks: mk(50, 0) })) })
  );
}
for (let i = 0; i < 3; i++) {
  const n = nextTask(tree)!;
  tree.transact((t) => startTask(t, n.id));
}
const n = nextTask(tree)!;
const r = tree.transact((t) => startTask(t, n.id)).result;
console.log(r.message);
console.log(r.hierarchy_summary);
console.log(JSON.stringify(r).length);
