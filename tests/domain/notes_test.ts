/**
 * Notes on tasks and the context a start hands over (docs/teams.md "Context that travels with the work"),
 * rule by rule on the domain alone; the stores, the tools and the processes have their own tests.
 */
import assert from "node:assert/strict";
import { updateTasks } from "../../lib/domain/checklist.ts";
import { recordChange, restoreTree, summarize } from "../../lib/domain/history.ts";
import { CONTEXT, LIMITS } from "../../lib/domain/limits.ts";
import { cutText, takeContext } from "../../lib/domain/notes.ts";
import { ANONYMOUS_NOTE_AGENT, TakeContextSchema, type Task } from "../../lib/domain/schemas.ts";
import {
  claimTask,
  completeTask,
  createTask,
  listTasks,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { refuses, run } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const MIN = 60_000;

function as(agent: string | undefined, now = T0): Actor {
  return { agent, now };
}

function named(agent: string, now = T0, leaseSeconds?: number): Actor & { agent: string } {
  return { agent, now, leaseSeconds };
}

function note(tree: TaskTree, id: string, text: string, actor: Actor = as("w1")) {
  return run(tree, (t) => updateTask(t, { id, note: text }, actor));
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

Deno.test("a note is appended as the calling agent, at its clock, trimmed; the anonymous agent has a name no agent can take", () => {
  const tree = plan();
  const reply = note(tree, "api", "  use zod for the schemas  ", as("w1", T0 + MIN));
  note(tree, "api", "second", as(undefined, T0 + 2 * MIN));
  assert.deepEqual(tree.get("api")!.notes, [
    { agent: "w1", at: "2026-01-01T00:01:00.000Z", text: "use zod for the schemas" },
    { agent: ANONYMOUS_NOTE_AGENT, at: "2026-01-01T00:02:00.000Z", text: "second" },
  ]);
  assert.equal(ANONYMOUS_NOTE_AGENT, "(anonymous)");
  assert.match(reply.message, /Added a note to "Build API" \(api\) as w1 \(1 kept\)/);
  assert.equal(reply.task.notes_count, 1);
  assert.equal(tree.get("api")!.status, "todo", "a note changes nothing else");
});

Deno.test("any agent may add a note to a task another agent holds live", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "api", as("w1")));
  note(tree, "api", "found a race in the cache", as("w2", T0 + MIN));
  note(tree, "build", "a note on a parent", as("w2", T0 + MIN));
  assert.equal(tree.get("api")!.notes![0]!.agent, "w2");
  assert.equal(tree.get("api")!.claim!.agent, "w1", "the claim is untouched");
  assert.equal(tree.get("build")!.notes!.length, 1);
});

Deno.test("a task keeps its last 20 notes and counts the older ones in notes_dropped", () => {
  const tree = plan();
  for (let i = 0; i < 23; i++) note(tree, "api", `note ${i}`, as("w1", T0 + i));
  const api = tree.get("api")!;
  assert.equal(api.notes!.length, LIMITS.notesKept);
  assert.equal(api.notes![0]!.text, "note 3");
  assert.equal(api.notes!.at(-1)!.text, "note 22");
  assert.equal(api.notes_dropped, 3);
  assert.match(note(tree, "api", "one more").message, /20 kept, 4 older dropped/);
});

Deno.test("a blank, too long or ill-formed note is refused and changes nothing", () => {
  const tree = plan();
  note(tree, "api", "kept");
  refuses(tree, "INVALID_INPUT", (t) => updateTask(t, { id: "api", note: " \n\t " }, as("w1")));
  refuses(tree, "LIMIT_EXCEEDED", (t) => updateTask(t, { id: "api", note: "x".repeat(2001) }, as("w1")));
  refuses(tree, "INVALID_INPUT", (t) => updateTask(t, { id: "api", note: "a\ud800b" }, as("w1")));
  // 2,000 characters after trimming is the limit itself.
  note(tree, "api", ` ${"y".repeat(LIMITS.noteLength)} `);
  assert.equal(tree.get("api")!.notes!.length, 2);
});

Deno.test("a note with other fields is all or nothing: a refused status change keeps no note", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "api", as("w1")));
  refuses(tree, "CLAIMED", (t) => updateTask(t, { id: "api", status: "todo", note: "giving up" }, as("w2")));
  const both = run(
    tree,
    (t) => updateTask(t, { id: "web", name: "Build the UI", note: "renamed" }, as("w2")),
  );
  assert.match(both.message, /^Updated "Build the UI" \(web\)\. Note added as w2 \(1 kept\)\.$/);
  assert.equal(tree.get("web")!.notes!.length, 1);
});

