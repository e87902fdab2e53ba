/**
 * Paths on tasks and the reservations of live claims (docs/teams.md "Paths and reservations"), on the
 * domain alone with a controlled clock: each rule, and each refusal changing nothing.
 */
import assert from "node:assert/strict";
import { recordChange, restoreTree } from "../../lib/domain/history.ts";
import { updateTasks } from "../../lib/domain/checklist.ts";
import { liveReservations, pathConflicts, pathsOf } from "../../lib/domain/reservations.ts";
import type { NewTask } from "../../lib/domain/schemas.ts";
import {
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  listTasks,
  startTask,
  updateTask,
  viewOf,
} from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { refuses, run } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const MIN = 60_000;

function as(agent: string | undefined, now = T0, leaseSeconds?: number): Actor {
  return { agent, now, leaseSeconds };
}

function named(agent: string, now = T0, leaseSeconds?: number): Actor & { agent: string } {
  return { agent, now, leaseSeconds };
}

/**
 * A parallel plan: `api` (paths src/api/, inherited by its leaves a1, a2 unless they have their own),
 * `users` (src/api/users.ts), `web` (src/web/**), `docs` (none).
 */
function plan(extra: NewTask[] = []): TaskTree {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "P",
      name: "Plan",
      parallel: true,
      tasks: [
        {
          id: "api",
          name: "API",
          parallel: true,
          paths: ["src/api/"],
          tasks: [{ id: "a1", name: "Routes" }, { id: "a2", name: "Schema", paths: ["./src/api/schema.ts"] }],
        },
        { id: "users", name: "Users", paths: ["src/api/users.ts"] },
        { id: "web", name: "Web", paths: ["src/web/**", "docs/web.md"] },
        { id: "docs", name: "Docs" },
        ...extra,
      ],
    }));
  return tree;
}

Deno.test("paths are stored normalised on nested tasks; a leaf's paths are its own, else its nearest ancestor's", () => {
  const tree = plan();
  assert.deepEqual(tree.get("api")!.paths, ["src/api/**"]);
  assert.deepEqual(tree.get("a2")!.paths, ["src/api/schema.ts"]);
  assert.equal(tree.get("a1")!.paths, undefined);
  assert.deepEqual(pathsOf(tree, tree.get("a1")!), ["src/api/**"]);
  assert.deepEqual(pathsOf(tree, tree.get("a2")!), ["src/api/schema.ts"]);
  assert.deepEqual(pathsOf(tree, tree.get("docs")!), []);
  const api = listTasks(tree, "P").find((t) => t.id === "api")!;
  assert.deepEqual(api.paths, ["src/api/**"], "listTasks carries paths");
  assert.deepEqual(viewOf(tree, tree.get("web")!).paths, ["src/web/**", "docs/web.md"]);
});

Deno.test("an invalid or oversized pattern refuses the whole createTask or updateTask, naming it; [] clears", () => {
  const tree = plan();
  const error = refuses(tree, "INVALID_INPUT", (t) =>
    createTask(t, {
      name: "x",
      parentId: "P",
      tasks: [{ name: "ok", paths: ["src/ok.ts"] }, { name: "bad", paths: ["src/../etc"] }],
    }));
  assert.match(error.message, /"src\/\.\.\/etc"/);
  refuses(tree, "INVALID_INPUT", (t) => updateTask(t, { id: "docs", paths: ["/abs"] }));
  refuses(
    tree,
    "LIMIT_EXCEEDED",
    (t) => updateTask(t, { id: "docs", paths: Array.from({ length: 33 }, (_, i) => `f${i}`) }),
  );
  run(tree, (t) => updateTask(t, { id: "docs", paths: ["docs/", "README.md"] }));
  assert.deepEqual(tree.get("docs")!.paths, ["docs/**", "README.md"]);
  run(tree, (t) => updateTask(t, { id: "docs", paths: ["CHANGELOG.md"] }));
  assert.deepEqual(tree.get("docs")!.paths, ["CHANGELOG.md"], "replaces the list");
  const { changes } = tree.transact((t) => updateTask(t, { id: "docs", paths: [] }));
  assert.equal(tree.get("docs")!.paths, undefined, "[] clears them");
  assert.equal(recordChange(tree, changes).length, 1, "a change of paths is a change in history");
});

