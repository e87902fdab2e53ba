/**
 * The rules of teams of agents (docs/teams.md), beside the tree rules of task_ops.ts:
 * who holds a leaf, whether a claim is live, the order rule under parallel parents, blockers (own
 * and inherited), the `blocked_by` graph, the ready leaves, and the `CLAIMED` guard.
 *
 * Pure: the clock is the caller's (`Actor.now`, milliseconds), so a lease is judged when read and
 * property tests control time. Stores only make these rules atomic; they never decide them. The
 * operations (task_ops.ts, checklist.ts, history.ts) call these guards; none restates them.
 */
import { fail } from "./errors.ts";
import { isoTime } from "./iso_time.ts";
import type { Claim, Task } from "./schemas.ts";
import type { TaskTree } from "./task_tree.ts";

/** Lease lengths in seconds (`lease_seconds`). */
export const LEASE_SECONDS = { default: 1800, min: 1, max: 86_400 } as const;

/** Who makes a call and when: the agent (undefined: the anonymous agent) and the caller's clock. */
export interface Actor {
  agent?: string | undefined;
  /** The caller's clock, in milliseconds since the epoch. */
  now: number;
  /** The lease a start or claim takes; {@link LEASE_SECONDS}.default when absent. */
  leaseSeconds?: number | undefined;
}

/**
 * The anonymous agent with the clock at 0: every claim is live for it. What the domain's own
 * callers (tests, repairs) act as when they name no one; the tools always pass the real clock.
 */
export const ANONYMOUS: Actor = { now: 0 };

/** How an agent is named in messages. */
export function agentName(agent: string | undefined): string {
  return agent === undefined ? "the anonymous agent" : `agent "${agent}"`;
}

/** Whether a claim's lease is live at `now`: the reader's clock is before `expires_at`. */
export function isLive(claim: Claim, now: number): boolean {
  return now < Date.parse(claim.expires_at);
}

/** The agent a leaf in progress belongs to: its claim's agent, undefined for the anonymous agent. */
export function holderOf(task: Task): string | undefined {
  return task.claim?.agent;
}

/** The claim that protects `task` from `actor` now: a live claim of another agent, if any. */
export function claimAgainst(task: Task, actor: Actor): Claim | undefined {
  const claim = task.claim;
  if (!claim || task.status !== "in_progress") return undefined;
  if (claim.agent === actor.agent || !isLive(claim, actor.now)) return undefined;
  return claim;
}

/**
 * Refuses (`CLAIMED`) when `task`, or a leaf in its subtree, is held by another agent's live claim.
 * Only the leaves in progress are looked at, never the whole subtree.
 */
export function guardClaimed(tree: TaskTree, task: Task, actor: Actor, verb: string): void {
  for (const leaf of tree.activeLeaves()) {
    const claim = claimAgainst(leaf, actor);
    if (!claim || !isWithin(tree, leaf, task)) continue;
    fail("CLAIMED", claimedMessage(task, leaf, claim, verb));
  }
}

/** The text of a `CLAIMED` refusal (also a checklist tool's per-id reason). */
export function claimedMessage(task: Task, leaf: Task, claim: Claim, verb: string): string {
  const what = leaf === task ? "it" : `"${leaf.name}" (${leaf.id}) inside it`;
  return `Cannot ${verb} "${task.name}" (${task.id}): agent "${claim.agent}" holds ${what} until ${claim.expires_at}. Pick another task (claimTask), or wait until the lease expires.`;
}

/** Whether `task` is `ancestor` or lies in its subtree. */
export function isWithin(tree: TaskTree, task: Task, ancestor: Task): boolean {
  for (let t: Task | undefined = task; t; t = tree.parentOf(t)) if (t === ancestor) return true;
  return false;
}

/** The live claims of other agents, to check after a change that must leave them as they are. */
export function othersClaims(tree: TaskTree, actor: Actor): Map<Task, Claim> {
  const held = new Map<Task, Claim>();
  for (const leaf of tree.activeLeaves()) {
    const claim = claimAgainst(leaf, actor);
    if (claim) held.set(leaf, claim);
  }
  return held;
}