Deno.test("a note alone is one change of one task; history says whose note on what, and a restore brings the notes back as they were", () => {
  const tree = plan();
  note(tree, "api", "first");
  const { changes } = tree.transact((t) => updateTask(t, { id: "api", note: "second" }, as("w2")));
  const delta = recordChange(tree, changes);
  assert.deepEqual(delta.map((item) => item.id), ["api"]);
  assert.equal(summarize(tree, delta), `note on "Build API" by w2`);
  // A rename is still an edit, a note with a status change a status change.
  const renamed = tree.transact((t) => updateTask(t, { id: "web", name: "UI" }, as("w2")));
  assert.match(summarize(tree, recordChange(tree, renamed.changes)), /edited/);
  // Undo the second note: the first is back alone, and the restore is no "note on".
  const back = tree.transact((t) => restoreTree(t, [delta]));
  assert.deepEqual(tree.get("api")!.notes!.map((n) => n.text), ["first"]);
  assert.equal(back.result.changed, 1);
  assert.match(summarize(tree, recordChange(tree, back.changes)), /changed 1: "Build API" edited/);
});

Deno.test("a restore compares notes read back from a store by content: the same notes are no change", () => {
  const tree = plan();
  note(tree, "api", "first");
  const renamed = tree.transact((t) => updateTask(t, { id: "api", name: "X" }, as("w2")));
  const first = recordChange(tree, renamed.changes);
  const back = tree.transact((t) => updateTask(t, { id: "api", name: "Build API" }, as("w2")));
  const second = recordChange(tree, back.changes);
  // What a file or KV store reads back: the same notes, as new objects. The tree already is as it was.
  const restored = tree.transact((t) => restoreTree(t, structuredClone([second, first])));
  assert.equal(restored.result.changed, 0);
  assert.deepEqual(
    recordChange(tree, restored.changes),
    [],
    "no revision for a restore that changes nothing",
  );
});

Deno.test("listTasks carries notes_count only; the checklist tools keep a task's notes", () => {
  const tree = plan();
  note(tree, "api", "one");
  note(tree, "api", "two");
  const [build] = listTasks(tree);
  assert.equal(build!.notes_count, undefined);
  const api = listTasks(tree, "build").find((t) => t.id === "api")!;
  assert.equal(api.notes_count, 2);
  assert.equal("notes" in api, false);
  run(tree, (t) =>
    updateTasks(t, "/build/", [
      { taskId: "api", description: "Build the API" },
      { taskId: "web", description: "Build UI" },
      { taskId: "e2e", description: "End-to-end tests" },
    ]));
  assert.deepEqual(tree.get("api")!.notes!.map((n) => n.text), ["one", "two"]);
});

Deno.test("starting a leaf hands over its blockers' resolutions and last notes, its inherited blockers first", () => {
  const tree = plan();
  run(
    tree,
    (t) =>
      createTask(t, {
        id: "docs",
        name: "Docs",
        tasks: [{ id: "guide", name: "Guide", blocked_by: ["web"] }],
      }),
  );
  run(tree, (t) => updateTask(t, { id: "docs", blocked_by: ["build"] }, as("lead")));
  note(tree, "api", "an early note");
  note(tree, "api", "the API listens on :8080", as("w1", T0 + MIN));
  run(tree, (t) => startTask(t, "api", as("w1")));
  run(tree, (t) => completeTask(t, "api", "REST API in src/api", as("w1")));
  run(tree, (t) => startTask(t, "web", as("w2")));
  run(tree, (t) => completeTask(t, "web", "UI in src/web", as("w2")));
  const started = run(tree, (t) => startTask(t, "e2e", as("w3")));
  assert.deepEqual(started.context, {
    blockers: [
      {
        id: "api",
        name: "Build API",
        resolution: "REST API in src/api",
        last_note: { agent: "w1", at: "2026-01-01T00:01:00.000Z", text: "the API listens on :8080" },
      },
      { id: "web", name: "Build UI", resolution: "UI in src/web" },
    ],
  });
  assert.match(
    started.message,
    /Context \(read it first\): 2 finished blockers \(api, web\) with what their agents left\./,
  );
  run(tree, (t) => completeTask(t, "e2e", "green", as("w3")));
  // guide waits for docs' blocker build (a parent, inherited) and for web (its own).
  const guide = run(tree, (t) => startTask(t, "guide", as("w3")));
  assert.deepEqual(guide.context!.blockers!.map((b) => b.id), ["build", "web"]);
});

