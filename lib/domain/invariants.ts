/**
 * The tree invariants (docs/requirements.md R3.16, R3.17, C5): checked by tests after every step, repaired once when a store loads
 * a tree written by another program (task-orchestrator-mcp, whose file format we read, did not keep them).
 */
import type { Task } from "./schemas.ts";
import { derivedStatus, type TaskTree } from "./task_tree.ts";
import { holderOf } from "./team.ts";

/**
 * Every way the tree breaks invariants 1 (per agent: the anonymous agent counts as one) and 2, as
 * readable sentences; empty when it holds. A claim on a task that is not a leaf in progress is one too.
 */
export function invariantViolations(tree: TaskTree): string[] {
  const problems: string[] = [];
  const active = new Map<string | undefined, string[]>();
  for (const { task } of tree.walk()) {
    if (task.claim && (task.status !== "in_progress" || task.tasks.length > 0)) {
      problems.push(`task "${task.id}" is ${task.status} but carries a claim`);
    }
    if (task.tasks.length === 0) {
      if (task.status === "in_progress") {
        const ids = active.get(holderOf(task)) ?? [];
        active.set(holderOf(task), [...ids, task.id]);
      }
    } else if (derivedStatus(task) !== task.status) {
      problems.push(
        `parent "${task.id}" is ${task.status} but its children make it ${derivedStatus(task)}`,
      );
    }
  }
  for (const [agent, ids] of active) {
    if (ids.length > 1) {
      problems.push(`${ids.length} leaves in progress${agent ? ` for ${agent}` : ""}: ${ids.join(", ")}`);
    }
  }
  return problems;
}

/** Leaves in progress beyond the first of each agent (tree order when `ordered`): what invariant 1 forbids. */
export function extraActiveLeaves(tree: TaskTree, ordered: Task[] = tree.activeLeaves()): Task[] {
  const seen = new Set<string | undefined>();
  const extra: Task[] = [];
  for (const leaf of ordered) {
    if (seen.has(holderOf(leaf))) extra.push(leaf);
    else seen.add(holderOf(leaf));
  }
  return extra;
}

/**
 * Repairs invariants 1 and 2 in place (inside an open transaction): parents take the status their
 * children give them, only each agent's first in-progress leaf in tree order stays in progress, and a
 * claim stays only on a leaf in progress.
 * Returns one sentence per repair, for the start-up log.
 */
export function repairInvariants(tree: TaskTree): string[] {
  const fixes: string[] = [];
  const active = tree.activeLeaves();
  if (extraActiveLeaves(tree, active).length > 0) {
    const order = new Map<string, number>();
    let i = 0;
    for (const { task } of tree.walk()) order.set(task.id, i++);
    active.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    for (const extra of extraActiveLeaves(tree, active)) {
      const kept = active.find((t) => holderOf(t) === holderOf(extra))!;
      if (extra.claim) tree.setField(extra, "claim", undefined);
      tree.setStatus(extra, "todo");
      fixes.push(`leaf "${extra.id}" set back to todo: only "${kept.id}" stays in progress`);
    }
  }
  // Children before parents: reverse tree order visits every child before its parent.
  const all = [...tree.walk()].reverse();
  for (const { task } of all) {
    if (task.claim && (task.tasks.length > 0 || task.status !== "in_progress")) {
      fixes.push(`claim of "${task.claim.agent}" dropped from "${task.id}": only a leaf in progress is held`);
      tree.setField(task, "claim", undefined);
    }
    const want = derivedStatus(task);
    if (want !== task.status) {
      fixes.push(`parent "${task.id}" set from ${task.status} to ${want} to follow its children`);
      tree.setStatus(task, want);
    }
  }
  return fixes;
}
