/**
 * Random command sequences over one tree: after every step the invariants hold, the counters match a
 * recount, and a refused step changed nothing.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type ChecklistItem, markDone, updateTasks } from "../../lib/domain/checklist.ts";
import { DomainError } from "../../lib/domain/errors.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { taskTable } from "../../lib/domain/task_table.ts";
import type { NewTask, TaskStatus } from "../../lib/domain/schemas.ts";
import {
  completeTask,
  createTask,
  deleteTask,
  nextTask,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { recount, snapshot } from "./helpers.ts";

/**
 * A task named by position in tree order, or as the next task or the active leaf (resolved when the
 * step runs), or by an id that may not exist.
 */
type Target = { pick: number } | { id: string } | { special: "next" | "active" };

const poolId = fc.constantFrom(...Array.from({ length: 16 }, (_, i) => `p${i}`));
const target: fc.Arbitrary<Target> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ special: fc.constantFrom("next" as const, "active" as const) }) },
  { weight: 1, arbitrary: fc.record({ id: fc.oneof(poolId, fc.constant("ghost")) }) },
);
const name = fc.constantFrom("alpha", "beta", "gamma");

function newTask(depth: number): fc.Arbitrary<NewTask> {
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

const command = fc.oneof(
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
type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

function resolve(tree: TaskTree, t: Target): string {
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

/** Runs one command as the stores do, inside a transaction. */
function apply(tree: TaskTree, cmd: Command): void {
  tree.transact((t) => {
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
  });
}

/** A capped table of the tree: the focus path shown, rows shown and "... N more" counts add up. */
function assertTableComplete(tree: TaskTree, step: string): void {
  const focus = tree.activeLeaves()[0] ?? nextTask(tree);
  const cap = 6;
  const { table } = taskTable(tree, { focus, rowCap: cap });
  if (tree.size === 0) return;
  const rows = table.split("\n").filter((l) => l.startsWith("| ")).slice(2);
  const ids = rows.map((l) => l.split(/(?<!\\)\|/)[2]!.trim()).filter((id) => id !== "");
  const hidden = rows.map((l) => /\.\.\. (\d+) more/.exec(l)?.[1]).filter((n) => n !== undefined).map(Number);
  assert.ok(ids.length <= cap, step);
  assert.equal(ids.length + hidden.reduce((a, b) => a + b, 0), tree.size, step);
  if (focus && tree.pathTo(focus).length <= cap) {
    for (const t of tree.pathTo(focus)) assert.ok(ids.includes(t.id), `${step}: row for ${t.id}`);
  }
}

function assertConsistent(tree: TaskTree, step: string): void {
  assert.deepEqual(invariantViolations(tree), [], step);
  const again = recount(tree);
  assert.deepEqual(again.indexProblems, [], step);
  assert.equal(tree.size, again.size, step);
  assert.deepEqual({ ...tree.counts }, again.counts, step);
  assert.deepEqual(tree.activeLeaves().map((t) => t.id).sort(), again.active.sort(), step);
  // The stored form loads back into an equal tree (no duplicate ids, same counters).
  const reloaded = new TaskTree(structuredClone(tree.roots));
  assert.equal(reloaded.size, tree.size, step);
  assert.deepEqual({ ...reloaded.counts }, { ...tree.counts }, step);
}

Deno.test("random command sequences keep the invariants, and a refused step changes nothing", () => {
  const outcomes = { ok: 0, refused: 0 };
  fc.assert(
    fc.property(
      newTask(3),
      fc.array(command, { minLength: 1, maxLength: 40, size: "max" }),
      (first, rest) => {
        const tree = new TaskTree();
        const commands: Command[] = [{
          kind: "create",
          input: first,
          parent: undefined,
          insertIndex: undefined,
        }, ...rest];
        commands.forEach((cmd, n) => {
          const before = snapshot(tree);
          const step = `step ${n}: ${JSON.stringify(cmd)}`;
          try {
            apply(tree, cmd);
            outcomes.ok++;
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            outcomes.refused++;
            assert.deepEqual(
              snapshot(tree),
              before,
              `${step} was refused (${error.code}) but changed the tree`,
            );
          }
          assertConsistent(tree, step);
          assertTableComplete(tree, step);
        });
      },
    ),
    { numRuns: 600 },
  );
  // The generator exercises both paths.
  assert.ok(outcomes.ok > 2000 && outcomes.refused > 2000, JSON.stringify(outcomes));
});

Deno.test("random command sequences: a new task and its subtasks are todo, ids kept or generated", () => {
  fc.assert(
    fc.property(fc.array(command, { maxLength: 15 }), newTask(3), (commands, input) => {
      const tree = new TaskTree();
      for (const cmd of commands) {
        try {
          apply(tree, cmd);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
        }
      }
      let created;
      try {
        created = tree.transact((t) => createTask(t, input)).result.task;
      } catch (error) {
        if (error instanceof DomainError && error.code === "DUPLICATE_ID") return;
        throw error;
      }
      const check = (given: NewTask, made: typeof created) => {
        assert.equal(made.status, "todo");
        if (given.id !== undefined) assert.equal(made.id, given.id);
        assert.equal(tree.get(made.id), made);
        assert.equal(made.tasks.length, given.tasks?.length ?? 0);
        made.tasks.forEach((child, i) => check(given.tasks![i]!, child));
      };
      check(input, created);
      assertConsistent(tree, "after create");
    }),
    { numRuns: 200 },
  );
});
