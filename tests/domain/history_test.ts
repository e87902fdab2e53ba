import assert from "node:assert/strict";
import fc from "fast-check";
import { updateTasks } from "../../lib/domain/checklist.ts";
import { DomainError } from "../../lib/domain/errors.ts";
import {
  checkRestorable,
  type Delta,
  DeltaSchema,
  historyEntry,
  keepLast,
  pastRoots,
  recordChange,
  type RecordedChange,
  RecordedChangeSchema,
  restoreTree,
  summarize,
} from "../../lib/domain/history.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { completeTask, createTask, deleteTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { command, newTask, runCommand } from "../support/tree_commands.ts";
import { isCode, recount } from "../support/trees.ts";

/** Runs `fn` as a store does and returns what it recorded. */
function change(tree: TaskTree, fn: (t: TaskTree) => unknown): Delta {
  const { changes } = tree.transact(fn);
  return recordChange(tree, changes);
}

function bigTree(n: number): TaskTree {
  const tree = new TaskTree();
  const parents = Math.ceil(n / 100);
  tree.transact((t) => {
    for (let p = 0; p < parents; p++) {
      createTask(t, {
        id: `p${p}`,
        name: `Parent ${p}`,
        description: "A parent task with a description of ordinary length.",
        tasks: Array.from({ length: 99 }, (_, i) => ({
          id: `p${p}-${i}`,
          name: `Leaf ${i} of parent ${p}`,
          description: "Do the thing this leaf is about, then check it.",
        })),
      });
    }
  });
  return tree;
}

function plan(): TaskTree {
  const tree = new TaskTree();
  tree.transact((t) =>
    createTask(t, {
      id: "plan",
      name: "Ship it",
      completion_criteria: ["tests pass"],
      tasks: [
        { id: "a", name: "Design", constraints: ["no new deps"] },
        { id: "b", name: "Build", tasks: [{ id: "b1", name: "Code" }, { id: "b2", name: "Review" }] },
        { id: "c", name: "Release" },
      ],
    })
  );
  tree.transact((t) => startTask(t, "a"));
  tree.transact((t) => completeTask(t, "a", "designed on paper"));
  tree.transact((t) => startTask(t, "b1"));
  return tree;
}

Deno.test("a change to one task of a 10,000-task session records about that one task", () => {
  const tree = bigTree(10_000);
  const one = JSON.stringify(tree.get("p50-7"));
  const rename = change(tree, (t) => updateTask(t, { id: "p50-7", name: "Renamed leaf" }));
  assert.ok(JSON.stringify(rename).length < 2 * one.length, JSON.stringify(rename));
  const start = change(tree, (t) => startTask(t, "p0-0"));
  // The leaf and its parent change status: two small items, no child lists.
  assert.deepEqual(start.map((i) => i.id).sort(), ["p0", "p0-0"]);
  assert.ok(JSON.stringify(start).length < 3 * one.length);
});

Deno.test("a create records the new ids and the list they joined, not their contents", () => {
  const tree = plan();
  const delta = change(
    tree,
    (t) => createTask(t, { id: "d", name: "Docs", description: "x".repeat(3000), parentId: "plan" }),
  );
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
  assert.deepEqual(delta.sort(byId), [{ id: "d", f: null }, { id: "plan", k: ["a", "b", "c"] }]);
  assert.equal(DeltaSchema.parse(delta).length, 2);
  assert.equal(summarize(tree, delta), 'added 1: "Docs"');
});

Deno.test("historyEntry: the one history entry of a change, with its revision, time, tool, summary and delta", () => {
  const tree = plan();
  const delta = change(tree, (t) => createTask(t, { id: "d", name: "Docs", parentId: "plan" }));
  const entry = historyEntry(tree, delta, {
    revision: 4,
    tool: "create_task",
    at: "2026-11-26T07:00:00.000Z",
  });
  assert.deepEqual(entry, {
    revision: 4,
    at: "2026-11-26T07:00:00.000Z",
    tool: "create_task",
    summary: 'added 1: "Docs"',
    delta,
  });
  assert.deepEqual(RecordedChangeSchema.parse(entry), entry);
});

Deno.test("a delete records every removed task as it was", () => {
  const tree = plan();
  const delta = change(tree, (t) => deleteTask(t, "b"));
  const removed = delta.filter((i) => i.f && !tree.get(i.id)).map((i) => i.id).sort();
  assert.deepEqual(removed, ["b", "b1", "b2"]);
  assert.deepEqual(delta.find((i) => i.id === "b")?.k, ["b1", "b2"]);
  assert.match(summarize(tree, delta), /^removed 3: "Build", "Code", "Review"/);
});

Deno.test("a change that changes nothing records nothing", () => {
  const tree = plan();
  assert.deepEqual(change(tree, (t) => updateTask(t, { id: "c", name: "Release" })), []);
  assert.deepEqual(change(tree, () => undefined), []);
});

Deno.test("a plan wiped by update_tasks comes back with its ids, statuses, resolutions and criteria", () => {
  const tree = plan();
  const before = structuredClone(tree.roots);
  const wipe = change(tree, (t) => updateTasks(t, "/", [{ taskId: "new", description: "Oops" }]));
  assert.equal(tree.size, 1);
  assert.deepEqual(pastRoots(tree, [wipe]), before);
  const restored = tree.transact((t) => restoreTree(t, [wipe]));
  assert.deepEqual(tree.roots, before);
  assert.deepEqual(restored.result, {
    added: 6,
    removed: 1,
    changed: 0,
    notes: ['"Code" (b1) is in progress again.'],
  });
  assert.deepEqual(invariantViolations(tree), []);
  assert.deepEqual(recount(tree).indexProblems, []);
});

