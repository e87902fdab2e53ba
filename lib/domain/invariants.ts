/**
 * The tree invariants (docs/requirements.md R3.16, R3.17, C5): checked by tests after every step, repaired once when a store loads
 * a tree written by another program (task-orchestrator-mcp, whose file format we read, did not keep them).
 */
import { derivedStatus, type TaskTree } from "./task_tree.ts";

/** Every way the tree breaks invariants 1 and 2, as readable sentences; empty when it holds. */
export function invariantViolations(tree: TaskTree): string[] {
  const problems: string[] = [];
  const active: string[] = [];
  for (const { task } of tree.walk()) {
    if (task.tasks.length === 0) {
      if (task.status === "in_progress") active.push(task.id);
    } else if (derivedStatus(task) !== task.status) {
      problems.push(
        `parent "${task.id}" is ${task.status} but its children make it ${derivedStatus(task)}`,
      );
    }
  }
  if (active.length > 1) problems.push(`${active.length} leaves in progress: ${active.join(", ")}`);
  return problems;
}

/**
 * Repairs invariants 1 and 2 in place (inside an open transaction): parents take the status their
 * children give them, and only the first in-progress leaf in tree order stays in progress.
 * Returns one sentence per repair, for the start-up log.
 */
export function repairInvariants(tree: TaskTree): string[] {
  const fixes: string[] = [];
  const active = tree.activeLeaves();
  if (active.length > 1) {
    const order = new Map<string, number>();
    let i = 0;
    for (const { task } of tree.walk()) order.set(task.id, i++);
    active.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    for (const extra of active.slice(1)) {
      tree.setStatus(extra, "todo");
      fixes.push(`leaf "${extra.id}" set back to todo: only "${active[0]!.id}" stays in progress`);
    }
  }
  // Children before parents: reverse tree order visits every child before its parent.
  const all = [...tree.walk()].reverse();
  for (const { task } of all) {
    const want = derivedStatus(task);
    if (want !== task.status) {
      fixes.push(`parent "${task.id}" set from ${task.status} to ${want} to follow its children`);
      tree.setStatus(task, want);
    }
  }
  return fixes;
}
