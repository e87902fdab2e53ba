import assert from "node:assert/strict";
import { leaseRenewed, recordChange, restoreTree, summarize } from "../../lib/domain/history.ts";
import { markDone, updateTasks } from "../../lib/domain/checklist.ts";
import { invariantViolations, repairInvariants } from "../../lib/domain/invariants.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { taskTable } from "../../lib/domain/task_table.ts";
import {
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { renderSession } from "../../lib/domain/tree_text.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { refuses, run, task } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const MIN = 60_000;

function as(agent: string | undefined, now = T0, leaseSeconds?: number): Actor {
  return { agent, now, leaseSeconds };
}

function named(agent: string, now = T0, leaseSeconds?: number): Actor & { agent: string } {
  return { agent, now, leaseSeconds };
}

/** A parallel root P with leaves a, b, c, then a sequential root S with s1, s2. */
function teamTree(): TaskTree {
  const p = { ...task("P", task("a"), task("b"), task("c")), parallel: true };
  return new TaskTree([p, task("S", task("s1"), task("s2"))]);
}

Deno.test("two agents start two leaves of a parallel parent; each keeps its own", () => {
  const tree = teamTree();
  run(tree, (t) => startTask(t, "b", as("x")));
  run(tree, (t) => startTask(t, "c", as("y")));
  assert.equal(tree.get("b")!.status, "in_progress");
  assert.equal(tree.get("c")!.status, "in_progress");
  assert.equal(tree.get("b")!.claim?.agent, "x");
  assert.equal(tree.get("c")!.claim?.agent, "y");
  assert.equal(tree.get("c")!.claim?.expires_at, new Date(T0 + 1800_000).toISOString());
  // Starting another leaf puts back only the same agent's leaf.
  run(tree, (t) => startTask(t, "a", as("x")));
  assert.equal(tree.get("b")!.status, "todo");
  assert.equal(tree.get("b")!.claim, undefined);
  assert.equal(tree.get("c")!.status, "in_progress");
  assert.deepEqual(invariantViolations(tree), []);
});

Deno.test("the order rule still holds under a sequential parent and at root level", () => {
  const tree = teamTree();
  refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "s2", as("x")));
  refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "S", as("x")));
});

Deno.test("a live claim refuses every other agent (the anonymous one included) with CLAIMED; the holder may do all", async (t) => {
  const tree = teamTree();
  run(tree, (tr) => startTask(tr, "a", as("x")));
  const later = T0 + MIN;
  await t.step("start", () => {
    const error = refuses(tree, "CLAIMED", (tr) => startTask(tr, "a", as("y", later)));
    assert.match(error.message, /agent "x" holds it until 2026-01-01T00:30:00.000Z/);
  });
  await t.step(
    "complete",
    () => void refuses(tree, "CLAIMED", (tr) => completeTask(tr, "a", "r", as("y", later))),
  );
  await t.step(
    "complete by the anonymous agent",
    () => void refuses(tree, "CLAIMED", (tr) => completeTask(tr, "a", "r", as(undefined, later))),
  );
  await t.step(
    "status change",
    () => void refuses(tree, "CLAIMED", (tr) => updateTask(tr, { id: "a", status: "todo" }, as("y", later))),
  );
  await t.step("delete the leaf or a subtree holding it", () => {
    refuses(tree, "CLAIMED", (tr) => deleteTask(tr, "a", as("y", later)));
    refuses(tree, "CLAIMED", (tr) => deleteTask(tr, "P", as(undefined, later)));
  });
  await t.step("checklist: replace it away, or mark it done", () => {
    refuses(
      tree,
      "CLAIMED",
      (tr) => updateTasks(tr, "/P/", [{ taskId: "b", description: "B" }], as("y", later)),
    );
    const marked = run(tree, (tr) => ({ ...markDone(tr, ["a", "b"], as("y", later)) }));
    assert.deepEqual(marked.marked, ["b"]);
    assert.equal(marked.failed[0]!.code, "CLAIMED");
    assert.equal(tree.get("a")!.status, "in_progress");
  });
  await t.step("editing its text stays allowed", () => {
    run(tree, (tr) => updateTask(tr, { id: "a", description: "more detail" }, as("y", later)));
    assert.equal(tree.get("a")!.description, "more detail");
  });
  await t.step("the holder completes it, which drops the claim", () => {
    run(tree, (tr) => completeTask(tr, "a", "done", as("x", later)));
    assert.equal(tree.get("a")!.status, "done");
    assert.equal(tree.get("a")!.claim, undefined);
  });
});

