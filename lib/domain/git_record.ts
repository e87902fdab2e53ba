/**
 * Where the work on a task lives (docs/teams.md "Where the work lives"): the `git` record a change writes
 * on the leaf an agent works on, and how a record is shown in a line.
 *
 * Pure: git runs at the edge (lib/git) before the change, never while a store holds its lock; the state
 * it read is applied here, inside the change, with the change's agent and clock.
 */
import { isoTime } from "./iso_time.ts";
import type { GitRecord, GitState, Task } from "./schemas.ts";
import type { TaskTree } from "./task_tree.ts";
import { type Actor, isWithin, leafOf } from "./team.ts";

/**
 * Records `state` as the `git` of the leaf `actor` works on, inside a change that took, renewed, noted
 * or completed it: the leaf `task` when `actor` holds it (in progress under its claim) or this change
 * completed it; on a parent, the leaf `actor` holds inside it. Anything else keeps its record: a note
 * on a task another agent holds, or on one nobody works on, says nothing about where that work lives.
 * Nothing for the anonymous agent, or without a state (git gave none). Returns the record written.
 */
export function recordGit(
  tree: TaskTree,
  task: Task | undefined,
  actor: Actor,
  state: GitState | undefined,
): GitRecord | undefined {
  const agent = actor.agent;
  if (!state || agent === undefined || !task) return undefined;
  let leaf: Task | undefined = task;
  if (task.tasks.length > 0) {
    const held = leafOf(tree, agent);
    leaf = held && isWithin(tree, held, task) ? held : undefined;
  }
  if (!leaf || !worksOn(tree, leaf, agent)) return undefined;
  const record: GitRecord = { agent, at: isoTime(actor.now), ...state };
  tree.setField(leaf, "git", record);
  return record;
}

/** Whether `agent` holds `leaf`, or this change completed it. */
function worksOn(tree: TaskTree, leaf: Task, agent: string): boolean {
  if (leaf.status === "in_progress") return leaf.claim?.agent === agent;
  const before = tree.statusBefore.get(leaf.id);
  return leaf.status === "done" && before !== undefined && before !== "done";
}

/**
 * A record's branch and HEAD in short, as the dashboard and replies show them: `feature/x@1a2b3c4`,
 * `(detached)@1a2b3c4` when HEAD is detached, `main (no commit yet)` before the first commit.
 */
export function branchAtHead(git: GitState): string {
  const branch = git.branch ?? "(detached)";
  return git.head === undefined ? `${branch} (no commit yet)` : `${branch}@${git.head.slice(0, 7)}`;
}

/**
 * A record in one line: `feature/x@1a2b3c4 in /home/me/shop-a, 3 dirty, 1 ahead and 2 behind origin/x`
 * (`clean` when nothing is changed; the upstream only when the branch has one).
 */
export function gitSummary(git: GitState): string {
  const parts = [`${branchAtHead(git)}${git.worktree === undefined ? "" : ` in ${git.worktree}`}`];
  if (git.dirty_count !== undefined) parts.push(git.dirty_count === 0 ? "clean" : `${git.dirty_count} dirty`);
  if (git.upstream !== undefined) {
    const ahead = git.ahead ?? 0;
    const behind = git.behind ?? 0;
    parts.push(
      git.ahead === undefined
        ? `upstream ${git.upstream} (gone)`
        : ahead === 0 && behind === 0
        ? `up to date with ${git.upstream}`
        : `${ahead} ahead and ${behind} behind ${git.upstream}`,
    );
  }
  return parts.join(", ");
}