Deno.test("a parent blocker hands over the resolutions of its last 10 leaves and counts the rest", () => {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "root",
      name: "Root",
      parallel: true,
      tasks: [
        {
          id: "lib",
          name: "Library",
          tasks: Array.from({ length: 13 }, (_, i) => ({ id: `l${i}`, name: `Leaf ${i}` })),
        },
        { id: "app", name: "App", blocked_by: ["lib"] },
      ],
    }));
  for (let i = 0; i < 13; i++) {
    run(tree, (t) => startTask(t, `l${i}`));
    if (i === 5) run(tree, (t) => updateTask(t, { id: "l5", status: "done" })); // done without a resolution
    else run(tree, (t) => completeTask(t, `l${i}`, `resolved ${i}`));
  }
  const [lib] = run(tree, (t) => startTask(t, "app", as("w1"))).context!.blockers!;
  assert.deepEqual(lib!.resolutions!.map((r) => r.id), [
    "l2",
    "l3",
    "l4",
    "l6",
    "l7",
    "l8",
    "l9",
    "l10",
    "l11",
    "l12",
  ]);
  assert.equal(lib!.resolutions!.length, CONTEXT.resolutions);
  assert.deepEqual(lib!.resolutions![0], { id: "l2", resolution: "resolved 2" });
  assert.equal(lib!.more_resolutions, 2, "l0 and l1: 12 leaves have a resolution, 10 listed");
  assert.equal(lib!.resolution, undefined);
});

Deno.test("a takeover hands over the stale holder's last 5 notes; the leaf's own notes come once", () => {
  const tree = plan();
  note(tree, "api", "lead: mind the rate limit", as("lead"));
  run(tree, (t) => claimTask(t, named("w1", T0, 60)));
  for (let i = 0; i < 7; i++) note(tree, "api", `w1 finding ${i}`, as("w1", T0 + i * 1000));
  note(tree, "api", "w9 passing by", as("w9", T0 + 9000));
  const taken = run(tree, (t) => claimTask(t, named("w2", T0 + 2 * MIN)));
  assert.equal(taken.taken_over_from, "w1");
  const context = taken.context!;
  assert.equal(context.previous!.agent, "w1");
  assert.deepEqual(context.previous!.notes.map((n) => n.text), [2, 3, 4, 5, 6].map((i) => `w1 finding ${i}`));
  assert.deepEqual(context.notes!.map((n) => n.text), ["lead: mind the rate limit", "w9 passing by"]);
  assert.match(
    taken.message,
    /Context \(read it first\): 5 notes by w1, who held it before; 2 notes on this task\./,
  );
});

Deno.test("a takeover from the anonymous agent names it as notes do", () => {
  const tree = plan();
  run(tree, (t) => startTask(t, "api", as(undefined)));
  note(tree, "api", "anonymous finding", as(undefined));
  const taken = run(tree, (t) => startTask(t, "api", as("w1")));
  assert.deepEqual(taken.context!.previous!.agent, ANONYMOUS_NOTE_AGENT);
  assert.equal(taken.context!.notes, undefined, "each note once");
});

Deno.test("no context when there is nothing to hand over, and none on a renewal", () => {
  const tree = plan();
  const first = run(tree, (t) => claimTask(t, named("w1")));
  assert.equal(first.context, undefined);
  assert.doesNotMatch(first.message, /Context/);
  note(tree, "api", "my own note", as("w1"));
  const renewed = run(tree, (t) => claimTask(t, named("w1", T0 + MIN)));
  assert.equal(renewed.renewed, true);
  assert.equal(renewed.context, undefined);
  // Taking a leaf with notes of its own hands them over.
  note(tree, "web", "plan: use the design system", as("lead"));
  const web = run(tree, (t) => startTask(t, "web", as("w2")));
  assert.deepEqual(web.context!.notes!.map((n) => n.text), ["plan: use the design system"]);
});

