/**
 * Who holds what, for the views (docs/teams.md): the leaves agents hold, and the
 * unfinished tasks a task waits for (lib/domain/team.ts decides which). Pure. Whether a lease is live
 * depends on the viewer's clock and is decided when drawn (text.ts `leaseLive`).
 */
import type { Task } from "../domain/schemas.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import { unfinishedBlockers } from "../domain/team.ts";
import { type AgentAtWork, AGENTS_SHOWN, type Blocker, type Holder } from "./model.ts";

/** Blockers listed on one row; the rest are counted. */
export const BLOCKERS_SHOWN = 3;

/** A row's blocked mark: the first {@link BLOCKERS_SHOWN} unfinished blockers and how many more (none for a done task). */
export function blockedMark(
  tree: TaskTree,
  task: Task,
): { blocked_by?: Blocker[]; blocked_more?: number } {
  if (task.status === "done") return {};
  const blockers = unfinishedBlockers(tree, task);
  if (blockers.length === 0) return {};
  const mark: { blocked_by: Blocker[]; blocked_more?: number } = {
    blocked_by: blockers.slice(0, BLOCKERS_SHOWN).map((b) => ({ id: b.id, name: b.name })),
  };
  if (blockers.length > BLOCKERS_SHOWN) mark.blocked_more = blockers.length - BLOCKERS_SHOWN;
  return mark;
}

/** The agent holding `task` and its lease's end, if an agent holds it (a leaf in progress with a claim). */
export function heldBy(task: Task): Holder | undefined {
  return task.claim && task.status === "in_progress" && task.tasks.length === 0
    ? { agent: task.claim.agent, expires_at: task.claim.expires_at }
    : undefined;
}

/** The leaves in progress that agents hold (live or stale), by agent name then id. */
export function heldLeaves(tree: TaskTree): { task: Task; holder: Holder }[] {
  const held: { task: Task; holder: Holder }[] = [];
  for (const task of tree.activeLeaves()) {
    const holder = heldBy(task);
    if (holder) held.push({ task, holder });
  }
  return held.sort((a, b) =>
    a.holder.agent < b.holder.agent
      ? -1
      : a.holder.agent > b.holder.agent
      ? 1
      : a.task.id < b.task.id
      ? -1
      : 1
  );
}

/** The session's agents at work: the first {@link AGENTS_SHOWN} held leaves and how many more. */
export function agentsAtWork(tree: TaskTree): { agents: AgentAtWork[]; agents_more?: number } {
  const held = heldLeaves(tree);
  const agents = held.slice(0, AGENTS_SHOWN).map(({ task, holder }) => ({
    ...holder,
    id: task.id,
    name: task.name,
  }));
  return held.length > AGENTS_SHOWN ? { agents, agents_more: held.length - AGENTS_SHOWN } : { agents };
}
