/**
 * Where the work lives, on the domain alone (docs/teams.md "Where the work lives"): which leaf a change
 * records `git` on and which it leaves alone, a renewal that refreshes it adding no revision, a note or
 * a take recording it within its own change, how a record reads in a line, and what a take hands over:
 * `git` on blockers, the stale holder's record in `previous`, within the context's 4,000 characters.
 */
import assert from "node:assert/strict";
import { leaseRenewed, recordChange, restoreTree, summarize } from "../../lib/domain/history.ts";
import { branchAtHead, gitSummary, recordGit } from "../../lib/domain/git_record.ts";
import { CONTEXT } from "../../lib/domain/limits.ts";
import { contextLine, takeContext } from "../../lib/domain/notes.ts";
import { type GitState, TakeContextSchema, TaskSchema } from "../../lib/domain/schemas.ts";
import { claimTask, completeTask, createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { run } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const MIN = 60_000;
const HEAD = "0123456789abcdef0123456789abcdef01234567";

function as(agent: string | undefined, now = T0, leaseSeconds?: number): Actor {
  return { agent, now, leaseSeconds };
}

/** A work tree as lib/git reads it. */
function work(worktree: string, dirty: string[] = []): GitState {
  return {
    worktree,
    branch: `feature/${worktree.split("/").pop()}`,
    head: HEAD,
    dirty,
    dirty_count: dirty.length,
  };
}

/** A parallel plan: api and web, then e2e blocked by both. */
function plan(): TaskTree {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "build",
      name: "Build",
      parallel: true,
      tasks: [
        { id: "api", name: "Build API" },
        { id: "web", name: "Build UI" },
        { id: "e2e", name: "End-to-end tests", blocked_by: ["api", "web"] },
      ],
    }));
  return tree;
}

/** A start by `actor` that records `state`, as the tools run it: the start, then the record, in one change. */
function startRecorded(tree: TaskTree, id: string, actor: Actor, state: GitState) {
  return tree.transact((t) => {
    const started = startTask(t, id, actor);
    recordGit(t, t.get(started.task.id), actor, state);
    return started;
  });
}

Deno.test("a take records where the taking agent's work lives, within its own change", () => {
  const tree = plan();
  const { result, changes } = startRecorded(tree, "api", as("w1"), work("/wt/a", ["src/api.ts"]));
  assert.equal(result.task.id, "api");
  assert.deepEqual(tree.get("api")!.git, {
    agent: "w1",
    at: "2026-01-01T00:00:00.000Z",
    worktree: "/wt/a",
    branch: "feature/a",
    head: HEAD,
    dirty: ["src/api.ts"],
    dirty_count: 1,
  });
  TaskSchema.parse(tree.get("api"));
  const delta = recordChange(tree, changes);
  assert.equal(delta.length > 0, true, "a take is a change");
  assert.equal(summarize(tree, delta), `changed 2: "Build API" in_progress by w1, "Build" in_progress`);
});

Deno.test("a renewal that refreshes git adds no revision, and the store still writes it", () => {
  const tree = plan();
  run(tree, (t) => claimTask(t, { agent: "w1", now: T0 }));
  const { result, changes } = tree.transact((t) => {
    const actor = { agent: "w1", now: T0 + 5 * MIN };
    const renewed = claimTask(t, actor);
    recordGit(t, t.get(renewed.task!.id), actor, work("/wt/a", ["x.ts"]));
    return renewed;
  });
  assert.equal(result.renewed, true);
  assert.deepEqual(tree.get("api")!.git?.dirty, ["x.ts"]);
  assert.deepEqual(recordChange(tree, changes), [], "no revision");
  assert.equal(leaseRenewed(tree, changes), true, "written");
  // The same refresh within the same millisecond (the lease unchanged) is still written.
  const again = tree.transact((t) => {
    const actor = { agent: "w1", now: T0 + 5 * MIN };
    claimTask(t, actor);
    recordGit(t, t.get("api"), actor, work("/wt/a", ["x.ts", "y.ts"]));
  });
  assert.deepEqual(recordChange(tree, again.changes), []);
  assert.equal(leaseRenewed(tree, again.changes), true);
});

Deno.test("a note records git on a leaf its agent holds, and history still calls it a note", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "api", as("w1")));
  const { changes } = tree.transact((t) => {
    const actor = as("w1", T0 + MIN);
    updateTask(t, { id: "api", note: "halfway" }, actor);
    recordGit(t, t.get("api"), actor, work("/wt/a", ["a.ts"]));
  });
  assert.equal(tree.get("api")!.git?.at, "2026-01-01T00:01:00.000Z");
  assert.equal(summarize(tree, recordChange(tree, changes)), `note on "Build API" by w1`);
});

