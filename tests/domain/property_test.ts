/**
 * Random command sequences over one tree: after every step the invariants hold, the counters match a
 * recount, and a refused step changed nothing.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { DomainError } from "../../lib/domain/errors.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { taskTable } from "../../lib/domain/task_table.ts";
import type { NewTask } from "../../lib/domain/schemas.ts";
import { createTask, nextTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { apply, type Command, command, newTask } from "../support/tree_commands.ts";
import { recount, snapshot } from "../support/trees.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

/** A capped table of the tree: the focus path shown, rows shown and "... N more" counts add up. */
function assertTableComplete(tree: TaskTree, step: string): void {
  const focus = tree.activeLeaves()[0] ?? nextTask(tree);
  const cap = 6;
  const { table } = taskTable(tree, { focus, rowCap: cap });
  if (tree.size === 0) return;
  const rows = table.split("\n").filter((l) => l.startsWith("| ")).slice(2);
  const ids = rows.map((l) => l.split(/(?<!\\)\|/)[2]!.trim()).filter((id) => id !== "");
  const hidden = rows.map((l) => /\.\.\. (\d+) more/.exec(l)?.[1]).filter((n) => n !== undefined).map(Number);
  assert.ok(ids.length <= cap, step);
  assert.equal(ids.length + hidden.reduce((a, b) => a + b, 0), tree.size, step);
  if (focus && tree.pathTo(focus).length <= cap) {
    for (const t of tree.pathTo(focus)) assert.ok(ids.includes(t.id), `${step}: row for ${t.id}`);
  }
}

function assertConsistent(tree: TaskTree, step: string): void {
  assert.deepEqual(invariantViolations(tree), [], step);
  const again = recount(tree);
  assert.deepEqual(again.indexProblems, [], step);
  assert.equal(tree.size, again.size, step);
  assert.deepEqual({ ...tree.counts }, again.counts, step);
  assert.deepEqual(tree.activeLeaves().map((t) => t.id).sort(), again.active.sort(), step);
  // The stored form loads back into an equal tree (no duplicate ids, same counters).
  const reloaded = new TaskTree(structuredClone(tree.roots));
  assert.equal(reloaded.size, tree.size, step);
  assert.deepEqual({ ...reloaded.counts }, { ...tree.counts }, step);
}

Deno.test("random command sequences keep the invariants, and a refused step changes nothing", () => {
  const outcomes = { ok: 0, refused: 0 };
  fc.assert(
    fc.property(
      newTask(3),
      fc.array(command, { minLength: 1, maxLength: 40, size: "max" }),
      (first, rest) => {
        const tree = new TaskTree();
        const commands: Command[] = [{
          kind: "create",
          input: first,
          parent: undefined,
          insertIndex: undefined,
        }, ...rest];
        commands.forEach((cmd, n) => {
          const before = snapshot(tree);
          const step = `step ${n}: ${JSON.stringify(cmd)}`;
          try {
            apply(tree, cmd);
            outcomes.ok++;
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            outcomes.refused++;
            assert.deepEqual(
              snapshot(tree),
              before,
              `${step} was refused (${error.code}) but changed the tree`,
            );
          }
          assertConsistent(tree, step);
          assertTableComplete(tree, step);
        });
      },
    ),
    { numRuns: fuzzRuns(600), seed: FUZZ_SEED },
  );
  // The generator exercises both paths.
  assert.ok(outcomes.ok > 2000 && outcomes.refused > 2000, JSON.stringify(outcomes));
});

Deno.test("random command sequences: a new task and its subtasks are todo, ids kept or generated", () => {
  fc.assert(
    fc.property(fc.array(command, { maxLength: 15 }), newTask(3), (commands, input) => {
      const tree = new TaskTree();
      for (const cmd of commands) {
        try {
          apply(tree, cmd);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
        }
      }
      let created;
      try {
        created = tree.transact((t) => createTask(t, input)).result.task;
      } catch (error) {
        if (error instanceof DomainError && error.code === "DUPLICATE_ID") return;
        throw error;
      }
      const check = (given: NewTask, made: typeof created) => {
        assert.equal(made.status, "todo");
        if (given.id !== undefined) assert.equal(made.id, given.id);
        assert.equal(tree.get(made.id), made);
        assert.equal(made.tasks.length, given.tasks?.length ?? 0);
        made.tasks.forEach((child, i) => check(given.tasks![i]!, child));
      };
      check(input, created);
      assertConsistent(tree, "after create");
    }),
    { numRuns: fuzzRuns(200), seed: FUZZ_SEED },
  );
});