/**
 * Refuses (`CLAIMED`) a change that removed, reopened, finished or re-claimed a leaf another agent
 * held live before it (`before`, from {@link othersClaims}); the caller's transaction then rolls back.
 */
export function checkClaimsKept(tree: TaskTree, before: Map<Task, Claim>, verb: string): void {
  for (const [leaf, claim] of before) {
    const now = tree.get(leaf.id);
    if (now && now.status === "in_progress" && now.claim?.agent === claim.agent) continue;
    fail("CLAIMED", claimedMessage(leaf, leaf, claim, verb));
  }
}

/** The leaf in progress that belongs to `agent` (the anonymous agent: one without a claim). */
export function leafOf(tree: TaskTree, agent: string | undefined): Task | undefined {
  for (const leaf of tree.activeLeaves()) if (holderOf(leaf) === agent) return leaf;
  return undefined;
}

/** Whether the children of `parent` (undefined: the roots, which are never parallel) may run in any order. */
export function isParallel(parent: Task | undefined): boolean {
  return parent?.parallel === true;
}

/**
 * The first level on the path to `task` where earlier siblings are unfinished (R3.3): that node and
 * those siblings. A parallel parent lets its children go in any order; the root level never does.
 */
export function earlierUnfinished(tree: TaskTree, task: Task): { node: Task; pending: Task[] } | undefined {
  for (const node of tree.pathTo(task)) {
    if (isParallel(tree.parentOf(node))) continue;
    const pending: Task[] = [];
    for (const sibling of tree.siblingsOf(node)) {
      if (sibling === node) break;
      if (sibling.status !== "done") pending.push(sibling);
    }
    if (pending.length > 0) return { node, pending };
  }
  return undefined;
}

/**
 * The unfinished tasks `task` waits for: its own `blocked_by` and its ancestors', in root-to-task
 * order, each once. An id that is no longer in the tree blocks nothing.
 */
export function unfinishedBlockers(tree: TaskTree, task: Task): Task[] {
  const out: Task[] = [];
  for (const node of tree.pathTo(task)) {
    for (const id of node.blocked_by ?? []) {
      const blocker = tree.get(id);
      if (blocker && blocker.status !== "done" && !out.includes(blocker)) out.push(blocker);
    }
  }
  return out;
}

/**
 * Every task `task` waits for, finished or not: its own `blocked_by` and its ancestors', in
 * root-to-task order, each once (what a start hands over: notes.ts). An id no longer in the tree is skipped.
 */
export function blockersOf(tree: TaskTree, task: Task): Task[] {
  const out: Task[] = [];
  for (const node of tree.pathTo(task)) {
    for (const id of node.blocked_by ?? []) {
      const blocker = tree.get(id);
      if (blocker && !out.includes(blocker)) out.push(blocker);
    }
  }
  return out;
}

/** Refuses (`EXECUTION_ORDER_VIOLATION`) to start `task` while a blocker of it is unfinished. */
export function checkBlockers(tree: TaskTree, task: Task, verb: string): void {
  const open = unfinishedBlockers(tree, task);
  if (open.length === 0) return;
  const names = open.slice(0, 3).map((t) => `"${t.name}" (${t.id})`).join(", ");
  fail(
    "EXECUTION_ORDER_VIOLATION",
    `Cannot ${verb} "${task.name}" (${task.id}): it is blocked by ${names}${
      open.length > 3 ? ` and ${open.length - 3} more` : ""
    }, not done yet. Finish ${open.length > 1 ? "them" : "it"} first.`,
  );
}

/**
 * Checks the `blocked_by` of `task` (already set in the tree) against the dependency graph: an
 * unknown id is `NOT_FOUND`; the task itself, an ancestor, a descendant, or an id that closes a
 * cycle is `INVALID_INPUT` naming the cycle. A task waits for its own and its ancestors' blockers,
 * and a task is done only when its subtasks are, so a cycle may run through parents.
 */