Deno.test("a note on a task another agent holds, or nobody works on, leaves its record alone", () => {
  const tree = plan();
  startRecorded(tree, "api", as("w1"), work("/wt/a"));
  const before = structuredClone(tree.get("api")!.git);
  run(tree, (t) => {
    const lead = as("lead", T0 + MIN);
    updateTask(t, { id: "api", note: "see the review" }, lead);
    assert.equal(recordGit(t, t.get("api"), lead, work("/wt/lead")), undefined);
    updateTask(t, { id: "web", note: "later" }, lead);
    assert.equal(recordGit(t, t.get("web"), lead, work("/wt/lead")), undefined);
  });
  assert.deepEqual(tree.get("api")!.git, before);
  assert.equal(tree.get("web")!.git, undefined);
});

Deno.test("a completion records git on the leaf it completed; the anonymous agent and a missing state record nothing", () => {
  const tree = plan();
  startRecorded(tree, "api", as("w1"), work("/wt/a", ["a.ts"]));
  run(tree, (t) => {
    const actor = as("w1", T0 + MIN);
    completeTask(t, "api", "REST API", actor);
    recordGit(t, t.get("api"), actor, work("/wt/a"));
  });
  assert.deepEqual(tree.get("api")!.git?.dirty_count, 0);
  assert.equal(tree.get("api")!.git?.at, "2026-01-01T00:01:00.000Z");
  run(tree, (t) => {
    startTask(t, "web");
    assert.equal(recordGit(t, t.get("web"), as(undefined), work("/wt/anon")), undefined);
    assert.equal(recordGit(t, t.get("web"), as("w2"), undefined), undefined);
  });
  assert.equal(tree.get("web")!.git, undefined);
  // A done task noted later keeps the completer's record.
  run(tree, (t) => {
    updateTask(t, { id: "api", note: "merged" }, as("lead", T0 + 2 * MIN));
    recordGit(t, t.get("api"), as("lead", T0 + 2 * MIN), work("/wt/lead"));
  });
  assert.equal(tree.get("api")!.git?.worktree, "/wt/a");
});

Deno.test("a start on a parent records on the leaf it started", () => {
  const tree = plan();
  startRecorded(tree, "build", as("w1"), work("/wt/a"));
  assert.equal(tree.get("api")!.git?.agent, "w1");
  assert.equal(tree.get("build")!.git, undefined);
});

Deno.test("a restore brings git back as it was at the revision; a record in a delta reads back as it was", () => {
  const tree = plan();
  startRecorded(tree, "api", as("w1"), work("/wt/a", ["one.ts"]));
  const before = structuredClone(tree.roots);
  const { changes } = tree.transact((t) => {
    const actor = as("w1", T0 + MIN);
    updateTask(t, { id: "api", note: "more" }, actor);
    recordGit(t, t.get("api"), actor, work("/wt/a", ["one.ts", "two.ts"]));
  });
  const delta = recordChange(tree, changes);
  assert.deepEqual(delta[0]!.f?.git?.dirty, ["one.ts"]);
  run(tree, (t) => restoreTree(t, [delta]));
  assert.deepEqual(tree.roots, before);
});

Deno.test("a record in a line: branch@head, the work tree, dirty files, the upstream", () => {
  assert.equal(branchAtHead({ branch: "main", head: HEAD }), "main@0123456");
  assert.equal(branchAtHead({ head: HEAD }), "(detached)@0123456");
  assert.equal(branchAtHead({ branch: "main" }), "main (no commit yet)");
  assert.equal(gitSummary({ ...work("/wt/a", ["a", "b", "c"]) }), "feature/a@0123456 in /wt/a, 3 dirty");
  assert.equal(
    gitSummary({ ...work("/wt/a"), upstream: "origin/a", ahead: 1, behind: 2 }),
    "feature/a@0123456 in /wt/a, clean, 1 ahead and 2 behind origin/a",
  );
  assert.equal(
    gitSummary({ branch: "x", head: HEAD, upstream: "origin/x", ahead: 0, behind: 0 }),
    "x@0123456, up to date with origin/x",
  );
  assert.equal(
    gitSummary({ branch: "x", head: HEAD, upstream: "origin/x" }),
    "x@0123456, upstream origin/x (gone)",
  );
});

