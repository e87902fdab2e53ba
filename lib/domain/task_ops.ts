/**
 * The task tools' rules (docs/requirements.md R1–R3, R6) as operations on a {@link TaskTree}.
 *
 * Each operation checks everything it can before it changes anything, and runs inside the caller's
 * transaction, so a refusal leaves the tree as it was (R6.9). None of them touches I/O.
 */
import { fail } from "./errors.ts";
import { checkTreeShape } from "./limits.ts";
import { taskTable } from "./task_table.ts";
import type {
  ClaimResult,
  CompleteResult,
  CreateTaskInput,
  NewTask,
  StartResult,
  Task,
  TaskView,
  UpdateTaskInput,
} from "./schemas.ts";
import { countTasks, settleAfterRemoval, subtree, type TaskTree } from "./task_tree.ts";
import { addNote, contextLine, takeContext, type Takeover } from "./notes.ts";
import { normalizePaths } from "./path_patterns.ts";
import { guardReserved, pathsOf, reservedFor, reservedLeaf, reservedLine, setPaths } from "./reservations.ts";
import {
  type Actor,
  agentName,
  ANONYMOUS,
  checkBlockedBy,
  checkBlockers,
  checkReopened,
  claimAgainst,
  claimedMessage,
  claimFor,
  earlierUnfinished,
  guardClaimed,
  holderOf,
  isLive,
  isWithin,
  leafOf,
  scanReady,
  setBlockedBy,
  setParallel,
} from "./team.ts";

/** Creates a task with its subtasks under `parentId` or at root level (R1, R2.1–R2.4, R6). */
export function createTask(
  tree: TaskTree,
  input: CreateTaskInput,
): { task: Task; message: string } {
  const parent = input.parentId === undefined ? undefined : tree.require(input.parentId);
  const siblings = parent?.tasks ?? tree.roots;
  const index = input.insertIndex ?? siblings.length;
  if (!Number.isInteger(index) || index < 0 || index > siblings.length) {
    fail(
      "INVALID_INPUT",
      `insertIndex ${index} is outside 0–${siblings.length} (${
        parent ? `"${parent.id}" has` : "the session has"
      } ${siblings.length} ${parent ? "subtasks" : "root tasks"}). Omit it to append.`,
    );
  }
  checkNewTasks(tree, input, parent);
  const task = buildTask(tree, input);
  const wasActiveLeaf = parent?.status === "in_progress" && parent.tasks.length === 0;
  tree.insert(parent, index, task);
  for (const { task: t } of subtree(task)) if (t.blocked_by) checkBlockedBy(tree, t);
  tree.settleFrom(parent);
  const count = countTasks([input]);
  let message: string;
  if (!parent && task.tasks.length === 0) {
    message =
      `Created root task "${task.name}" (${task.id}). Break it into subtasks: call createTask with parentId "${task.id}" (or pass \`tasks\`), so each step can be started and completed in order.`;
  } else {
    message = `Created "${task.name}" (${task.id})${
      count > 1 ? ` with ${count - 1} subtask${count > 2 ? "s" : ""}` : ""
    }${
      parent ? ` under "${parent.name}" (${parent.id})` : ""
    }. Call startTask with id "${task.id}" to begin.`;
  }
  if (wasActiveLeaf) {
    message += ` "${
      parent!.name
    }" now has subtasks and is no longer in progress itself: call startTask on it to begin its first subtask.`;
  }
  return { task, message };
}

function checkNewTasks(tree: TaskTree, input: NewTask, parent: Task | undefined): void {
  checkTreeShape([input], {
    depthAbove: parent ? tree.pathTo(parent).length : 0,
    parentId: parent?.id,
    siblings: (parent?.tasks ?? tree.roots).length,
    existing: tree.size,
    oneCall: true,
  });
  const seen = new Set<string>();
  const visit = (t: NewTask) => {
    if (t.id !== undefined) {
      if (seen.has(t.id)) {
        fail("DUPLICATE_ID", `Id "${t.id}" appears twice in this call. Ids are unique per session.`);
      }
      if (tree.get(t.id)) {
        fail(
          "DUPLICATE_ID",
          `Id "${t.id}" is already used in this session (by "${
            tree.get(t.id)!.name
          }"). Choose another id or omit it.`,
        );
      }
      seen.add(t.id);
    }
    for (const child of t.tasks ?? []) visit(child);
  };
  visit(input);
}

