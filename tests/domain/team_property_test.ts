/**
 * Random sequences of start / claim / complete / update / note / delete / restore by several agents, with
 * a controlled clock (docs/teams.md). After every step: at most one leaf in progress per
 * agent, no started task with an unfinished blocker, parents follow children, `blocked_by` acyclic,
 * another agent's live claim untouched by a call that succeeded, and a refused call changed nothing.
 * Run on the domain alone, and once through a real JSON file store.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { DomainError } from "../../lib/domain/errors.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { type Delta, recordChange, restoreTree } from "../../lib/domain/history.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { NewTask, Task } from "../../lib/domain/schemas.ts";
import {
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import { type TaskTree, TaskTree as Tree } from "../../lib/domain/task_tree.ts";
import { type Actor, claimAgainst, unfinishedBlockers } from "../../lib/domain/team.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { snapshot as fullSnapshot } from "../support/trees.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

/** Everything observable about a tree; the leaves in progress as a set (their order is no state). */
function snapshot(tree: TaskTree) {
  const snap = fullSnapshot(tree);
  return { ...snap, active: snap.active.sort() };
}

const IDS = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
const AGENTS = [undefined, "x", "y", "z"] as const;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");

type Step =
  | { kind: "start"; agent: number; id: string; lease: number | undefined }
  | { kind: "claim"; agent: number; under: string | undefined; lease: number | undefined }
  | { kind: "complete"; agent: number; id: string }
  | { kind: "status"; agent: number; id: string; status: "todo" | "in_progress" | "done" }
  | { kind: "block"; agent: number; id: string; blocked_by: string[] }
  | { kind: "parallel"; agent: number; id: string; parallel: boolean }
  | { kind: "delete"; agent: number; id: string }
  | { kind: "restore"; agent: number; back: number }
  | { kind: "note"; agent: number; id: string; text: string }
  | { kind: "tick"; ms: number };

const id = fc.constantFrom(...IDS);
const agent = fc.integer({ min: 0, max: AGENTS.length - 1 });
const lease = fc.option(fc.constantFrom(1, 30, 600), { nil: undefined });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("start" as const), agent, id, lease }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      agent: fc.integer({ min: 1, max: AGENTS.length - 1 }),
      under: fc.option(id, { nil: undefined }),
      lease,
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("complete" as const), agent, id }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("status" as const),
      agent,
      id,
      status: fc.constantFrom("todo" as const, "in_progress" as const, "done" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("block" as const),
      agent,
      id,
      blocked_by: fc.uniqueArray(fc.oneof(id, fc.constant("ghost")), { maxLength: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("parallel" as const), agent, id, parallel: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), agent, id }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("restore" as const),
      agent,
      back: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(500, 20_000, 700_000) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("note" as const),
      agent,
      id,
      text: fc.constantFrom("found it", "  gotcha  ", " ", "x".repeat(2001)),
    }),
  },
);

/** A plan over the pool of ids: nested two levels, some parents parallel, some blockers. */
const plan: fc.Arbitrary<NewTask> = fc.record({
  shape: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 2, maxLength: 4 }),
  parallel: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  links: fc.array(fc.tuple(id, id), { maxLength: 3 }),
}).map(({ shape, parallel, links }) => {
  const ids = [...IDS];
  const groups: NewTask[] = shape.map((n, i) => ({
    id: ids.shift()!,
    name: `group ${i}`,
    parallel: parallel[i],
    tasks: Array.from({ length: n }, () => ids.shift()).filter((x) => x !== undefined).map((x) => ({
      id: x,
      name: `leaf ${x}`,
    })),
  }));
  const root: NewTask = { id: "root", name: "plan", parallel: parallel[4], tasks: groups };
  // Blockers are added later by updateTask where they fit; here only sibling groups, first to later.
  const byId = new Map(groups.map((g) => [g.id!, g]));
  for (const [from, to] of links) {
    const a = byId.get(from);
    if (a && byId.has(to) && groups.indexOf(byId.get(to)!) < groups.indexOf(a)) {
      a.blocked_by = [...new Set([...(a.blocked_by ?? []), to])];
    }
  }
  return root;
});

/** Runs one step on `tree` as `actor`; returns nothing, throws a DomainError when refused. */
function apply(tree: TaskTree, s: Step, actor: Actor, deltas: Delta[]): void {
  switch (s.kind) {
    case "start":
      startTask(tree, s.id, { ...actor, leaseSeconds: s.lease });
      return;
    case "claim":
      claimTask(tree, { ...actor, agent: actor.agent!, leaseSeconds: s.lease }, s.under);
      return;
    case "complete":
      completeTask(tree, s.id, "done", actor);
      return;
    case "status":
      updateTask(tree, { id: s.id, status: s.status }, actor);
      return;
    case "block":
      updateTask(tree, { id: s.id, blocked_by: s.blocked_by }, actor);
      return;
    case "parallel":
      updateTask(tree, { id: s.id, parallel: s.parallel }, actor);
      return;
    case "delete":
      deleteTask(tree, s.id, actor);
      return;
    case "restore": {
      if (s.back > deltas.length) throw new DomainError("NOT_FOUND", "not kept");
      restoreTree(tree, deltas.slice(-s.back).reverse(), actor);
      return;
    }
    case "note":
      updateTask(tree, { id: s.id, note: s.text }, actor);
      return;
    case "tick":
      return;
  }
}

