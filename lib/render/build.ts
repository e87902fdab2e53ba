/**
 * The view model from stored data: a session (folded rows, the task in progress with what applies to
 * it, the history), its summary in a list, the progress documents and the recent works.
 */
import { PROGRESS_FIELDS, type ProgressDoc } from "../domain/progress_doc.ts";
import type { Task } from "../domain/schemas.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import { focusTask, type FoldOptions, foldTree } from "./fold.ts";
import { AGENTS_SHOWN, NOTES_SHOWN } from "./model.ts";
import { agentsAtWork, heldBy, heldLeaves } from "./team_marks.ts";
import type {
  DocumentView,
  Focus,
  RecentHistory,
  Rule,
  SessionNote,
  SessionSummary,
  SessionView,
  WorkView,
} from "./model.ts";

/** Longest work summary shown; the rest is cut (the full text stays in the store). */
export const WORK_SUMMARY_SHOWN = 2000;

/** A session in a list: done/total, the task in progress and the agents holding leaves. */
export function summarizeSession(namespace: string, id: string, tree: TaskTree): SessionSummary {
  return {
    namespace,
    id,
    done: tree.counts.done,
    total: tree.size,
    active: tree.activeLeaves()[0]?.name ?? null,
    agents: heldLeaves(tree).slice(0, AGENTS_SHOWN).map((held) => held.holder),
  };
}

/** Options of {@link buildSessionView}. */
export interface SessionViewOptions extends FoldOptions {
  /** The session's history, when the store keeps one. */
  history?: RecentHistory | null;
  /** Show notes: the task in progress's, and the session's latest (the dashboard; the plan view shows none). */
  notes?: boolean;
}

/**
 * How a session is shown: totals, rows folded around the focus, the task in progress, the history,
 * and the agents at work.
 */
export function buildSessionView(
  namespace: string,
  id: string,
  tree: TaskTree,
  options: SessionViewOptions = {},
): SessionView {
  const focus = focusTask(tree, options.focus);
  return {
    namespace,
    id,
    done: tree.counts.done,
    total: tree.size,
    rows: foldTree(tree, options),
    focus: focus?.active ? focusOf(tree, focus.task, options.notes) : null,
    next: focus && !focus.active ? { id: focus.task.id, name: focus.task.name } : null,
    history: options.history ?? null,
    ...agentsAtWork(tree),
    ...(options.notes ? sessionNotes(tree) : {}),
  };
}

/**
 * The session's latest {@link NOTES_SHOWN} notes on any task, newest first, and how many older ones
 * there are: one pass over the tree, keeping only the newest (notes are few per task, at most 20).
 */
export function sessionNotes(tree: TaskTree): { notes: SessionNote[]; notes_more?: number } {
  const latest: SessionNote[] = [];
  let total = 0;
  for (const { task } of tree.walk()) {
    for (const note of task.notes ?? []) {
      total++;
      if (latest.length === NOTES_SHOWN && note.at <= latest[latest.length - 1]!.at) continue;
      const item = {
        task_id: task.id,
        task_name: task.name,
        agent: note.agent,
        at: note.at,
        text: note.text,
      };
      let i = latest.length;
      while (i > 0 && latest[i - 1]!.at < note.at) i--;
      latest.splice(i, 0, item);
      if (latest.length > NOTES_SHOWN) latest.pop();
    }
  }
  return total > latest.length ? { notes: latest, notes_more: total - latest.length } : { notes: latest };
}

/** The task in progress with the criteria and constraints of it and its ancestors, root first; with `notes`, its notes. */
export function focusOf(tree: TaskTree, task: Task, notes = false): Focus {
  const path = tree.pathTo(task);
  const rules = (key: "completion_criteria" | "constraints"): Rule[] =>
    path.flatMap((t) => (t[key] ?? []).map((text) => ({ text, from_id: t.id, from_name: t.name })));
  const focus: Focus = {
    id: task.id,
    name: task.name,
    description: task.description,
    path: path.map((t) => ({ id: t.id, name: t.name })),
    criteria: rules("completion_criteria"),
    constraints: rules("constraints"),
  };
  const claim = heldBy(task);
  if (claim) focus.claim = claim;
  if (notes && task.notes?.length) {
    focus.notes = task.notes.map(({ agent, at, text }) => ({ agent, at, text }));
  }
  return focus;
}

/** A progress document's four fields as lists of text (strings as they are, other JSON as JSON text). */
export function documentView(doc: ProgressDoc): DocumentView {
  const field = (name: typeof PROGRESS_FIELDS[number]): string[] => {
    const value = doc.content[name];
    if (value === undefined || value === null) return [];
    const items = Array.isArray(value) ? value : [value];
    return items.map((item) => (typeof item === "string" ? item : JSON.stringify(item)));
  };
  return {
    project: doc.project,
    revision: doc.revision,
    updated_at: doc.updated_at,
    session_id: doc.session_id ?? null,
    goal: field("goal"),
    completed: field("completed"),
    next_steps: field("next_steps"),
    blockers: field("blockers"),
  };
}

/** The documents newest first, at most `limit`. */
export function documentViews(docs: readonly ProgressDoc[], limit = 20): DocumentView[] {
  return [...docs].sort((a, b) => b.updated_at.localeCompare(a.updated_at)).slice(0, limit).map(documentView);
}

/** The work entries, most recently used first. */
export function workViews(entries: Iterable<WorkEntry>): WorkView[] {
  return [...entries].sort((a, b) => b.used - a.used).map((entry) => ({
    workId: entry.workId,
    at: entry.work_timestamp,
    description: entry.work_description,
    summary: entry.work_summarize.slice(0, WORK_SUMMARY_SHOWN),
    summary_cut: entry.work_summarize.length > WORK_SUMMARY_SHOWN,
    session_id: entry.sessionId ?? null,
  }));
}
