/**
 * Who holds what, for the views (docs/teams.md): the leaves agents hold, the unfinished tasks a task
 * waits for (lib/domain/team.ts decides which), where a held leaf's work is (its paths and branch),
 * and the leaves that wait on other agents' reservations (lib/domain/reservations.ts decides which).
 * Pure. Whether a lease is live depends on the viewer's clock and is decided when drawn (text.ts
 * `leaseLive`); which reservations are live when the view is built is judged with the builder's clock.
 */
import { branchAtHead, gitSummary } from "../domain/git_record.ts";
import { pathsOf, reservedFor } from "../domain/reservations.ts";
import type { Task } from "../domain/schemas.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import { earlierUnfinished, isLive, unfinishedBlockers } from "../domain/team.ts";
import {
  type AgentAtWork,
  AGENTS_SHOWN,
  type Blocker,
  type HeldWork,
  type Holder,
  type Reserver,
} from "./model.ts";

/** Blockers listed on one row; the rest are counted. */
export const BLOCKERS_SHOWN = 3;

/** Paths listed on a held leaf's row; the rest are counted (getTask has them all). */
export const PATHS_SHOWN = 3;

/** Holders listed on a row waiting on reservations; the rest are counted. */
export const RESERVERS_SHOWN = 3;

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

/**
 * Where the work of a held leaf is: its paths (own or inherited, the first {@link PATHS_SHOWN}) and
 * its `git` record in short. Undefined for a task no agent holds, or one with neither. A stale
 * claim's leaf keeps both (they tell whoever takes it over where the work was), though its paths
 * reserve nothing any more.
 */
export function heldWork(tree: TaskTree, task: Task): HeldWork | undefined {
  if (!heldBy(task)) return undefined;
  const paths = pathsOf(tree, task);
  if (paths.length === 0 && !task.git) return undefined;
  const work: HeldWork = { paths: paths.slice(0, PATHS_SHOWN) };
  if (paths.length > PATHS_SHOWN) work.paths_more = paths.length - PATHS_SHOWN;
  if (task.git) {
    const git = task.git;
    work.git = { short: branchAtHead(git), line: gitSummary(git), agent: git.agent, at: git.at };
  }
  return work;
}

/** A row's mark of a leaf waiting on reservations: see {@link reservationMarks}. */
export interface ReservedMark {
  reserved_by?: Reserver[];
  reserved_more?: number;
}

/**
 * The reserved mark of each leaf asked about, judged at `now`: a leaf that would be ready but for
 * other agents' live reservations (todo, or in progress under a claim that has ended; allowed by the
 * order rule; no unfinished blocker) names their holders, the first {@link RESERVERS_SHOWN}. Every
 * holder counts, as for the anonymous agent (reservations.ts `reservedFor` with no agent). The live
 * reservations are read from the leaves in progress and indexed once, on the first leaf with paths,
 * so a view built with one marker pays for them once however many rows it shows.
 */
export function reservationMarks(tree: TaskTree, now: number): (task: Task) => ReservedMark {
  const reserved = reservedFor(tree, { now });
  return (task) => {
    if (task.tasks.length > 0 || task.status === "done") return {};
    if (task.status === "in_progress" && (!task.claim || isLive(task.claim, now))) return {};
    // Cheapest first: most leaves have no paths, or wait for a blocker or an earlier sibling anyway.
    if (pathsOf(tree, task).length === 0) return {};
    if (unfinishedBlockers(tree, task).length > 0 || earlierUnfinished(tree, task)) return {};
    const conflicts = reserved(task);
    if (!conflicts) return {};
    const mark: ReservedMark = {
      reserved_by: conflicts.slice(0, RESERVERS_SHOWN).map(({ reservation: r, pairs }) => ({
        agent: r.agent,
        expires_at: r.expires_at,
        id: r.leaf.id,
        name: r.leaf.name,
        pair: pairs[0]!,
      })),
    };
    if (conflicts.length > RESERVERS_SHOWN) mark.reserved_more = conflicts.length - RESERVERS_SHOWN;
    return mark;
  };
}