Deno.test("an expired lease protects nothing: another agent takes the leaf over", () => {
  const tree = teamTree();
  run(tree, (t) => startTask(t, "a", as("x", T0, 60)));
  const after = T0 + 60_000; // the lease is live while now < expires_at
  const started = run(tree, (t) => startTask(t, "a", as("y", after)));
  assert.equal(started.taken_over_from, "x");
  assert.equal(tree.get("a")!.claim?.agent, "y");
  assert.equal(tree.get("a")!.status, "in_progress");
  const claimed = run(tree, (t) => claimTask(t, named("x", after)));
  assert.equal(claimed.task?.id, "b", "x gets other work, not its lost leaf");
});

Deno.test("claimTask takes the first ready leaf in tree order, atomically per call, and renews a holder's lease", () => {
  const tree = teamTree();
  const x = run(tree, (t) => claimTask(t, named("x")));
  const y = run(tree, (t) => claimTask(t, named("y")));
  assert.equal(x.task?.id, "a");
  assert.equal(y.task?.id, "b");
  assert.deepEqual(x.claim, tree.get("a")!.claim);
  // A heartbeat: the same leaf, a later lease, the same `since`, and no recorded change.
  const later = T0 + 5 * MIN;
  const { result, changes } = tree.transact((t) => claimTask(t, named("x", later)));
  assert.equal(result.task?.id, "a");
  assert.equal(result.renewed, true);
  assert.match(
    result.message,
    /^"Task a" \(a\) is still yours \(agent "x"\): lease renewed until 2026-01-01T00:35:00.000Z\./,
  );
  assert.equal(tree.get("a")!.claim!.since, x.claim!.since);
  assert.equal(tree.get("a")!.claim!.expires_at, new Date(later + 1800_000).toISOString());
  assert.deepEqual(recordChange(tree, changes), [], "a renewal adds no revision");
  assert.equal(leaseRenewed(tree, changes), true, "but the store must write it");
});

Deno.test("claimTask with nothing ready answers task null, with who holds what and what is blocked", () => {
  const tree = new TaskTree([
    { ...task("P", task("a"), { ...task("b"), blocked_by: ["a"] }), parallel: true },
  ]);
  run(tree, (t) => claimTask(t, named("x")));
  const none = run(tree, (t) => claimTask(t, named("y", T0 + MIN)));
  assert.equal(none.task, null);
  assert.deepEqual(none.waiting_on, [{
    id: "a",
    name: "Task a",
    agent: "x",
    expires_at: new Date(T0 + 1800_000).toISOString(),
  }]);
  assert.deepEqual(none.blocked, [{ id: "b", name: "Task b", blocked_by: ["a"] }]);
});

Deno.test("claimTask within an id claims only under it; a held parent's order still applies", () => {
  const tree = teamTree();
  const s = run(tree, (t) => claimTask(t, named("x"), "P"));
  assert.equal(s.task?.id, "a");
  const none = run(tree, (t) => claimTask(t, named("y"), "S"));
  assert.equal(none.task, null, "S waits for the root before it");
});

Deno.test("blockers: own and inherited ones refuse a start, naming them; done blockers free the task", () => {
  const tree = new TaskTree([
    {
      ...task("R", task("api"), { ...task("ui", task("ui1")), blocked_by: ["api"] }, task("docs")),
      parallel: true,
    },
  ]);
  const own = refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "ui", as("x")));
  assert.match(own.message, /blocked by "Task api" \(api\)/);
  refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => startTask(t, "ui1", as("x")));
  refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => completeTask(t, "ui1", "r", as("x")));
  run(tree, (t) => startTask(t, "api", as("x")));
  run(tree, (t) => completeTask(t, "api", "r", as("x")));
  assert.equal(run(tree, (t) => startTask(t, "ui", as("x"))).task.id, "ui1");
});