Deno.test("a live claim of a named agent reserves its leaf's paths; an expired or anonymous one reserves nothing", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "a1", as("x", T0, 60)));
  run(tree, (t) => startTask(t, "web", as(undefined)));
  const now = liveReservations(tree, { now: T0 });
  assert.deepEqual(now.map((r) => [r.agent, r.leaf.id, r.paths]), [["x", "a1", ["src/api/**"]]]);
  assert.deepEqual(liveReservations(tree, { now: T0 + 60_000 }), [], "judged on read: expired");
  assert.deepEqual(liveReservations(tree, { now: T0, exclude: (r) => r.agent === "x" }), []);
});

Deno.test("startTask on a leaf whose paths overlap another agent's live reservation is RESERVED, for every agent", async (t) => {
  const tree = plan();
  run(tree, (tr) => startTask(tr, "a1", as("x")));
  for (const agent of ["y", undefined]) {
    await t.step(`as ${agent ?? "the anonymous agent"}`, () => {
      const error = refuses(tree, "RESERVED", (tr) => startTask(tr, "users", as(agent, T0 + MIN)));
      assert.equal(
        error.message,
        'Cannot start "Users" (users): agent "x" reserves src/api/** (task "Routes" (a1), until 2026-01-01T00:30:00.000Z): overlaps src/api/users.ts. Pick another task (claimTask passes over reserved ones), or wait until "a1" is done or its lease expires.',
      );
    });
  }
  await t.step("a leaf without paths, or with paths apart, starts", () => {
    run(tree, (tr) => startTask(tr, "docs", as("y")));
    run(tree, (tr) => startTask(tr, "web", as("z")));
  });
  await t.step("the holder's own other leaf is no conflict: it goes back to todo", () => {
    run(tree, (tr) => startTask(tr, "users", as("x", T0 + MIN)));
    assert.equal(tree.get("a1")!.status, "todo");
    assert.equal(tree.get("users")!.claim?.agent, "x");
  });
  await t.step("an expired reservation holds nothing back", () => {
    run(tree, (tr) => startTask(tr, "a2", as("y", T0 + 31 * MIN)));
    assert.equal(tree.get("a2")!.claim?.agent, "y");
  });
});

Deno.test("completing, putting back or deleting the held leaf ends its reservation", async (t) => {
  for (
    const [what, end] of [
      ["complete", (tr: TaskTree) => void completeTask(tr, "a1", "done", as("x"))],
      ["back to todo", (tr: TaskTree) => void updateTask(tr, { id: "a1", status: "todo" }, as("x"))],
      ["delete", (tr: TaskTree) => void deleteTask(tr, "a1", as("x"))],
    ] as const
  ) {
    await t.step(what, () => {
      const tree = plan();
      run(tree, (tr) => startTask(tr, "a1", as("x")));
      refuses(tree, "RESERVED", (tr) => startTask(tr, "users", as("y")));
      run(tree, end);
      run(tree, (tr) => startTask(tr, "users", as("y")));
    });
  }
});

Deno.test("claimTask takes the first ready leaf whose paths overlap no other agent's live reservation", () => {
  const tree = plan();
  assert.equal(run(tree, (t) => claimTask(t, named("x"))).task?.id, "a1");
  const y = run(tree, (t) => claimTask(t, named("y")));
  assert.equal(y.task?.id, "web", "a2 and users overlap src/api/**, so y passes over them");
  assert.match(y.message, /Reserved for agent "y" while the lease is live: src\/web\/\*\*, docs\/web\.md\./);
  assert.equal(run(tree, (t) => claimTask(t, named("z"))).task?.id, "docs");
  const w = run(tree, (t) => claimTask(t, named("w")));
  assert.equal(w.task, null);
  assert.deepEqual(w.reserved, [
    {
      id: "a2",
      name: "Schema",
      conflicts: [{
        id: "a1",
        agent: "x",
        expires_at: "2026-01-01T00:30:00.000Z",
        pairs: [["src/api/schema.ts", "src/api/**"]],
      }],
    },
    {
      id: "users",
      name: "Users",
      conflicts: [{
        id: "a1",
        agent: "x",
        expires_at: "2026-01-01T00:30:00.000Z",
        pairs: [["src/api/users.ts", "src/api/**"]],
      }],
    },
  ]);
  assert.match(
    w.message,
    /- users "Users": paths reserved by x \(a1, until 2026-01-01T00:30:00\.000Z\): src\/api\/users\.ts ~ src\/api\/\*\*/,
  );
  // x finishes: the reservation ends and w takes the next one.
  run(tree, (t) => completeTask(t, "a1", "done", as("x")));
  assert.equal(run(tree, (t) => claimTask(t, named("w"))).task?.id, "a2");
});