function buildTask(tree: TaskTree, input: NewTask, reserved = new Set<string>()): Task {
  const collect = (t: NewTask) => {
    if (t.id !== undefined) reserved.add(t.id);
    for (const c of t.tasks ?? []) collect(c);
  };
  collect(input);
  const build = (t: NewTask): Task => {
    const task: Task = {
      id: t.id ?? newTaskId((id) => tree.get(id) !== undefined || reserved.has(id)),
      name: t.name,
      description: t.description ?? "",
      status: "todo",
      tasks: [],
    };
    reserved.add(task.id);
    if (t.completion_criteria?.length) task.completion_criteria = [...t.completion_criteria];
    if (t.constraints?.length) task.constraints = [...t.constraints];
    if (t.parallel) task.parallel = true;
    if (t.blocked_by?.length) task.blocked_by = [...t.blocked_by];
    if (t.paths?.length) task.paths = normalizePaths(t.paths, `"${task.id}"`);
    task.tasks = (t.tasks ?? []).map(build);
    return task;
  };
  return build(input);
}

/** A short random id not `taken` (8 base-36 characters). */
export function newTaskId(taken: (id: string) => boolean): string {
  const bytes = new Uint8Array(8);
  for (;;) {
    crypto.getRandomValues(bytes);
    let id = "";
    for (const b of bytes) id += (b % 36).toString(36);
    if (!taken(id)) return id;
  }
}

/**
 * Refuses when an earlier sibling of `task` or of any ancestor is unfinished (R3.3, R3.10); the
 * children of a parallel parent may go in any order (team.ts).
 */
export function checkOrder(tree: TaskTree, task: Task, verb: "start" | "complete"): void {
  const found = earlierUnfinished(tree, task);
  if (!found) return;
  const { node, pending } = found;
  const names = pending.slice(0, 3).map((t) => `"${t.name}" (${t.id})`).join(", ");
  const more = pending.length > 3 ? ` and ${pending.length - 3} more` : "";
  const whose = node === task ? "" : ` of its ancestor "${node.name}" (${node.id})`;
  fail(
    "EXECUTION_ORDER_VIOLATION",
    `Cannot ${verb} "${task.name}" (${task.id}): earlier sibling${
      pending.length > 1 ? "s" : ""
    } ${names}${more}${whose} ${pending.length > 1 ? "are" : "is"} not done. Finish ${
      pending.length > 1 ? "them" : "it"
    } first (startTask "${pending[0]!.id}").`,
  );
}

/** The first unfinished leaf in tree order, or undefined when everything is done (R3.8, R3.9). */
export function nextTask(tree: TaskTree, from: readonly Task[] = tree.roots): Task | undefined {
  let list = from;
  let found: Task | undefined;
  for (;;) {
    const next = list.find((t) => t.status !== "done");
    if (!next) return found;
    found = next;
    if (next.tasks.length === 0) return next;
    list = next.tasks;
  }
}

/** A task without its subtree, with subtask counts. */
export function viewOf(tree: TaskTree, task: Task): TaskView {
  const view: TaskView = {
    id: task.id,
    name: task.name,
    description: task.description,
    status: task.status,
    subtasks_total: task.tasks.length,
    subtasks_done: tree.doneChildren(task),
  };
  if (task.resolution !== undefined) view.resolution = task.resolution;
  if (task.completion_criteria) view.completion_criteria = task.completion_criteria;
  if (task.constraints) view.constraints = task.constraints;
  if (task.parallel) view.parallel = true;
  if (task.blocked_by) view.blocked_by = task.blocked_by;
  if (task.paths) view.paths = task.paths;
  if (task.claim) view.claim = task.claim;
  if (task.notes?.length) view.notes_count = task.notes.length;
  const parent = tree.parentOf(task);
  if (parent) view.parent_id = parent.id;
  return view;
}