Deno.test("blocked_by graph: unknown id NOT_FOUND; self, ancestor, descendant and cycles INVALID_INPUT naming the cycle", async (t) => {
  const tree = new TaskTree([
    { ...task("R", task("a", task("a1")), task("b"), task("c")), parallel: true },
  ]);
  await t.step(
    "unknown",
    () => void refuses(tree, "NOT_FOUND", (tr) => updateTask(tr, { id: "a", blocked_by: ["zz"] })),
  );
  await t.step("self", () => {
    const e = refuses(tree, "INVALID_INPUT", (tr) => updateTask(tr, { id: "a", blocked_by: ["a"] }));
    assert.match(e.message, /cycle a -> a/);
  });
  await t.step(
    "ancestor",
    () => void refuses(tree, "INVALID_INPUT", (tr) => updateTask(tr, { id: "a1", blocked_by: ["R"] })),
  );
  await t.step(
    "descendant",
    () => void refuses(tree, "INVALID_INPUT", (tr) => updateTask(tr, { id: "a", blocked_by: ["a1"] })),
  );
  await t.step("a cycle through two links", () => {
    run(tree, (tr) => updateTask(tr, { id: "b", blocked_by: ["c"] }));
    const e = refuses(tree, "INVALID_INPUT", (tr) => updateTask(tr, { id: "c", blocked_by: ["b"] }));
    assert.match(e.message, /c -> b -> c/);
  });
  await t.step("a cycle through a parent: waiting for a parent waits for its subtasks", () => {
    run(tree, (tr) => updateTask(tr, { id: "a1", blocked_by: ["c"] }));
    const e = refuses(tree, "INVALID_INPUT", (tr) => updateTask(tr, { id: "c", blocked_by: ["a"] }));
    assert.match(e.message, /c -> a -> a1/);
  });
  await t.step("createTask may name ids of the same call, and is refused whole on a cycle", () => {
    run(tree, (tr) =>
      createTask(tr, {
        name: "Plan",
        parallel: true,
        tasks: [{ id: "x", name: "X", blocked_by: ["y"] }, { id: "y", name: "Y" }],
      }));
    assert.deepEqual(tree.get("x")!.blocked_by, ["y"]);
    refuses(tree, "INVALID_INPUT", (tr) =>
      createTask(tr, {
        name: "Bad",
        tasks: [{ id: "p", name: "P", blocked_by: ["q"] }, { id: "q", name: "Q", blocked_by: ["p"] }],
      }));
  });
});

Deno.test("deleting a blocker removes it from every blocked_by and says which tasks that freed", () => {
  const tree = new TaskTree([
    {
      ...task("R", task("a", task("a1")), { ...task("b"), blocked_by: ["a1", "c"] }, task("c")),
      parallel: true,
    },
  ]);
  const result = run(tree, (t) => deleteTask(t, "a"));
  assert.deepEqual(result.freed, ["b"]);
  assert.deepEqual(tree.get("b")!.blocked_by, ["c"]);
  assert.deepEqual(tree.dependentsOf("a1"), []);
  const again = run(tree, (t) => deleteTask(t, "c"));
  assert.deepEqual(again.freed, ["b"]);
  assert.equal(tree.get("b")!.blocked_by, undefined);
});

Deno.test("a started task never gains an unfinished blocker, and its done blocker cannot be reopened under it", () => {
  const tree = new TaskTree([{ ...task("R", task("a"), task("b")), parallel: true }]);
  run(tree, (t) => startTask(t, "b", as("x")));
  refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => updateTask(t, { id: "b", blocked_by: ["a"] }));
  run(tree, (t) => updateTask(t, { id: "b", status: "todo" }, as("x")));
  run(tree, (t) => completeTask(t, "a", "r"));
  run(tree, (t) => updateTask(t, { id: "b", blocked_by: ["a"] }));
  run(tree, (t) => startTask(t, "b", as("x")));
  refuses(tree, "EXECUTION_ORDER_VIOLATION", (t) => updateTask(t, { id: "a", status: "todo" }));
});

Deno.test("making a parent sequential is refused while its subtasks run out of order", () => {
  const tree = teamTree();
  run(tree, (t) => startTask(t, "b", as("x")));
  refuses(tree, "INVALID_INPUT", (t) => updateTask(t, { id: "P", parallel: false }));
});

Deno.test("completeTask by an agent names a ready leaf that no other agent holds", () => {
  const tree = teamTree();
  run(tree, (t) => claimTask(t, named("x")));
  run(tree, (t) => claimTask(t, named("y")));
  const done = run(tree, (t) => completeTask(t, "a", "r", as("x")));
  assert.equal(done.next_task_id, "c", "b is held by y");
});

Deno.test("restore_tasks over another agent's live claim is CLAIMED and changes nothing", () => {
  const tree = teamTree();
  const { changes } = tree.transact((t) => startTask(t, "a", as("x")));
  const delta = recordChange(tree, changes);
  refuses(tree, "CLAIMED", (t) => restoreTree(t, [delta], as("y", T0 + MIN)));
  run(tree, (t) => restoreTree(t, [delta], as("x", T0 + MIN)));
  assert.equal(tree.get("a")!.status, "todo");
});