/** The wait graph has no cycle: a task waits for its subtasks and its own and ancestors' blockers. */
function assertAcyclic(tree: TaskTree, where: string): void {
  const state = new Map<Task, 1 | 2>();
  const waitsFor = (t: Task): Task[] => {
    const out = [...t.tasks];
    for (const holder of tree.pathTo(t)) {
      for (const b of holder.blocked_by ?? []) {
        const blocker = tree.get(b);
        assert.ok(blocker, `${where}: blocked_by names "${b}", which is gone`);
        out.push(blocker);
      }
    }
    return out;
  };
  const visit = (t: Task, path: string[]): void => {
    if (state.get(t) === 2) return;
    assert.notEqual(state.get(t), 1, `${where}: dependency cycle ${[...path, t.id].join(" -> ")}`);
    state.set(t, 1);
    for (const next of waitsFor(t)) visit(next, [...path, t.id]);
    state.set(t, 2);
  };
  for (const { task } of tree.walk()) visit(task, []);
}

function assertTeamInvariants(tree: TaskTree, now: number, where: string): void {
  assert.deepEqual(invariantViolations(tree), [], where);
  for (const leaf of tree.activeLeaves()) {
    assert.deepEqual(
      unfinishedBlockers(tree, leaf).map((t) => t.id),
      [],
      `${where}: ${leaf.id} started while blocked`,
    );
  }
  for (const { task } of tree.walk()) {
    if (task.claim) {
      assert.ok(Date.parse(task.claim.since) <= now, where);
      assert.ok(Date.parse(task.claim.expires_at) > Date.parse(task.claim.since), where);
    }
    assert.ok((task.notes?.length ?? 0) <= LIMITS.notesKept, `${where}: ${task.id} keeps too many notes`);
  }
  assertAcyclic(tree, where);
}

/** Live claims `actor` must leave alone, by leaf id. */
function protectedFrom(tree: TaskTree, actor: Actor): Map<string, string> {
  const held = new Map<string, string>();
  for (const leaf of tree.activeLeaves()) {
    const claim = claimAgainst(leaf, actor);
    if (claim) held.set(leaf.id, claim.agent);
  }
  return held;
}

Deno.test("random team sequences with a controlled clock keep every team invariant; refusals change nothing", () => {
  const outcomes: Record<string, number> = {};
  fc.assert(
    fc.property(plan, fc.array(step, { minLength: 5, maxLength: 40 }), (first, steps) => {
      const tree = new Tree();
      tree.transact((t) => createTask(t, first));
      const deltas: Delta[] = [];
      let now = T0;
      steps.forEach((s, n) => {
        if (s.kind === "tick") {
          now += s.ms;
          return;
        }
        const actor: Actor = { agent: AGENTS[s.agent], now };
        const where = `step ${n} ${JSON.stringify(s)} at +${now - T0} ms`;
        const before = snapshot(tree);
        const held = protectedFrom(tree, actor);
        try {
          const { changes } = tree.transact((t) => apply(t, s, actor, deltas));
          const delta = recordChange(tree, changes);
          if (delta.length > 0) deltas.push(delta);
          outcomes[`${s.kind} ok`] = (outcomes[`${s.kind} ok`] ?? 0) + 1;
          for (const [leafId, holder] of held) {
            const leaf = tree.get(leafId);
            assert.ok(
              leaf?.status === "in_progress" && leaf.claim?.agent === holder,
              `${where}: took ${leafId} from ${holder}`,
            );
          }
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          outcomes[error.code] = (outcomes[error.code] ?? 0) + 1;
          assert.deepEqual(
            snapshot(tree),
            before,
            `${where} was refused (${error.code}) but changed the tree`,
          );
        }
        assertTeamInvariants(tree, now, where);
      });
    }),
    { numRuns: fuzzRuns(400), seed: FUZZ_SEED },
  );
  // The runs reached the interesting cases, not only refusals.
  for (
    const code of ["claim ok", "start ok", "complete ok", "note ok", "CLAIMED", "EXECUTION_ORDER_VIOLATION"]
  ) {
    assert.ok((outcomes[code] ?? 0) > 0, `no run saw ${code}: ${JSON.stringify(outcomes)}`);
  }
});

Deno.test("the same random team sequences through a real JSON file store: invariants after every step, refusals change nothing on disk", async () => {
  const dir = await Deno.makeTempDir();
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(plan, fc.array(step, { minLength: 5, maxLength: 25 }), async (first, steps) => {
        const path = `${dir}/run${run++}.json`;
        const store = await JsonFileStore.open(path);
        try {
          const space = store.space("default");
          await space.updateTree("s", (t) => createTask(t, first), { tool: "createTask" });
          let now = T0;
          for (const [n, s] of steps.entries()) {
            if (s.kind === "tick") {
              now += s.ms;
              continue;
            }
            const actor: Actor = { agent: AGENTS[s.agent], now };
            const where = `step ${n} ${JSON.stringify(s)}`;
            const before = await Deno.readTextFile(path);
            try {
              if (s.kind === "restore") {
                const { revision } = await space.readHistory("s", 1);
                const to = revision - s.back;
                await space.updateTree("s", (t, history) => {
                  if (to < 1) throw new DomainError("NOT_FOUND", "not kept");
                  restoreTree(t, history.deltas, actor);
                }, { tool: "restore_tasks", undoTo: to });
              } else {
                await space.updateTree("s", (t) => apply(t, s, actor, []), { tool: s.kind });
              }
            } catch (error) {
              if (!(error instanceof DomainError)) throw error;
              assert.equal(
                await Deno.readTextFile(path),
                before,
                `${where} was refused but the file changed`,
              );
            }
            // What is on disk, loaded afresh, holds the invariants.
            const reopened = await JsonFileStore.open(path);
            await reopened.space("default").readTree("s", (t) => assertTeamInvariants(t!, now, where));
            await reopened.close();
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: fuzzRuns(30), seed: FUZZ_SEED },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