Deno.test("completeTask names as next a leaf that no other agent's reservation keeps", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "a1", as("x")));
  run(tree, (t) => startTask(t, "docs", as("y")));
  const done = run(tree, (t) => completeTask(t, "docs", "done", as("y")));
  assert.equal(done.next_task_id, "web");
});

Deno.test("startTask on a parent passes over a reserved leaf to a free one, and refuses when none is free", () => {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "P",
      name: "P",
      parallel: true,
      tasks: [{ id: "l1", name: "L1", paths: ["a/**"] }, { id: "l2", name: "L2", paths: ["b/**"] }],
    }));
  run(tree, (t) => startTask(t, "l1", as("x")));
  assert.equal(run(tree, (t) => startTask(t, "P", as("y"))).task.id, "l2");
  const other = new TaskTree(structuredClone(tree.roots));
  run(other, (t) => updateTask(t, { id: "l2", status: "todo" }, as("y")));
  run(other, (t) => updateTask(t, { id: "l2", paths: ["a/x.ts"] }, as("y")));
  refuses(other, "RESERVED", (t) => startTask(t, "P", as("y")));
});

Deno.test("updateTask paths: refused when two live claims would then overlap, whoever changes what", async (t) => {
  const setup = () => {
    const tree = plan();
    run(tree, (tr) => startTask(tr, "a1", as("x")));
    run(tree, (tr) => startTask(tr, "web", as("y")));
    return tree;
  };
  await t.step("the caller's own held leaf", () => {
    const tree = setup();
    const error = refuses(
      tree,
      "RESERVED",
      (tr) => updateTask(tr, { id: "web", paths: ["src/**"] }, as("y")),
    );
    assert.match(
      error.message,
      /^Cannot set the paths of "Web" \(web\): agent "x" reserves src\/api\/\*\* \(task "Routes" \(a1\), until 2026-01-01T00:30:00\.000Z\): overlaps src\/\*\* of "Web" \(web\), held by agent "y"/,
    );
    run(tree, (tr) => updateTask(tr, { id: "web", paths: ["src/web/", "src/shared/"] }, as("y")));
    assert.deepEqual(tree.get("web")!.paths, ["src/web/**", "src/shared/**"]);
  });
  await t.step("a parent whose held leaves inherit its paths", () => {
    const tree = setup();
    refuses(tree, "RESERVED", (tr) => updateTask(tr, { id: "api", paths: ["src/web/x.ts"] }, as(undefined)));
    run(tree, (tr) => updateTask(tr, { id: "api", paths: ["src/api/v2/"] }, as(undefined)));
    assert.deepEqual(pathsOf(tree, tree.get("a1")!), ["src/api/v2/**"], "x's reservation follows at once");
  });
  await t.step("another agent's held leaf: allowed when apart, refused when it would overlap", () => {
    const tree = setup();
    run(tree, (tr) => updateTask(tr, { id: "a1", paths: ["src/api/routes.ts"] }, as("lead")));
    refuses(tree, "RESERVED", (tr) => updateTask(tr, { id: "a1", paths: ["docs/"] }, as("lead")));
  });
  await t.step("a leaf nobody holds takes any paths", () => {
    const tree = setup();
    run(tree, (tr) => updateTask(tr, { id: "users", paths: ["src/web/users.ts"] }, as("y")));
  });
});