/**
 * Starts a task (R3.1–R3.6, R3.17, R3.18). On a parent it descends to the first leaf the actor may
 * start (the deepest first unfinished leaf in a plan without parallel parts); that leaf and its
 * ancestors become in progress, and the actor's other leaf goes back to todo (invariant 1, per agent).
 * A named agent's leaf carries a claim with a lease; a leaf whose claim expired may be taken over.
 * Taking a leaf (not renewing it) hands over its `context` (notes.ts). A leaf whose paths overlap
 * another agent's live reservation is refused (`RESERVED`); on a parent, the descent passes over such
 * leaves (reservations.ts).
 */
export function startTask(tree: TaskTree, id: string, actor: Actor = ANONYMOUS): StartResult {
  const task = tree.require(id);
  if (task.status === "done") {
    fail(
      "INVALID_INPUT",
      `"${task.name}" (${task.id}) is already done. To redo it, call updateTask with status "todo" first.`,
    );
  }
  checkOrder(tree, task, "start");
  const leaf = task.tasks.length === 0 ? task : descend(tree, task, actor);
  // A take, or the renewal of a lease that expired meanwhile, makes a reservation live.
  const renewing = leaf.status === "in_progress" && holderOf(leaf) === actor.agent;
  if (!renewing || (leaf.claim && !isLive(leaf.claim, actor.now))) guardReserved(tree, leaf, actor, "start");
  return startLeaf(tree, task, leaf, actor);
}

/**
 * The leaf a start on `parent` goes to: the first one `actor` may take, else (to be refused with the
 * reason) the first one a reservation keeps, else the first unfinished one.
 */
function descend(tree: TaskTree, parent: Task, actor: Actor): Task {
  const scan = scanReady(tree, parent, actor, { first: true, own: true, reserved: reservedFor(tree, actor) });
  return scan.ready[0] ?? scan.reserved[0]?.task ?? nextTask(tree, parent.tasks)!;
}

/**
 * Starts (or renews, or takes over) `leaf`, reached from `task`, for `actor`; see {@link startTask}.
 * Reservations are the caller's to check (startTask refuses, claimTask passes over).
 */
function startLeaf(tree: TaskTree, task: Task, leaf: Task, actor: Actor): StartResult {
  checkBlockers(tree, leaf, "start");
  const held = claimAgainst(leaf, actor);
  if (held) fail("CLAIMED", claimedMessage(leaf, leaf, held, "start"));
  const notes: string[] = [];
  const result: Partial<StartResult> = {};
  const agent = actor.agent;
  if (leaf.status === "in_progress" && holderOf(leaf) === agent) {
    if (agent === undefined) notes.push(`"${leaf.name}" (${leaf.id}) was already in progress.`);
    else {
      tree.setField(leaf, "claim", claimFor({ ...actor, agent }, leaf.claim?.since));
      notes.push(
        `"${leaf.name}" (${leaf.id}) is still yours (agent "${agent}"): lease renewed until ${
          leaf.claim!.expires_at
        }.`,
      );
      result.renewed = true;
    }
  } else {
    for (const other of tree.activeLeaves()) {
      if (other === leaf || holderOf(other) !== agent) continue;
      putBack(tree, other);
      notes.push(`"${other.name}" (${other.id}) was in progress and is back to todo.`);
    }
    let takeover: Takeover | undefined;
    if (leaf.status === "in_progress") {
      const from = holderOf(leaf);
      takeover = { from };
      if (from !== undefined) result.taken_over_from = from;
      notes.push(
        `Took over "${leaf.name}" (${leaf.id}) from ${agentName(from)}${
          leaf.claim ? ` (lease expired at ${leaf.claim.expires_at})` : ""
        }.`,
      );
    }
    // Read before the start changes anything; the start changes neither the notes nor the blockers.
    const context = takeContext(tree, leaf, takeover);
    if (context) {
      result.context = context;
      notes.push(contextLine(context));
    }
    if (agent !== undefined) tree.setField(leaf, "claim", claimFor({ ...actor, agent }));
    else if (leaf.claim) tree.setField(leaf, "claim", undefined);
    tree.setAndSettle(leaf, "in_progress");
    const paths = pathsOf(tree, leaf);
    if (agent !== undefined && paths.length > 0) {
      notes.push(`Reserved for agent "${agent}" while the lease is live: ${paths.join(", ")}.`);
    }
  }
  const path = tree.pathTo(leaf);
  const before = tree.statusBefore;
  const started = path.filter((t) => t.status === "in_progress" && before.has(t.id));
  const criteria = aggregate(path, "completion_criteria");
  const constraints = aggregate(path, "constraints");
  const lines = [
    ...(result.renewed ? [] : [
      leaf === task
        ? `Started "${leaf.name}" (${leaf.id})${agent === undefined ? "" : ` for agent "${agent}"`}.`
        : `"${task.name}" has subtasks: started its first unfinished leaf "${leaf.name}" (${leaf.id}).`,
    ]),
    ...notes,
  ];
  if (criteria.length) lines.push("", "Completion criteria:", ...criteria.map((c) => `- ${c}`));
  if (constraints.length) lines.push("", "Constraints:", ...constraints.map((c) => `- ${c}`));
  lines.push("", `When finished, call completeTask with id "${leaf.id}" and a resolution.`);
  return {
    task: viewOf(tree, leaf),
    started_tasks: started.map((t) => ({ id: t.id, name: t.name })),
    message: lines.join("\n"),
    hierarchy_summary: taskTable(tree, { focus: leaf, statusBefore: before }).table,
    aggregated_completion_criteria: criteria,
    aggregated_constraints: constraints,
    ...result,
  };
}