Deno.test("each text is cut at 500 characters, ending with …, never inside a surrogate pair", () => {
  assert.equal(cutText("short"), "short");
  const cut = cutText("x".repeat(800));
  assert.equal(cut.length, CONTEXT.textLength);
  assert.ok(cut.endsWith("…"));
  const pairs = cutText("😀".repeat(400));
  assert.ok(pairs.isWellFormed());
  assert.ok(pairs.length <= CONTEXT.textLength);
  assert.equal(cutText("x".repeat(500)), "x".repeat(500), "500 exactly is not cut");

  const tree = plan();
  note(tree, "web", "n".repeat(2000), as("w1"));
  run(tree, (t) => completeTask(t, "api", "r".repeat(4000)));
  run(tree, (t) => completeTask(t, "web", "ok"));
  const context = run(tree, (t) => startTask(t, "e2e", as("w3"))).context!;
  assert.equal(context.blockers![0]!.resolution!.length, 500);
  assert.equal(context.blockers![1]!.last_note!.text, `${"n".repeat(499)}…`);
});

/** A leaf `x` blocked by `n` done leaves, each with a long resolution and note, plus notes on `x`. */
function crowded(n: number, ownNotes: number): TaskTree {
  const tree = new TaskTree();
  run(tree, (t) =>
    createTask(t, {
      id: "root",
      name: "Root",
      parallel: true,
      tasks: [
        ...Array.from({ length: n }, (_, i) => ({ id: `b${i}`, name: `Blocker ${i}` })),
        { id: "x", name: "X", blocked_by: Array.from({ length: n }, (_, i) => `b${i}`) },
      ],
    }));
  for (let i = 0; i < n; i++) {
    note(tree, `b${i}`, `note of b${i} `.padEnd(600, "."), as("w1", T0 + i));
    run(tree, (t) => completeTask(t, `b${i}`, `resolution of b${i} `.padEnd(700, "-")));
  }
  for (let i = 0; i < ownNotes; i++) {
    note(tree, "x", `own ${i} `.padEnd(600, "o"), as("lead", T0 + 10 * MIN + i));
  }
  return tree;
}

Deno.test("a context stays under 4,000 characters, dropping the oldest first and saying how many", () => {
  const tree = crowded(30, 3);
  const started = run(tree, (t) => startTask(t, "x", as("w2")));
  const context = started.context!;
  const size = JSON.stringify(context).length;
  assert.ok(size < CONTEXT.totalLength, `${size} characters`);
  assert.ok(size > CONTEXT.totalLength - 700, `${size}: no more was dropped than needed`);
  // The leaf's own notes (the newest) are all there; the first blockers lost their texts first.
  assert.equal(context.notes!.length, 3);
  const blockers = context.blockers!;
  assert.equal(blockers.length, 30, "every blocker is still named");
  assert.equal(blockers[0]!.resolution, undefined);
  assert.equal(blockers[0]!.last_note, undefined);
  assert.ok(blockers.at(-1)!.resolution, "the last blocker keeps its resolution");
  const kept = blockers.filter((b) => b.resolution).length + blockers.filter((b) => b.last_note).length;
  assert.equal(context.dropped, 60 - kept);
  assert.match(
    started.message,
    new RegExp(`${context.dropped} older items left out to keep it short \\(getTask has them\\)`),
  );
  TakeContextSchema.parse(context);
});

Deno.test("with too many blockers even to name, the blockers go before the notes on the leaf", () => {
  const tree = new TaskTree();
  const ids = Array.from({ length: 50 }, (_, i) => `blocker-with-a-long-id-${String(i).padStart(3, "0")}`);
  run(tree, (t) =>
    createTask(t, {
      id: "root",
      name: "Root",
      parallel: true,
      tasks: [...ids.map((id) => ({ id, name: `${id} `.padEnd(150, "n") })), {
        id: "x",
        name: "X",
        blocked_by: ids,
      }],
    }));
  for (const id of ids) run(tree, (t) => completeTask(t, id, "done"));
  note(tree, "x", "keep me", as("lead"));
  const context = takeContext(tree, tree.get("x")!)!;
  assert.ok(JSON.stringify(context).length < CONTEXT.totalLength);
  assert.deepEqual(context.notes!.map((n) => n.text), ["keep me"]);
  assert.ok(context.blockers!.length < 50);
  assert.equal(context.blockers!.at(-1)!.id, ids.at(-1), "the first listed went first");
  assert.equal(context.dropped, 50 + (50 - context.blockers!.length), "50 resolutions, then blockers");
});

Deno.test("takeContext reads the tree only", () => {
  const tree = crowded(3, 2);
  const before = structuredClone(tree.roots) as Task[];
  takeContext(tree, tree.get("x")!, { from: "w1" });
  assert.deepEqual(tree.roots, before);
});