Deno.test("without agents nothing changes: one leaf in progress per session, no claims, the old table", () => {
  const tree = teamTree();
  run(tree, (t) => startTask(t, "a"));
  run(tree, (t) => startTask(t, "b"));
  assert.equal(tree.get("a")!.status, "todo");
  assert.equal(tree.get("b")!.claim, undefined);
  assert.doesNotMatch(taskTable(tree).table, /Agent/);
});

Deno.test("the tree text and the table show the holder, stale claims and blocked tasks", () => {
  const tree = new TaskTree([
    { ...task("R", task("a"), { ...task("b"), blocked_by: ["a"] }), parallel: true } as Task,
  ]);
  run(tree, (t) => startTask(t, "a", as("backend", T0, 60)));
  const text = renderSession(tree, T0);
  assert.match(text, /◐ a: Task a @backend$/m);
  assert.match(text, /○ b: Task b \(blocked by a\)$/m);
  assert.match(renderSession(tree, T0 + MIN), /@backend \(lease expired\)/);
  const table = taskTable(tree).table;
  assert.match(table, /\| Task \| ID \| Parent \| Status \| Agent \|/);
  assert.match(table, /\| a \| R \| in_progress \| backend \|/);
  assert.match(table, /\| b \| R \| todo, blocked \| {2}\|/);
});

Deno.test("update_tasks that moves a blocker under the task waiting for it is refused, naming the link", () => {
  const tree = new TaskTree([
    { ...task("R", task("a"), { ...task("b"), blocked_by: ["a"] }), parallel: true },
  ]);
  const error = refuses(
    tree,
    "INVALID_INPUT",
    (t) =>
      updateTasks(t, "/R/", [{
        taskId: "b",
        description: "B",
        children: [{ taskId: "a", description: "A" }],
      }]),
  );
  assert.match(error.message, /blocked_by of "b" names its own subtask "a"/);
});

Deno.test("update_tasks that replaces a blocker away frees the tasks that waited for it", () => {
  const tree = new TaskTree([
    { ...task("R", task("a"), { ...task("b"), blocked_by: ["a"] }), parallel: true },
  ]);
  run(tree, (t) => updateTasks(t, "/R/", [{ taskId: "b", description: "B" }]));
  assert.equal(tree.get("b")!.blocked_by, undefined);
  assert.deepEqual(tree.blockedTasks(), []);
});

Deno.test("history says who took a task: a start by an agent and a takeover name it", () => {
  const tree = teamTree();
  const first = tree.transact((t) => startTask(t, "a", as("x", T0, 60)));
  assert.match(summarize(tree, recordChange(tree, first.changes)), /"Task a" in_progress by x/);
  const over = tree.transact((t) => startTask(t, "a", as("y", T0 + MIN)));
  assert.match(summarize(tree, recordChange(tree, over.changes)), /"Task a" taken over by y/);
});

Deno.test("a claim lives only on a leaf in progress: gaining a subtask or leaving in_progress drops it", () => {
  const tree = teamTree();
  run(tree, (t) => startTask(t, "a", as("x")));
  run(tree, (t) => createTask(t, { parentId: "a", name: "sub" }));
  assert.equal(tree.get("a")!.claim, undefined);
  run(tree, (t) => startTask(t, "b", as("x")));
  run(
    tree,
    (t) =>
      updateTasks(t, "/P/", [{ taskId: "a", description: "A" }, {
        taskId: "b",
        description: "B",
        status: "DONE",
      }, { taskId: "c", description: "C" }], as("x")),
  );
  assert.equal(tree.get("b")!.status, "done");
  assert.equal(tree.get("b")!.claim, undefined);
  assert.deepEqual(invariantViolations(tree), []);
});

Deno.test("a tree written elsewhere is repaired at load: one leaf per agent, claims only on leaves in progress", () => {
  const claim = (agent: string) => ({
    agent,
    since: "2026-01-01T00:00:00.000Z",
    expires_at: "2026-01-01T00:30:00.000Z",
  });
  const tree = new TaskTree([{
    ...task(
      "P",
      { ...task("a"), status: "in_progress", claim: claim("x") },
      { ...task("b"), status: "in_progress", claim: claim("x") },
      { ...task("c"), status: "in_progress", claim: claim("y") },
      { ...task("d"), claim: claim("z") },
    ),
    status: "in_progress",
    parallel: true,
  }]);
  const fixes = run(tree, (t) => repairInvariants(t));
  assert.equal(fixes.length, 2, fixes.join("; "));
  assert.deepEqual(tree.activeLeaves().map((t) => t.id).sort(), ["a", "c"]);
  assert.equal(tree.get("b")!.claim, undefined);
  assert.equal(tree.get("d")!.claim, undefined);
  assert.deepEqual(invariantViolations(tree), []);
});
