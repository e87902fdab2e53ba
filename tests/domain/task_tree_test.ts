import assert from "node:assert/strict";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { derivedStatus, heightOf } from "../../lib/domain/task_tree.ts";
import { isCode, recount, snapshot, task, treeOf } from "../support/trees.ts";

function sample(): TaskTree {
  const tree = treeOf(task("a", task("a1"), task("a2", task("a2x"))), task("b"));
  return tree;
}

Deno.test("TaskTree indexes every task with its parent", () => {
  const tree = sample();
  assert.equal(tree.size, 5);
  assert.equal(tree.get("a2x")?.name, "Task a2x");
  assert.equal(tree.parentOf(tree.get("a2x")!)?.id, "a2");
  assert.equal(tree.parentOf(tree.get("a")!), undefined);
  assert.deepEqual(tree.pathTo(tree.get("a2x")!).map((t) => t.id), ["a", "a2", "a2x"]);
  assert.deepEqual(tree.siblingsOf(tree.get("a1")!).map((t) => t.id), ["a1", "a2"]);
  assert.equal(tree.siblingsOf(tree.get("b")!), tree.roots);
  assert.deepEqual([...tree.walk()].map(({ task, depth }) => `${task.id}@${depth}`), [
    "a@0",
    "a1@1",
    "a2@1",
    "a2x@2",
    "b@0",
  ]);
  assert.equal(tree.get("missing"), undefined);
});

Deno.test("TaskTree.require names the missing id with NOT_FOUND", () => {
  const tree = sample();
  assert.throws(
    () => tree.require("nope"),
    (e) => isCode("NOT_FOUND")(e) && /"nope"/.test((e as Error).message),
  );
});

Deno.test("TaskTree counts statuses and in-progress leaves from a loaded tree", () => {
  const a1 = { ...task("a1"), status: "done" as const };
  const a2 = { ...task("a2"), status: "in_progress" as const };
  const tree = new TaskTree([{ ...task("a", a1, a2), status: "in_progress" }, task("b")]);
  assert.deepEqual({ ...tree.counts }, { todo: 1, in_progress: 2, done: 1 });
  assert.deepEqual(tree.activeLeaves().map((t) => t.id), ["a2"]);
});

Deno.test("TaskTree refuses duplicate ids", async (t) => {
  await t.step("across roots", () => {
    assert.throws(() => new TaskTree([task("x"), task("x")]), isCode("DUPLICATE_ID"));
  });
  await t.step("deep inside one root", () => {
    assert.throws(() => new TaskTree([task("x", task("y", task("x")))]), isCode("DUPLICATE_ID"));
  });
  await t.step("on insert, leaving the tree unchanged", () => {
    const tree = sample();
    const before = snapshot(tree);
    assert.throws(
      () => tree.transact((t) => t.insert(undefined, 0, task("new", task("a2x")))),
      isCode("DUPLICATE_ID"),
    );
    assert.deepEqual(snapshot(tree), before);
    assert.equal(tree.get("new"), undefined);
  });
});

Deno.test("TaskTree primitives keep counters and the active-leaf set in step", async (t) => {
  await t.step("setStatus", () => {
    const tree = sample();
    tree.transact((t) => t.setStatus(t.get("a1")!, "in_progress"));
    assert.deepEqual({ ...tree.counts }, { todo: 4, in_progress: 1, done: 0 });
    assert.deepEqual(tree.activeLeaves().map((x) => x.id), ["a1"]);
    assert.deepEqual(recount(tree).counts, { ...tree.counts });
  });
  await t.step("a leaf in progress that gains a child stops being an active leaf", () => {
    const tree = sample();
    tree.transact((t) => t.setStatus(t.get("b")!, "in_progress"));
    tree.transact((t) => t.insert(t.get("b"), 0, task("b1")));
    assert.deepEqual(tree.activeLeaves(), []);
    assert.equal(tree.size, 6);
    assert.equal(tree.parentOf(tree.get("b1")!)?.id, "b");
  });
  await t.step("remove takes the subtree out of index and counters", () => {
    const tree = sample();
    const removed = tree.transact((t) => t.remove(t.get("a2")!)).result;
    assert.equal(removed, 2);
    assert.equal(tree.size, 3);
    assert.equal(tree.get("a2x"), undefined);
    assert.deepEqual(recount(tree), {
      size: 3,
      counts: { ...tree.counts },
      active: [],
      indexProblems: [],
    });
  });
  await t.step("settleFrom derives parents from their children", () => {
    const tree = sample();
    tree.transact((t) => {
      t.setStatus(t.get("a2x")!, "done");
      t.settleFrom(t.get("a2"));
    });
    assert.equal(tree.get("a2")!.status, "done");
    assert.equal(tree.get("a")!.status, "todo");
  });
  await t.step("changing a tree outside a transaction is refused", () => {
    const tree = sample();
    assert.throws(() => tree.setStatus(tree.get("b")!, "done"), isCode("INVALID_INPUT"));
    assert.equal(tree.get("b")!.status, "todo");
  });
});