Deno.test("a take hands over git: branch, head and work tree on each blocker, the stale holder's whole record in previous", () => {
  const tree = plan();
  for (const [id, agent] of [["api", "backend"], ["web", "ui"]] as const) {
    startRecorded(tree, id, as(agent), work(`/wt/${id}`));
    run(tree, (t) => {
      const actor = as(agent, T0 + MIN);
      completeTask(t, id, `${id} done`, actor);
      recordGit(t, t.get(id), actor, work(`/wt/${id}`));
    });
  }
  // The tester takes e2e, works, leaves a note, and dies.
  startRecorded(tree, "e2e", as("tester", T0 + 2 * MIN, 60), work("/wt/e2e", ["tests/a.ts", "tests/b.ts"]));
  run(tree, (t) => {
    const actor = as("tester", T0 + 2 * MIN + 1000);
    updateTask(t, { id: "e2e", note: "checkout flow half done" }, actor);
    recordGit(t, t.get("e2e"), actor, work("/wt/e2e", ["tests/a.ts", "tests/b.ts", "tests/c.ts"]));
  });
  const later = T0 + 10 * MIN;
  const taken = run(tree, (t) => claimTask(t, { agent: "next", now: later }));
  assert.equal(taken.taken_over_from, "tester");
  const context = taken.context!;
  TakeContextSchema.parse(context);
  assert.deepEqual(context.blockers!.map((b) => b.git), [
    { branch: "feature/api", head: HEAD, worktree: "/wt/api" },
    { branch: "feature/web", head: HEAD, worktree: "/wt/web" },
  ]);
  assert.deepEqual(context.previous, {
    agent: "tester",
    notes: [{ agent: "tester", at: "2026-01-01T00:02:01.000Z", text: "checkout flow half done" }],
    git: {
      agent: "tester",
      at: "2026-01-01T00:02:01.000Z",
      worktree: "/wt/e2e",
      branch: "feature/e2e",
      head: HEAD,
      dirty: ["tests/a.ts", "tests/b.ts", "tests/c.ts"],
      dirty_count: 3,
    },
  });
  assert.match(
    contextLine(context),
    /; 1 note by tester, who held it before, and its work: feature\/e2e@0123456 in \/wt\/e2e, 3 dirty\.$/,
  );
});

Deno.test("previous holds the holder's record alone, even without notes; not a record another agent left", () => {
  const tree = plan();
  startRecorded(tree, "api", as("w1", T0, 60), work("/wt/a", ["a.ts"]));
  const context = takeContext(tree, tree.get("api")!, { from: "w1" })!;
  assert.deepEqual(context.previous?.notes, []);
  assert.equal(context.previous?.git?.worktree, "/wt/a");
  assert.match(
    contextLine(context),
    /: w1, who held it before, left its work: feature\/a@0123456 in \/wt\/a, 1 dirty\.$/,
  );
  // A record by someone else than the stale holder is not its work.
  assert.equal(takeContext(tree, tree.get("api")!, { from: "w9" }), undefined);
  assert.equal(takeContext(tree, tree.get("api")!, { from: undefined }), undefined);
});

Deno.test("a record at its largest still fits: texts cut at 500, dirty paths dropped from the last, the record kept", () => {
  const tree = plan();
  const long = (c: string) => `/${c.repeat(1023)}`;
  const dirty = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}/${"p".repeat(1000)}`);
  startRecorded(tree, "api", as("w1", T0, 60), {
    worktree: long("w"),
    branch: "b".repeat(1024),
    head: HEAD,
    upstream: "u".repeat(1024),
    ahead: 3,
    behind: 4,
    dirty,
    dirty_count: 99,
  });
  TaskSchema.parse(tree.get("api"));
  run(tree, (t) => updateTask(t, { id: "api", note: "n".repeat(2000) }, as("w1", T0 + 1)));
  const context = takeContext(tree, tree.get("api")!, { from: "w1" })!;
  const json = JSON.stringify(context);
  assert.ok(json.length < CONTEXT.totalLength, `${json.length}`);
  const git = context.previous!.git!;
  assert.equal(git.worktree!.length, CONTEXT.textLength);
  assert.equal(git.branch!.length, CONTEXT.textLength);
  assert.equal(git.dirty_count, 99);
  assert.ok(git.dirty!.length > 0 && git.dirty!.length < 20, `${git.dirty!.length} paths kept`);
  assert.deepEqual(git.dirty, dirty.slice(0, git.dirty!.length).map((p) => `${p.slice(0, 499)}…`));
  assert.deepEqual(context.previous!.notes, [], "the note is older than the record: it went first");
  assert.equal(context.dropped, 1, "the note is counted; the dirty paths are not");
});

Deno.test("the holder's record keeps as many dirty paths as fit, to the character", () => {
  const dirty = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}/${"p".repeat(297)}`);
  // Each step moves the boundary by one character, so every slack before the next path is met.
  for (let pad = 1; pad <= 320; pad++) {
    const tree = plan();
    startRecorded(tree, "api", as("w1", T0, 60), {
      worktree: `/${"w".repeat(pad)}`,
      head: HEAD,
      dirty,
      dirty_count: 20,
    });
    const context = takeContext(tree, tree.get("api")!, { from: "w1" })!;
    const kept = context.previous!.git!.dirty!.length;
    assert.ok(JSON.stringify(context).length < CONTEXT.totalLength, `pad ${pad}`);
    const more = structuredClone(context);
    more.previous!.git!.dirty!.push(dirty[kept]!);
    assert.ok(JSON.stringify(more).length >= CONTEXT.totalLength, `pad ${pad}: one more path would have fit`);
  }
});
