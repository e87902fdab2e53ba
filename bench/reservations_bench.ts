/**
 * What a reservation check costs in the domain alone (docs/teams.md "Paths and reservations"), on the
 * plan of bench:team's paths rows: 12 other agents holding leaves of 8 patterns each (96), a free leaf
 * with 8 patterns of its own. The stdio figures are bench/team_bench.ts's; this shows where they go.
 *
 *   deno bench bench/reservations_bench.ts
 */
import { compilePattern, overlapCompiled } from "../lib/domain/path_overlap.ts";
import {
  conflictsWith,
  indexReservations,
  othersReservations,
  reservedFor,
} from "../lib/domain/reservations.ts";
import { claimTask, createTask } from "../lib/domain/task_ops.ts";
import { TaskTree } from "../lib/domain/task_tree.ts";
import { modulePaths } from "./shapes.ts";

const HOLDERS = 12;
const NOW = Date.parse("2026-01-01T00:00:00.000Z");

/** A parallel root over 9 parallel subtasks of 110 leaves; 12 agents hold leaves of the last one. */
function plan(): TaskTree {
  const tree = new TaskTree();
  tree.transact((t) => createTask(t, { id: "root", name: "Root", parallel: true }));
  for (let m = 0; m < 9; m++) {
    const last = m === 8;
    tree.transact((t) =>
      createTask(t, {
        parentId: "root",
        id: `m${m}`,
        name: `Subtask ${m}`,
        parallel: true,
        ...(last ? {} : { paths: modulePaths(m) }),
        tasks: Array.from({ length: 110 }, (_, l) => ({
          id: `m${m}.l${l}`,
          name: `Leaf ${m}.${l}`,
          ...(last && l < HOLDERS ? { paths: modulePaths(100 + l) } : {}),
        })),
      })
    );
  }
  for (let k = 0; k < HOLDERS; k++) {
    tree.transact((t) => claimTask(t, { agent: `holder${k}`, now: NOW }, `m8.l${k}`));
  }
  return tree;
}

const tree = plan();
const actor = { agent: "bench", now: NOW };
const leaf = tree.require("m0.l0");
const index = indexReservations(othersReservations(tree, actor));
const mine = modulePaths(0);

Deno.bench("a free leaf's 8 patterns against 96 reserved, reservations read and indexed", {
  group: "check",
  baseline: true,
}, () => {
  reservedFor(tree, actor)(leaf);
});

Deno.bench("the same, reservations already indexed (what each further leaf of a scan costs)", {
  group: "check",
}, () => {
  conflictsWith(mine, index);
});

Deno.bench("claimTask on that plan (a transaction, rolled back)", { group: "claim" }, () => {
  tree.transact((t) => claimTask(t, actor)).rollback();
});

/** Two compiled patterns (a task's stored list compiles once), overlapped. */
function pair(name: string, a: string, b: string): void {
  const x = compilePattern(a);
  const y = compilePattern(b);
  Deno.bench(`overlap: ${name} (${a} · ${b})`, { group: "pair" }, () => {
    overlapCompiled(x, y);
  });
}

pair("apart at the first segment", "src/mod0/**", "docs/mod1.md");
pair("apart at the last segment", "lib/**/mod0_*.ts", "lib/**/mod1_*.ts");
pair("a search with a witness", "src/**/*.ts", "src/*/api/**");