Deno.test("TaskTree.transact rolls back exactly on throw", async (t) => {
  await t.step("every kind of change", () => {
    const tree = sample();
    tree.transact((t) => {
      t.setStatus(t.get("a1")!, "done");
      t.setStatus(t.get("a2x")!, "in_progress");
      t.settleFrom(t.get("a2"));
      t.setField(t.get("b")!, "resolution", "kept");
    });
    const before = snapshot(tree);
    assert.throws(() =>
      tree.transact((t) => {
        t.setField(t.get("a")!, "name", "renamed");
        t.setField(t.get("b")!, "resolution", undefined);
        t.setField(t.get("a1")!, "completion_criteria", ["c"]);
        t.setStatus(t.get("a2x")!, "todo");
        t.settleFrom(t.get("a2"));
        t.insert(t.get("b"), 0, task("b1", task("b1x")));
        t.remove(t.get("a2")!);
        t.insert(undefined, 0, task("r0"));
        t.remove(t.get("a1")!);
        t.setStatus(t.get("b1x")!, "in_progress");
        throw new Error("boom");
      }), /boom/);
    assert.deepEqual(snapshot(tree), before);
    assert.deepEqual(before.active, ["a2x"]);
    assert.equal(tree.get("b1"), undefined);
    assert.equal(tree.parentOf(tree.get("a2x")!)?.id, "a2");
    assert.deepEqual(recount(tree).indexProblems, []);
  });
  await t.step("a removed field that was absent stays absent", () => {
    const tree = sample();
    assert.throws(() =>
      tree.transact((t) => {
        t.setField(t.get("a")!, "constraints", ["x"]);
        throw new Error("boom");
      })
    );
    assert.equal(Object.hasOwn(tree.get("a")!, "constraints"), false);
  });
  await t.step("a removed field comes back in its place: the task serializes as it did", () => {
    const tree = treeOf({
      ...task("a"),
      status: "in_progress",
      claim: { agent: "ann", since: "s", expires_at: "e" },
    });
    tree.transact((t) => t.setField(t.get("a")!, "notes", [{ agent: "ann", at: "t", text: "!" }]));
    const before = JSON.stringify(tree.roots);
    assert.throws(() =>
      tree.transact((t) => {
        t.setField(t.get("a")!, "claim", undefined);
        t.setField(t.get("a")!, "notes", undefined);
        t.setField(t.get("a")!, "resolution", "r");
        throw new Error("boom");
      }), /boom/);
    assert.equal(JSON.stringify(tree.roots), before);
  });
  await t.step("a committed transaction can still be rolled back by its store", () => {
    const tree = sample();
    const before = snapshot(tree);
    const { rollback, changes } = tree.transact((t) => {
      t.remove(t.get("b")!);
      t.setStatus(t.get("a1")!, "in_progress");
      t.settleFrom(t.get("a"));
    });
    assert.equal(changes.rootsChanged, true);
    assert.deepEqual([...changes.removed], ["b"]);
    assert.deepEqual(changes.statusBefore.get("a1"), "todo");
    rollback();
    assert.deepEqual(snapshot(tree), before);
  });
  await t.step("transactions do not nest", () => {
    const tree = sample();
    assert.throws(() => tree.transact(() => tree.transact(() => 1)), /already open/);
    // The outer one rolled back and closed: the tree is usable again.
    assert.equal(tree.transact(() => 2).result, 2);
  });
});

Deno.test("derivedStatus and heightOf", () => {
  const done = { ...task("d"), status: "done" as const };
  const active = { ...task("p"), status: "in_progress" as const };
  assert.equal(derivedStatus(task("x", done, done)), "done");
  assert.equal(derivedStatus(task("x", done, task("t"))), "todo");
  assert.equal(derivedStatus(task("x", task("t"), active)), "in_progress");
  assert.equal(derivedStatus(active), "in_progress");
  assert.equal(heightOf(task("x")), 1);
  assert.equal(heightOf(task("x", task("y"), task("z", task("w")))), 3);
});