Deno.test("a restore is a change of its own: restoring the revision before it undoes it", () => {
  const tree = plan();
  const history: Delta[] = [];
  history.push(change(tree, (t) => completeTask(t, "b1", "coded")));
  const afterComplete = structuredClone(tree.roots);
  history.push(change(tree, (t) => deleteTask(t, "b")));
  const afterDelete = structuredClone(tree.roots);
  // Restore the revision before both changes.
  const { changes } = tree.transact((t) => restoreTree(t, [history[1]!, history[0]!]));
  const restore = recordChange(tree, changes);
  assert.equal(tree.get("b1")?.status, "in_progress");
  assert.equal(tree.get("b1")?.resolution, undefined);
  // The restore's own record is small: the tasks that differ, not the tree.
  assert.ok(restore.length <= 6, JSON.stringify(restore));
  // Undo the restore: back to the tree after the delete.
  const undo = change(tree, (t) => restoreTree(t, [restore]));
  assert.deepEqual(tree.roots, afterDelete);
  // And further back, across the restore and its undo.
  tree.transact((t) => restoreTree(t, [undo, restore, history[1]!]));
  assert.deepEqual(tree.roots, afterComplete);
});

Deno.test("restoring a revision with another leaf in progress puts the current one back and says so", () => {
  const tree = plan();
  const complete = change(tree, (t) => completeTask(t, "b1", "coded"));
  const start = change(tree, (t) => startTask(t, "b2"));
  const { result } = tree.transact((t) => restoreTree(t, [start, complete]));
  assert.equal(tree.get("b1")?.status, "in_progress");
  assert.equal(tree.get("b2")?.status, "todo");
  assert.deepEqual(result.notes, [
    '"Review" (b2) was in progress and is back to todo.',
    '"Code" (b1) is in progress again.',
  ]);
});

Deno.test("a history that does not fit the tree is refused and changes nothing", () => {
  const tree = plan();
  const before = structuredClone(tree.roots);
  const bogus: Delta = [{ id: "", k: ["plan", "ghost"] }];
  assert.throws(() => tree.transact((t) => restoreTree(t, [bogus])), isCode("INVALID_INPUT"));
  assert.deepEqual(tree.roots, before);
});

Deno.test("checkRestorable names the oldest revision kept", () => {
  const window = { current: 120, oldest: 21, historySize: 100 };
  checkRestorable(21, window);
  checkRestorable(120, window);
  for (const r of [0, 20, 121]) {
    assert.throws(() => checkRestorable(r, window), (e) => {
      assert.ok(e instanceof DomainError && e.code === "NOT_FOUND");
      assert.match(e.message, /oldest kept is 21/);
      return true;
    });
  }
  assert.throws(
    () => checkRestorable(1, { current: 0, oldest: undefined, historySize: 100 }),
    /no revisions yet/,
  );
  assert.throws(
    () => checkRestorable(1, { current: 5, oldest: undefined, historySize: 0 }),
    /HISTORY_SIZE=0/,
  );
  assert.throws(
    () => checkRestorable(3, { current: 5, oldest: undefined, historySize: 100 }),
    /no revision of this session is kept \(it is at revision 5\)/,
  );
});

Deno.test("keepLast keeps the newest entries up to the size, none at 0", () => {
  const entry = (revision: number): RecordedChange => ({
    revision,
    at: "",
    tool: "t",
    summary: "",
    delta: [],
  });
  let kept: RecordedChange[] = [];
  for (let r = 1; r <= 5; r++) kept = keepLast(kept, entry(r), 3);
  assert.deepEqual(kept.map((e) => e.revision), [3, 4, 5]);
  assert.deepEqual(keepLast(kept, entry(6), 0), []);
});

Deno.test("random change sequences: restoring revision r gives exactly the tree after r, and undoing the restore gives it back", () => {
  let restores = 0;
  fc.assert(
    fc.property(
      newTask(3),
      fc.array(command, { minLength: 1, maxLength: 30 }),
      fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
      (first, rest, picks) => {
        const tree = new TaskTree();
        const trees: Task[][] = [[]]; // trees[r]: the roots right after revision r
        const deltas: Delta[] = [undefined as never]; // deltas[r]: what revision r did
        const commit = (fn: (t: TaskTree) => unknown) => {
          let delta: Delta;
          try {
            delta = change(tree, fn);
          } catch (error) {
            if (error instanceof DomainError) return;
            throw error;
          }
          if (delta.length === 0) return;
          deltas.push(delta);
          trees.push(structuredClone(tree.roots));
          assert.deepEqual(tree.roots, trees.at(-1));
        };
        commit((t) => createTask(t, first));
        for (const cmd of rest) commit((t) => runCommand(t, cmd));
        for (const pick of picks) {
          const current = trees.length - 1;
          const r = pick % (current + 1);
          const since = deltas.slice(r + 1).reverse();
          assert.deepEqual(pastRoots(tree, since), trees[r], `pastRoots ${r} of ${current}`);
          commit((t) => restoreTree(t, since));
          restores++;
          assert.deepEqual(tree.roots, trees[r], `restore ${r} of ${current}`);
          assert.deepEqual(invariantViolations(tree), []);
          const again = recount(tree);
          assert.deepEqual(again.indexProblems, []);
          assert.deepEqual({ ...tree.counts }, again.counts);
          // Undo the restore: the revision before it comes back.
          if (trees.length - 1 > current) {
            commit((t) => restoreTree(t, [deltas.at(-1)!]));
            assert.deepEqual(tree.roots, trees[current], `undo of restore ${r}`);
          }
        }
      },
    ),
    { numRuns: 300, seed: 13 },
  );
  assert.ok(restores > 500, `${restores} restores`);
});
