/**
 * Small builders and checks shared by the domain tests: build trees by id, snapshot a tree, assert a
 * refusal that changed nothing, recount a tree by walking its roots.
 */
import assert from "node:assert/strict";
import { DomainError, type ErrorCode } from "../../lib/domain/errors.ts";
import type { Task, TaskStatus } from "../../lib/domain/schemas.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";

/** A todo task named `Task <id>` with the given subtasks. */
export function task(id: string, ...tasks: Task[]): Task {
  return { id, name: `Task ${id}`, description: "", status: "todo", tasks };
}

/** A tree over fresh todo tasks. */
export function treeOf(...roots: Task[]): TaskTree {
  return new TaskTree(roots);
}

/** Runs one domain operation as the stores do: inside a transaction. */
export function run<T>(tree: TaskTree, fn: (t: TaskTree) => T): T {
  return tree.transact(fn).result;
}

/** Everything observable about a tree, deep-copied. */
export function snapshot(tree: TaskTree) {
  return {
    roots: structuredClone(tree.roots),
    size: tree.size,
    counts: { ...tree.counts },
    active: tree.activeLeaves().map((t) => t.id),
  };
}

/** A predicate for `assert.throws`: a DomainError with this code. */
export function isCode(code: ErrorCode): (e: unknown) => boolean {
  return (e) => e instanceof DomainError && e.code === code;
}

/** Asserts `fn` is refused with `code` and leaves the tree exactly as it was; returns the error. */
export function refuses(tree: TaskTree, code: ErrorCode, fn: (t: TaskTree) => unknown): DomainError {
  const before = snapshot(tree);
  let caught: DomainError | undefined;
  assert.throws(() => tree.transact(fn), (e) => {
    caught = e as DomainError;
    return isCode(code)(e);
  });
  assert.deepEqual(snapshot(tree), before, "a refused operation changed the tree");
  return caught!;
}

/** Status of each id, for compact assertions: `{ a: "done", b: "todo" }`. */
export function statuses(tree: TaskTree, ...ids: string[]): Record<string, TaskStatus | undefined> {
  return Object.fromEntries(ids.map((id) => [id, tree.get(id)?.status]));
}

/** Size, counts, active leaves and index consistency recomputed by walking the roots. */
export function recount(tree: TaskTree): {
  size: number;
  counts: Record<TaskStatus, number>;
  active: string[];
  indexProblems: string[];
} {
  const counts: Record<TaskStatus, number> = { todo: 0, in_progress: 0, done: 0 };
  const active: string[] = [];
  const indexProblems: string[] = [];
  let size = 0;
  const visit = (list: Task[], parent: Task | undefined) => {
    for (const t of list) {
      size++;
      counts[t.status]++;
      if (t.status === "in_progress" && t.tasks.length === 0) active.push(t.id);
      if (tree.get(t.id) !== t) indexProblems.push(`index misses "${t.id}"`);
      else if (tree.parentOf(t) !== parent) indexProblems.push(`wrong parent for "${t.id}"`);
      else if (tree.doneChildren(t) !== t.tasks.filter((c) => c.status === "done").length) {
        indexProblems.push(`wrong count of done children for "${t.id}"`);
      } else if (tree.runningChildren(t) !== t.tasks.filter((c) => c.status === "in_progress").length) {
        indexProblems.push(`wrong count of children in progress for "${t.id}"`);
      }
      visit(t.tasks, t);
    }
  };
  visit(tree.roots, undefined);
  return { size, counts, active, indexProblems };
}

/** The ids in tree order. */
export function idsInOrder(tree: TaskTree): string[] {
  return [...tree.walk()].map(({ task }) => task.id);
}