/** A leaf back to todo, its claim dropped; its ancestors follow. */
function putBack(tree: TaskTree, leaf: Task): void {
  if (leaf.claim) tree.setField(leaf, "claim", undefined);
  tree.setAndSettle(leaf, "todo");
}

/**
 * Claims work for a named agent (docs/teams.md): renews the lease of the leaf it holds
 * (a heartbeat; no new revision), else starts the first ready leaf in tree order under `id` (the
 * whole session without it) whose paths overlap no other agent's live reservation, as
 * {@link startTask} does. Nothing ready is an answer, not an error; so is a leaf of its own whose
 * lease expired while another agent reserved paths it overlaps (it waits, listed in `reserved`).
 */
export function claimTask(
  tree: TaskTree,
  actor: Actor & { agent: string },
  id?: string,
): ClaimResult {
  const root = id === undefined ? undefined : tree.require(id);
  const reserved = reservedFor(tree, actor);
  const own = leafOf(tree, actor.agent);
  const lapsed = own?.claim && !isLive(own.claim, actor.now) ? reserved(own) : undefined;
  if (own && lapsed) {
    return {
      task: null,
      message: [
        `Your lease on "${own.name}" (${own.id}) expired at ${
          own.claim!.expires_at
        }, and other agents have reserved paths it overlaps since:`,
        reservedLine(own, lapsed),
        `Call claimTask again once they are done, or put "${own.id}" back to todo (updateTask status "todo") to take other work.`,
      ].join("\n"),
      waiting_on: [],
      blocked: [],
      reserved: [reservedLeaf(own, lapsed)],
    };
  }
  const leaf = own ?? scanReady(tree, root, actor, { first: true, reserved }).ready[0];
  if (leaf) {
    const started = startLeaf(tree, leaf, leaf, actor);
    return { ...started, claim: leaf.claim! };
  }
  const scan = scanReady(tree, root, actor, { cap: 20, reserved });
  const where = root ? `under "${root.name}" (${root.id})` : "in this session";
  const lines: string[] = [];
  if ((root ? root.status : tree.size > 0 && tree.counts.done === tree.size ? "done" : "") === "done") {
    lines.push(`Every task ${where} is done.`);
  } else {
    lines.push(`Nothing is ready for agent "${actor.agent}" ${where} now.`);
    for (const t of scan.held) {
      lines.push(`- ${t.id} "${t.name}": held by ${t.claim!.agent} until ${t.claim!.expires_at}`);
    }
    for (const { task, blockers } of scan.blocked) {
      lines.push(`- ${task.id} "${task.name}": blocked by ${blockers.map((b) => b.id).join(", ")}`);
    }
    for (const { task, conflicts } of scan.reserved) lines.push(reservedLine(task, conflicts));
    lines.push(
      `Call claimTask again later: a lease that expires frees its task${
        scan.reserved.length > 0 ? ", and a task done frees the paths it reserved" : ""
      }.`,
    );
  }
  return {
    task: null,
    message: lines.join("\n"),
    waiting_on: scan.held.map((t) => ({
      id: t.id,
      name: t.name,
      agent: t.claim!.agent,
      expires_at: t.claim!.expires_at,
    })),
    blocked: scan.blocked.map(({ task, blockers }) => ({
      id: task.id,
      name: task.name,
      blocked_by: blockers.map((b) => b.id),
    })),
    reserved: scan.reserved.map(({ task, conflicts }) => reservedLeaf(task, conflicts)),
  };
}