Deno.test("a lease renewed while live is never refused; one renewed after lapsing is, while others reserve its paths", () => {
  const tree = plan();
  run(tree, (t) => claimTask(t, named("x", T0, 60)));
  assert.equal(run(tree, (t) => claimTask(t, named("x", T0 + 30_000, 60))).renewed, true);
  // x's lease lapses; y takes a leaf overlapping x's paths meanwhile.
  const later = T0 + 2 * MIN;
  assert.equal(run(tree, (t) => startTask(t, "users", as("y", later))).task.id, "users");
  const back = run(tree, (t) => claimTask(t, named("x", later)));
  assert.equal(back.task, null);
  assert.deepEqual(back.reserved?.map((r) => [r.id, r.conflicts.map((c) => c.agent)]), [["a1", ["y"]]]);
  assert.match(back.message, /^Your lease on "Routes" \(a1\) expired at 2026-01-01T00:01:30\.000Z/);
  refuses(tree, "RESERVED", (t) => startTask(t, "a1", as("x", later)));
  run(tree, (t) => completeTask(t, "users", "done", as("y", later)));
  assert.equal(run(tree, (t) => claimTask(t, named("x", later))).renewed, true);
});

Deno.test("a restore that would bring back overlapping reservations is RESERVED and changes nothing", () => {
  const tree = plan();
  // Revision: x holds a1 (src/api/**).
  run(tree, (t) => startTask(t, "a1", as("x")));
  const { changes } = tree.transact((t) => completeTask(t, "a1", "done", as("x")));
  const undoComplete = recordChange(tree, changes);
  run(tree, (t) => startTask(t, "users", as("y", T0 + MIN)));
  refuses(tree, "RESERVED", (t) => restoreTree(t, [undoComplete], as("z", T0 + MIN)));
});

Deno.test("the checklist tools keep a task's paths; a move that would make two claims overlap is RESERVED", () => {
  const tree = plan([{ id: "other", name: "Other", paths: ["src/web/"], tasks: [] }]);
  run(tree, (t) => startTask(t, "a1", as("x")));
  run(tree, (t) =>
    updateTasks(t, "/P/", [
      { taskId: "api", description: "API" },
      { taskId: "users", description: "Users renamed" },
      { taskId: "web", description: "Web" },
      { taskId: "docs", description: "Docs" },
      { taskId: "other", description: "Other" },
    ], as("y")));
  assert.deepEqual(tree.get("users")!.paths, ["src/api/users.ts"]);
  run(tree, (t) => startTask(t, "web", as("y")));
  // Moving y's leaf under api would make it inherit nothing new (it has its own), so that is fine;
  // moving x's a1 under `other` gives it src/web/**, which y reserves.
  const before = structuredClone(tree.roots);
  assert.throws(
    () => tree.transact((t) => updateTasks(t, "/P/other/", [{ taskId: "a1", description: "Routes" }])),
    /agent "y" reserves src\/web\/\*\* .* overlaps src\/web\/\*\* of "Routes" \(a1\), held by agent "x"/,
  );
  assert.deepEqual(tree.roots, before, "nothing changed");
});

Deno.test("pathConflicts: for each path or pattern asked, the live reservations of other agents overlapping it", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "a1", as("x")));
  run(tree, (t) => startTask(t, "web", as("y", T0, 60)));
  const asked = ["src/api/users.ts", "src/", "docs/web.md", "README.md"];
  const all = pathConflicts(tree, asked, { now: T0 });
  assert.deepEqual(all.map((c) => [c.path, c.agent, c.task_id, c.pattern]), [
    ["src/api/users.ts", "x", "a1", "src/api/**"],
    ["src/", "x", "a1", "src/api/**"],
    ["src/", "y", "web", "src/web/**"],
    ["docs/web.md", "y", "web", "docs/web.md"],
  ]);
  assert.equal(all[0]!.task_name, "Routes");
  assert.equal(all[0]!.expires_at, "2026-01-01T00:30:00.000Z");
  const notX = pathConflicts(tree, asked, { now: T0, exclude: (r) => r.agent === "x" });
  assert.deepEqual(notX.map((c) => c.agent), ["y", "y"]);
  assert.deepEqual(
    pathConflicts(tree, asked, { now: T0 + MIN }).map((c) => c.agent),
    ["x", "x"],
    "y's expired",
  );
  assert.throws(() => pathConflicts(tree, ["a//b"], { now: T0 }), /"a\/\/b"/);
});
