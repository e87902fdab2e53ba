/**
 * Random sequences of start / claim / complete / reopen / paths / delete / restore by several agents,
 * with a controlled clock, over a plan whose tasks carry paths (docs/teams.md "Paths and
 * reservations"). After every step, whatever succeeded or was refused: no two live claims of
 * different agents reserve overlapping paths, a refused step changed nothing, and a claim that
 * handed out a leaf handed out one free of other agents' reservations.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { DomainError } from "../../lib/domain/errors.ts";
import { type Delta, recordChange, restoreTree } from "../../lib/domain/history.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { patternsOverlap } from "../../lib/domain/path_overlap.ts";
import { liveReservations } from "../../lib/domain/reservations.ts";
import type { NewTask } from "../../lib/domain/schemas.ts";
import {
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  startTask,
  updateTask,
} from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import type { Actor } from "../../lib/domain/team.ts";
import { snapshot } from "../support/trees.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

const AGENTS = [undefined, "x", "y", "z"] as const;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const PATTERNS = [
  "src/**",
  "src/api/**",
  "src/api/users.ts",
  "src/web/*",
  "src/*/x.ts",
  "docs/",
  "*.md",
  "**/*.ts",
  "README.md",
  "tests/api/*_test.ts",
];
const IDS = ["g0", "g1", "g2", "l0", "l1", "l2", "l3", "l4", "l5", "l6"];

type Step =
  | { kind: "start" | "complete" | "todo" | "delete"; agent: number; id: string }
  | { kind: "claim"; agent: number; lease: number }
  | { kind: "paths"; agent: number; id: string; paths: string[] }
  | { kind: "restore"; agent: number; back: number }
  | { kind: "tick"; ms: number };

const id = fc.constantFrom(...IDS);
const agent = fc.integer({ min: 0, max: AGENTS.length - 1 });
const paths = fc.uniqueArray(fc.constantFrom(...PATTERNS), { maxLength: 3 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("start" as const), agent, id }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      agent: fc.integer({ min: 1, max: AGENTS.length - 1 }),
      lease: fc.constantFrom(1, 60, 600),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("complete" as const), agent, id }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("todo" as const), agent, id }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("paths" as const), agent, id, paths }) },
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
    arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(500, 30_000, 700_000) }),
  },
);

/** A parallel plan of three parallel groups over the leaves, paths on some groups and some leaves. */
const plan: fc.Arbitrary<NewTask> = fc.record({
  groupPaths: fc.array(paths, { minLength: 3, maxLength: 3 }),
  leafPaths: fc.array(fc.option(paths, { nil: undefined }), { minLength: 7, maxLength: 7 }),
}).map(({ groupPaths, leafPaths }) => ({
  id: "root",
  name: "plan",
  parallel: true,
  tasks: [0, 1, 2].map((g) => ({
    id: `g${g}`,
    name: `group ${g}`,
    parallel: true,
    ...(groupPaths[g]!.length ? { paths: groupPaths[g] } : {}),
    tasks: IDS.slice(3).filter((_, l) => l % 3 === g).map((leaf) => {
      const own = leafPaths[Number(leaf.slice(1))];
      return { id: leaf, name: `leaf ${leaf}`, ...(own?.length ? { paths: own } : {}) };
    }),
  })),
}));

function apply(tree: TaskTree, s: Step, actor: Actor, deltas: Delta[]): string | undefined {
  switch (s.kind) {
    case "start":
      return startTask(tree, s.id, actor).task.id;
    case "claim":
      return claimTask(tree, { ...actor, agent: actor.agent!, leaseSeconds: s.lease }).task?.id;
    case "complete":
      completeTask(tree, s.id, "done", actor);
      return;
    case "todo":
      updateTask(tree, { id: s.id, status: "todo" }, actor);
      return;
    case "paths":
      updateTask(tree, { id: s.id, paths: s.paths }, actor);
      return;
    case "delete":
      deleteTask(tree, s.id, actor);
      return;
    case "restore":
      if (s.back > deltas.length) throw new DomainError("NOT_FOUND", "not kept");
      restoreTree(tree, deltas.slice(-s.back).reverse(), actor);
      return;
    case "tick":
      return;
  }
}

/** Pairs of live reservations of different agents whose paths overlap at `now`. */
function overlapping(tree: TaskTree, now: number): string[] {
  const live = liveReservations(tree, { now });
  const out: string[] = [];
  for (const [i, a] of live.entries()) {
    for (const b of live.slice(i + 1)) {
      if (a.agent === b.agent) continue;
      for (const p of a.paths) {
        for (const q of b.paths) {
          if (patternsOverlap(p, q)) out.push(`${a.agent}@${a.leaf.id} ${p} / ${b.agent}@${b.leaf.id} ${q}`);
        }
      }
    }
  }
  return out;
}

Deno.test("random team sequences with paths never leave two live claims reserving overlapping paths", () => {
  const outcomes: Record<string, number> = {};
  fc.assert(
    fc.property(plan, fc.array(step, { minLength: 5, maxLength: 40 }), (first, steps) => {
      const tree = new TaskTree();
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
        try {
          const { changes } = tree.transact((t) => apply(t, s, actor, deltas));
          const delta = recordChange(tree, changes);
          if (delta.length > 0) deltas.push(delta);
          outcomes[`${s.kind} ok`] = (outcomes[`${s.kind} ok`] ?? 0) + 1;
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          outcomes[error.code] = (outcomes[error.code] ?? 0) + 1;
          // claimTask passes over reserved leaves and waits on a lapsed one: it never refuses for them.
          assert.ok(!(s.kind === "claim" && error.code === "RESERVED"), `${where}: ${error.message}`);
          const after = snapshot(tree);
          assert.deepEqual(
            { ...after, active: after.active.sort() },
            { ...before, active: before.active.sort() },
            `${where} was refused (${error.code}) but changed the tree`,
          );
        }
        assert.deepEqual(invariantViolations(tree), [], where);
        assert.deepEqual(overlapping(tree, now), [], `${where}: live reservations overlap`);
      });
    }),
    { numRuns: fuzzRuns(300), seed: FUZZ_SEED },
  );
  for (const code of ["claim ok", "start ok", "paths ok", "RESERVED"]) {
    assert.ok((outcomes[code] ?? 0) > 0, `no run saw ${code}: ${JSON.stringify(outcomes)}`);
  }
});