function aggregate(path: Task[], key: "completion_criteria" | "constraints"): string[] {
  const out: string[] = [];
  for (const t of path) for (const s of t[key] ?? []) if (!out.includes(s)) out.push(s);
  return out;
}

/**
 * Completes a leaf with its resolution (R3.7–R3.16): parents whose children are all done complete
 * themselves, and the next task is named: for a named agent, the first ready leaf no other agent
 * holds and no other agent's reservation keeps. A task with unfinished subtasks is refused (R3.15),
 * as is a leaf another agent holds.
 */
export function completeTask(
  tree: TaskTree,
  id: string,
  resolution: string,
  actor: Actor = ANONYMOUS,
): CompleteResult {
  const task = tree.require(id);
  const autoCompleted = finish(tree, task, resolution, actor);
  const next = actor.agent === undefined
    ? nextTask(tree)
    : scanReady(tree, undefined, actor, { first: true, reserved: reservedFor(tree, actor) }).ready[0];
  const lines = [`Completed "${task.name}" (${task.id}).`];
  if (autoCompleted.length) {
    lines.push(
      `All subtasks done, so also completed: ${
        autoCompleted.map((t) => `"${t.name}" (${t.id})`).join(", ")
      }.`,
    );
  }
  lines.push(
    next
      ? `Next task: "${next.name}" (${next.id}). Call ${
        actor.agent === undefined ? "startTask" : "claimTask"
      } with id "${next.id}".`
      : tree.counts.done === tree.size
      ? "All tasks are complete."
      : "Nothing else is ready now (the rest is held by other agents or blocked); call claimTask later.",
  );
  const result: CompleteResult = {
    message: lines.join("\n"),
    progress_summary: taskTable(tree, { focus: next, statusBefore: tree.statusBefore }),
  };
  if (next) result.next_task_id = next.id;
  return result;
}

/** Marks a leaf done with checks; returns the ancestors that completed with it. */
function finish(tree: TaskTree, task: Task, resolution: string | undefined, actor: Actor): Task[] {
  if (task.status === "done") {
    fail("INVALID_INPUT", `"${task.name}" (${task.id}) is already done.`);
  }
  if (task.tasks.length > 0) {
    const open = task.tasks.filter((t) => t.status !== "done");
    fail(
      "UNFINISHED_SUBTASKS",
      `Cannot complete "${task.name}" (${task.id}): ${open.length} subtask${
        open.length > 1 ? "s are" : " is"
      } not done: ${
        open.slice(0, 3).map((t) => `"${t.name}" (${t.id})`).join(", ")
      }. A parent completes itself when its last subtask is done.`,
    );
  }
  guardClaimed(tree, task, actor, "complete");
  if (task.status === "todo") {
    checkOrder(tree, task, "complete");
    checkBlockers(tree, task, "complete");
  }
  if (resolution !== undefined) tree.setField(task, "resolution", resolution);
  if (task.claim) tree.setField(task, "claim", undefined);
  return tree.setAndSettle(task, "done").filter((t) => t.status === "done");
}

/**
 * Changes the given fields (R2.7). A status change follows the same rules as start and complete;
 * a parent's status follows its children, so it cannot be set to todo directly. Text, criteria and
 * constraints of a leaf another agent holds stay editable; its status does not. `paths` replace the
 * task's paths (`[]` clears them) unless two live claims would then reserve overlapping paths
 * (reservations.ts). A `note` appends a note by the actor to any task, claimed or not (notes.ts);
 * with other fields, all or nothing.
 */
