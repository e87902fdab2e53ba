/**
 * Random command sequences over one tree, for property tests: every tool's operation, aimed at tasks
 * by position, as the next or active task, or by ids that may not exist.
 */
import fc from "fast-check";
import { type ChecklistItem, markDone, updateTasks } from "../../lib/domain/checklist.ts";
import type { NewTask, TaskStatus } from "../../lib/domain/schemas.ts";
import {
  completeTask,
  createTask,
  deleteTask,
  nextTask,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import type { TaskTree } from "../../lib/domain/task_tree.ts";

/**
 * A task named by position in tree order, or as the next task or the active leaf (resolved when the
 * step runs), or by an id that may not exist.
 */
export type Target = { pick: number } | { id: string } | { special: "next" | "active" };

const poolId = fc.constantFrom(...Array.from({ length: 16 }, (_, i) => `p${i}`));
const target: fc.Arbitrary<Target> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ special: fc.constantFrom("next" as const, "active" as const) }) },
  { weight: 1, arbitrary: fc.record({ id: fc.oneof(poolId, fc.constant("ghost")) }) },
);
const name = fc.constantFrom("alpha", "beta", "gamma");

export function newTask(depth: number): fc.Arbitrary<NewTask> {
  const base = {
    // Mostly generated ids; a given one sometimes repeats within the input or the tree.
    id: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: poolId }),
    name,
    completion_criteria: fc.option(fc.array(fc.constantFrom("c1", "c2"), { maxLength: 2 }), {
      nil: undefined,
    }),
  };
  if (depth === 0) return fc.record(base);
  return fc.record({
    ...base,
    tasks: fc.option(fc.array(newTask(depth - 1), { maxLength: 3 }), { nil: undefined }),
  });
}

type Item = { taskId: Target; description: string; status?: "TODO" | "DONE" | undefined; children?: Item[] };

function item(depth: number): fc.Arbitrary<Item> {
  const base = {
    taskId: target,
    description: name,
    status: fc.option(fc.constantFrom("TODO" as const, "DONE" as const), { nil: undefined }),
  };
  if (depth === 0) return fc.record(base);
  return fc.record({
    ...base,
    children: fc.option(fc.array(item(depth - 1), { maxLength: 3 }), { nil: undefined, freq: 2 }),
  });
}

export const command = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("create" as const),
      parent: fc.option(target, { nil: undefined, freq: 3 }),
      insertIndex: fc.option(fc.integer({ min: -1, max: 4 }), { nil: undefined, freq: 2 }),
      input: newTask(3),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("start" as const), target }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("complete" as const), target }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      target,
      status: fc.option(fc.constantFrom<TaskStatus>("todo", "in_progress", "done"), { nil: undefined }),
      name: fc.option(name, { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), target }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("checklist" as const),
      path: fc.option(target, { nil: undefined, freq: 5 }),
      items: fc.array(item(2), { maxLength: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("mark" as const), targets: fc.array(target, { maxLength: 3 }) }),
  },
);
export type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

export function resolve(tree: TaskTree, t: Target): string {
  if ("id" in t) return t.id;
  if ("special" in t) {
    const found = t.special === "next" ? nextTask(tree) : tree.activeLeaves()[0];
    return found?.id ?? "ghost";
  }
  const ids = [...tree.walk()].map(({ task }) => task.id);
  return ids.length === 0 ? "ghost" : ids[t.pick % ids.length]!;
}

function pathOf(tree: TaskTree, t: Target | undefined): string {
  if (t === undefined) return "/";
  const task = tree.get(resolve(tree, t));
  if (!task) return "/ghost/";
  return `/${tree.pathTo(task).map((x) => x.id).join("/")}/`;
}

function toItem(tree: TaskTree, i: Item): ChecklistItem {
  const out: ChecklistItem = {
    taskId: resolve(tree, i.taskId),
    description: i.description,
    status: i.status,
  };
  if (i.children) out.children = i.children.map((c) => toItem(tree, c));
  return out;
}

/** Runs one command on a tree inside an open transaction (as a store's callback does). */
export function runCommand(t: TaskTree, cmd: Command): unknown {
  switch (cmd.kind) {
    case "create":
      return createTask(t, {
        ...cmd.input,
        parentId: cmd.parent === undefined ? undefined : resolve(t, cmd.parent),
        insertIndex: cmd.insertIndex,
      });
    case "start":
      return startTask(t, resolve(t, cmd.target));
    case "complete":
      return completeTask(t, resolve(t, cmd.target), "done");
    case "update":
      return updateTask(t, { id: resolve(t, cmd.target), status: cmd.status, name: cmd.name });
    case "delete":
      return deleteTask(t, resolve(t, cmd.target));
    case "checklist":
      return updateTasks(t, pathOf(t, cmd.path), cmd.items.map((i) => toItem(t, i)));
    case "mark":
      return markDone(t, cmd.targets.map((x) => resolve(t, x)));
  }
}

/** Runs one command as the stores do, inside a transaction. */
export function apply(tree: TaskTree, cmd: Command): void {
  tree.transact((t) => runCommand(t, cmd));
}