export function checkBlockedBy(tree: TaskTree, task: Task): void {
  for (const id of task.blocked_by ?? []) {
    const blocker = tree.get(id) ??
      fail("NOT_FOUND", `blocked_by of "${task.id}": no task "${id}" in this session.`);
    if (blocker === task) {
      fail("INVALID_INPUT", `blocked_by of "${task.id}" names the task itself: cycle ${task.id} -> ${id}.`);
    }
    if (isWithin(tree, task, blocker)) {
      fail(
        "INVALID_INPUT",
        `blocked_by of "${task.id}" names its ancestor "${id}", which is done only when "${task.id}" is: cycle ${task.id} -> ${id} -> ${task.id}.`,
      );
    }
    if (isWithin(tree, blocker, task)) {
      fail(
        "INVALID_INPUT",
        `blocked_by of "${task.id}" names its own subtask "${id}", which inherits the wait: cycle ${id} -> ${id}.`,
      );
    }
    const cycle = pathBack(tree, blocker, task);
    if (cycle) {
      fail(
        "INVALID_INPUT",
        `blocked_by of "${task.id}" would close a cycle: ${
          [task.id, ...cycle].join(" -> ")
        }. Remove one of these dependencies first.`,
      );
    }
  }
}

/**
 * A path of waits from `from` back into `target`'s subtree, as ids, if there is one. `X` waits for
 * its subtasks (done only when they are) and for the blockers of itself and its ancestors.
 */
function pathBack(tree: TaskTree, from: Task, target: Task): string[] | undefined {
  const came = new Map<Task, Task | undefined>([[from, undefined]]);
  const queue: Task[] = [from];
  const expanded = new Set<Task>();
  while (queue.length > 0) {
    const node = queue.shift()!;
    if (isWithin(tree, node, target)) {
      const ids: string[] = [];
      for (let t: Task | undefined = node; t; t = came.get(t)) ids.push(t.id);
      return ids.reverse();
    }
    const next: Task[] = [...node.tasks];
    for (const holder of tree.pathTo(node)) {
      if (holder !== node && expanded.has(holder)) continue;
      for (const id of holder.blocked_by ?? []) {
        const t = tree.get(id);
        if (t) next.push(t);
      }
    }
    expanded.add(node);
    for (const t of next) {
      if (came.has(t)) continue;
      came.set(t, node);
      queue.push(t);
    }
  }
  return undefined;
}

/** What {@link scanReady} found under a task, each list in tree order. */
export interface ReadyScan<R = never> {
  /** Leaves `actor` may take now: todo, or in progress with an expired claim. */
  ready: Task[];
  /** Leaves in progress under another agent's live claim. */
  held: Task[];
  /** Leaves that would be ready but for unfinished blockers, with them. */
  blocked: { task: Task; blockers: Task[] }[];
  /** Leaves that would be ready but for what `reserved` found (other agents' reservations). */
  reserved: { task: Task; conflicts: R }[];
}

/**
 * The leaves under `root` (undefined: the session) that `actor` could take, in tree order: the
 * order rule limits a parent that is not parallel (and the root level) to its first unfinished
 * child; done subtrees are skipped. With `first`, stops at the first ready leaf; `cap` bounds each
 * list; with `own`, the actor's own leaf in progress counts as ready (a start returns to it). A
 * leaf for which `reserved` finds something (reservations.ts `reservedFor`) is not ready: it is
 * listed with what was found.
 */
