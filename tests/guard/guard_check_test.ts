/**
 * The commit guard's decision on the domain alone (docs/guard.md "What it checks"), with a controlled
 * clock: which reservations staged names fall under, which holders are the guard itself, and what a
 * name that is no plain path asks over `--url`.
 */
import assert from "node:assert/strict";
import { recordGit } from "../../lib/domain/git_record.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { matchesPath } from "../../lib/domain/path_patterns.ts";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import {
  isOwnReservation,
  isPlainPath,
  queryPattern,
  recordedWorkTrees,
  stagedConflicts,
} from "../../lib/guard/guard_check.ts";
import { run } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const MIN = 60_000;

/** api (src/api/**) held by backend, recorded in /w/backend; web (src/web/*.ts) held by ui, recorded in /w/ui. */
function held(): TaskTree {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "P",
      name: "Plan",
      parallel: true,
      tasks: [
        { id: "api", name: "Build API", paths: ["src/api/"] },
        { id: "web", name: "Build UI", paths: ["src/web/*.ts"] },
        { id: "odd", name: "Odd names", paths: ["lit/*", "x?y"] },
      ],
    }));
  run(tree, (t) => {
    const actor = { agent: "backend", now: T0, leaseSeconds: 600 };
    startTask(t, "api", actor);
    recordGit(t, t.get("api"), actor, { worktree: "/w/backend", dirty_count: 0 });
  });
  run(tree, (t) => {
    const actor = { agent: "ui", now: T0, leaseSeconds: 1200 };
    startTask(t, "web", actor);
    recordGit(t, t.get("web"), actor, { worktree: "/w/ui", dirty_count: 0 });
  });
  run(tree, (t) => startTask(t, "odd", { agent: "odd", now: T0, leaseSeconds: 60 }));
  return tree;
}

Deno.test("staged names fall under other agents' live reservations, each with the holder's matching pattern", () => {
  const tree = held();
  const staged = ["README.md", "src/api/users.ts", "src/web/app.ts", "src/web/deep/x.ts", "src/api/users.ts"];
  const found = stagedConflicts(tree, staged, { now: T0, self: {} });
  assert.deepEqual(found.map((c) => [c.path, c.agent, c.task_id, c.task_name, c.pattern, c.expires_at]), [
    ["src/api/users.ts", "backend", "api", "Build API", "src/api/**", "2026-01-01T00:10:00.000Z"],
    ["src/web/app.ts", "ui", "web", "Build UI", "src/web/*.ts", "2026-01-01T00:20:00.000Z"],
  ]);
});

Deno.test("an expired claim reserves nothing for the guard", () => {
  const tree = held();
  const staged = ["src/api/users.ts", "src/web/app.ts"];
  assert.deepEqual(stagedConflicts(tree, staged, { now: T0 + 11 * MIN, self: {} }).map((c) => c.agent), [
    "ui",
  ]);
  assert.deepEqual(stagedConflicts(tree, staged, { now: T0 + 21 * MIN, self: {} }), []);
});

Deno.test("the guard's own reservations don't count: by agent, else by the work tree the holder recorded", async (t) => {
  const tree = held();
  const staged = ["src/api/users.ts", "src/web/app.ts"];
  await t.step(
    "--agent or CHECKLIST_AGENT names the guard's agent: only its reservations are left out",
    () => {
      const found = stagedConflicts(tree, staged, { now: T0, self: { agent: "backend" } });
      assert.deepEqual(found.map((c) => c.agent), ["ui"]);
      // A named agent wins over the work tree: the work tree rule is for when no agent is named.
      const named = stagedConflicts(tree, staged, {
        now: T0,
        self: { agent: "someone", ownWorkTree: (w) => w === "/w/backend" },
      });
      assert.deepEqual(named.map((c) => c.agent), ["backend", "ui"]);
    },
  );
  await t.step("without an agent, holders whose record is in the guard's work tree are its own", () => {
    const found = stagedConflicts(tree, staged, { now: T0, self: { ownWorkTree: (w) => w === "/w/ui" } });
    assert.deepEqual(found.map((c) => c.agent), ["backend"]);
  });
  await t.step("a record another agent left on the leaf says nothing about its holder", () => {
    const taken = held();
    // backend's lease runs out; "next" takes api over with a server that records nothing.
    run(taken, (t) => startTask(t, "api", { agent: "next", now: T0 + 11 * MIN, leaseSeconds: 600 }));
    assert.equal(taken.get("api")!.git?.agent, "backend");
    assert.equal(
      isOwnReservation("next", taken.get("api")!.git, { ownWorkTree: (w) => w === "/w/backend" }),
      false,
    );
    const found = stagedConflicts(taken, ["src/api/a.ts"], {
      now: T0 + 12 * MIN,
      self: { ownWorkTree: (w) => w === "/w/backend" },
    });
    assert.deepEqual(found.map((c) => c.agent), ["next"]);
    assert.deepEqual(recordedWorkTrees(taken, T0 + 12 * MIN), ["/w/ui"]);
  });
});

Deno.test("a staged name is a name: a * or \\ in it is a character, matched against each pattern", () => {
  const tree = held();
  // "lit/*" reserves everything in lit/; "x?y" one character between x and y.
  const names = ["lit/a*b", "lit/back\\slash", "x*y", "x\\y", "xy", "src/api/\\odd", "src/web/**/x.ts"];
  for (const name of names) assert.equal(isPlainPath(name), name === "xy", name);
  const found = stagedConflicts(tree, names, { now: T0, self: {} });
  assert.deepEqual(found.map((c) => [c.path, c.agent, c.pattern]), [
    ["lit/a*b", "odd", "lit/*"],
    ["lit/back\\slash", "odd", "lit/*"],
    ["x*y", "odd", "x?y"],
    ["x\\y", "odd", "x?y"],
    ["src/api/\\odd", "backend", "src/api/**"],
  ]);
  // As a pattern "src/web/**/x.ts" would overlap src/web/*.ts; as a name it is a file in a directory "**".
  assert.equal(matchesPath("src/web/**/x.ts", "src/web/*.ts"), false);
});

Deno.test("over --url a name that is no plain path is asked as the narrowest pattern that matches it", () => {
  assert.equal(queryPattern("src/api/users.ts"), "src/api/users.ts");
  assert.equal(queryPattern("a\\b/c\\\\d.ts"), "a?b/c??d.ts");
  assert.equal(queryPattern("x**y/**/z"), "x*y/**/z");
  const long = `${"d/".repeat(1000)}${"f".repeat(3000)}`;
  const query = queryPattern(long);
  assert.ok(query.length <= LIMITS.checkedPathLength && query.endsWith("/**"), query.slice(-10));
  for (const name of ["a\\b/c\\\\d.ts", "x**y/**/z", long, "lit/a*b"]) {
    assert.ok(matchesPath(name, queryPattern(name)), `${name.slice(0, 20)} matches its query`);
  }
});