export function updateTask(
  tree: TaskTree,
  input: UpdateTaskInput,
  actor: Actor = ANONYMOUS,
): { task: TaskView; message: string } {
  const task = tree.require(input.id);
  const fields = ["name", "description", "resolution", "completion_criteria", "constraints"] as const;
  const given = fields.filter((f) => input[f] !== undefined);
  const others = given.length > 0 || input.status !== undefined || input.parallel !== undefined ||
    input.blocked_by !== undefined || input.paths !== undefined;
  if (!others && input.note === undefined) {
    fail(
      "INVALID_INPUT",
      "Nothing to update: give at least one of name, description, status, resolution, completion_criteria, constraints, parallel, blocked_by, paths, note.",
    );
  }
  for (const f of given) {
    const value = input[f];
    if (Array.isArray(value) && value.length === 0) tree.setField(task, f, undefined);
    else tree.setField(task, f, value as never);
  }
  if (input.parallel !== undefined) setParallel(tree, task, input.parallel);
  if (input.blocked_by !== undefined) setBlockedBy(tree, task, input.blocked_by);
  if (input.paths !== undefined) setPaths(tree, task, input.paths, actor);
  const notes: string[] = [];
  if (input.status !== undefined && input.status !== task.status) {
    if (input.status === "in_progress") {
      const started = startTask(tree, task.id, actor);
      notes.push(started.message.split("\n")[0]!);
    } else if (input.status === "done") {
      finish(tree, task, input.resolution, actor);
    } else {
      if (task.tasks.length > 0) {
        fail(
          "INVALID_INPUT",
          `"${task.name}" (${task.id}) has subtasks, so its status follows them. Set a subtask back to todo instead.`,
        );
      }
      guardClaimed(tree, task, actor, "reopen");
      putBack(tree, task);
    }
  }
  checkReopened(tree);
  if (input.note !== undefined) {
    const note = addNote(tree, task, actor, input.note);
    const kept = `${task.notes!.length} kept${
      task.notes_dropped ? `, ${task.notes_dropped} older dropped` : ""
    }`;
    notes.push(
      others
        ? `Note added as ${note.agent} (${kept}).`
        : `Added a note to "${task.name}" (${task.id}) as ${note.agent} (${kept}).`,
    );
  }
  return {
    task: viewOf(tree, task),
    message: [...(others ? [`Updated "${task.name}" (${task.id}).`] : []), ...notes].join(" "),
  };
}

/**
 * Deletes a task and its whole subtree (R2.8); the parent's status follows what remains. Its ids
 * leave every `blocked_by`; `freed` names the tasks that waited for them. A subtree holding a
 * leaf another agent holds is refused.
 */
export function deleteTask(
  tree: TaskTree,
  id: string,
  actor: Actor = ANONYMOUS,
): { id: string; deleted: number; freed?: string[] } {
  const task = tree.require(id);
  guardClaimed(tree, task, actor, "delete");
  const waiting = new Map<Task, Set<string>>();
  for (const { task: t } of subtree(task)) {
    for (const dependent of tree.dependentsOf(t.id)) {
      if (isWithin(tree, dependent, task)) continue;
      let ids = waiting.get(dependent);
      if (!ids) waiting.set(dependent, ids = new Set());
      ids.add(t.id);
    }
  }
  const parent = tree.parentOf(task);
  const deleted = tree.remove(task);
  for (const [dependent, gone] of waiting) {
    const rest = dependent.blocked_by!.filter((b) => !gone.has(b));
    tree.setField(dependent, "blocked_by", rest.length > 0 ? rest : undefined);
  }
  settleAfterRemoval(tree, parent);
  return waiting.size === 0 ? { id, deleted } : { id, deleted, freed: [...waiting.keys()].map((t) => t.id) };
}

/** Views of the tasks at one level: the roots, or the subtasks of `parentId` (R2.6). */
export function listTasks(tree: TaskTree, parentId?: string): TaskView[] {
  const list = parentId === undefined ? tree.roots : tree.require(parentId).tasks;
  return list.map((t) => viewOf(tree, t));
}