export function scanReady<R = never>(
  tree: TaskTree,
  root: Task | undefined,
  actor: Actor,
  options: { first?: boolean; cap?: number; own?: boolean; reserved?: (leaf: Task) => R | undefined } = {},
): ReadyScan<R> {
  const cap = options.cap ?? Infinity;
  const scan: ReadyScan<R> = { ready: [], held: [], blocked: [], reserved: [] };
  const visit = (list: readonly Task[], parent: Task | undefined): boolean => {
    const parallel = isParallel(parent);
    for (const task of list) {
      if (task.status === "done") continue;
      if (visitTask(task)) return true;
      if (!parallel) break;
    }
    return false;
  };
  const visitTask = (task: Task): boolean => {
    if (task.tasks.length > 0) return visit(task.tasks, task);
    if (task.status === "in_progress") {
      const claim = task.claim;
      if (holderOf(task) === actor.agent) {
        // The actor's own leaf: what a start on its parent returns to (`own`), never a new claim.
        if (!options.own) return false;
        scan.ready.push(task);
        return options.first === true;
      }
      if (!claim) return false;
      if (isLive(claim, actor.now)) {
        if (scan.held.length < cap) scan.held.push(task);
        return false;
      }
    }
    const blockers = unfinishedBlockers(tree, task);
    if (blockers.length > 0) {
      if (scan.blocked.length < cap) scan.blocked.push({ task, blockers });
      return false;
    }
    const conflicts = options.reserved?.(task);
    if (conflicts !== undefined) {
      if (scan.reserved.length < cap) scan.reserved.push({ task, conflicts });
      return false;
    }
    if (scan.ready.length < cap) scan.ready.push(task);
    return options.first === true;
  };
  if (root) {
    if (root.status !== "done" && !earlierUnfinished(tree, root)) visitTask(root);
  } else {
    visit(tree.roots, undefined);
  }
  return scan;
}

/** A new claim for `actor` from now (keeping `since` when renewing). */
export function claimFor(actor: Actor & { agent: string }, since?: string): Claim {
  const seconds = actor.leaseSeconds ?? LEASE_SECONDS.default;
  return {
    agent: actor.agent,
    since: since ?? isoTime(actor.now),
    expires_at: isoTime(actor.now + seconds * 1000),
  };
}

/** Whether two claims differ only in their lease (a renewal): same agent, same `since`. */
export function sameHolding(a: Claim | undefined, b: Claim | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.agent === b.agent && a.since === b.since;
}

/**
 * Refuses (`EXECUTION_ORDER_VIOLATION`) a change that reopened a done task while a task that waits
 * for it is in progress: a started task never has an unfinished blocker. Looks only at the tasks
 * whose status the open transaction changed.
 */
export function checkReopened(tree: TaskTree): void {
  for (const [id, before] of tree.statusBefore) {
    const task = tree.get(id);
    if (before !== "done" || !task || task.status === "done") continue;
    for (const dependent of tree.dependentsOf(id)) {
      if (dependent.status !== "in_progress") continue;
      fail(
        "EXECUTION_ORDER_VIOLATION",
        `Cannot reopen "${task.name}" (${task.id}): "${dependent.name}" (${dependent.id}), which waits for it, is in progress. Put that back to todo first.`,
      );
    }
  }
}

/** Sets `parallel`; making a parent sequential is refused while its subtasks run out of order. */
export function setParallel(tree: TaskTree, task: Task, parallel: boolean): void {
  if (!parallel) {
    let open: Task | undefined;
    for (const child of task.tasks) {
      if (child.status === "in_progress" && open) {
        fail(
          "INVALID_INPUT",
          `Cannot make "${task.name}" (${task.id}) sequential: "${child.name}" (${child.id}) is in progress while the earlier "${open.name}" (${open.id}) is not done.`,
        );
      }
      if (child.status !== "done") open ??= child;
    }
  }
  tree.setField(task, "parallel", parallel ? true : undefined);
}

/** Sets `blocked_by` (an empty list clears it), checked against the graph; a started task cannot gain an unfinished blocker. */
export function setBlockedBy(tree: TaskTree, task: Task, ids: readonly string[]): void {
  tree.setField(task, "blocked_by", ids.length === 0 ? undefined : [...new Set(ids)]);
  checkBlockedBy(tree, task);
  if (task.status === "in_progress") {
    const open = unfinishedBlockers(tree, task);
    if (open.length > 0) {
      fail(
        "EXECUTION_ORDER_VIOLATION",
        `Cannot block "${task.name}" (${task.id}) by unfinished "${open[0]!.name}" (${
          open[0]!.id
        }): it is in progress already. Put it back to todo first.`,
      );
    }
  }
}
