/**
 * Keeping one read of the chat view small: a session view or a page of rows that fits in a byte
 * budget, whatever the session holds (names and rules at their length limits, 1,000 siblings,
 * 12 levels, 50 blockers a task, agents at work). Narrower sibling windows first, then the paths to
 * other agents' leaves, then the rules of the task in progress, then every row off the path, then
 * the names of blockers, then agents at work from the end; what is left out says so and loads on
 * demand (rows), is counted (rules, agents) or shows by id (blockers).
 */
import type { TaskTree } from "../domain/task_tree.ts";
import { buildSessionView, type SessionViewOptions } from "./build.ts";
import { type ChildRange, childRows, SIBLING_WINDOW } from "./fold.ts";
import type { Focus, Row, SessionView } from "./model.ts";

/** Bytes the view's part of one read may take (a reply stays under 64 KiB with its envelope). */
export const READ_BYTES = 60 * 1024;

/** Sibling windows tried in turn until the view fits. */
export const WINDOWS: readonly number[] = [SIBLING_WINDOW, 20, 8, 3, 1];

/** Longest description kept when the view has to shrink. */
const DESCRIPTION_KEPT = 1000;

const encoder = new TextEncoder();

/** Bytes of `value` as JSON text in UTF-8. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/** {@link buildSessionView} within `maxBytes` of JSON (see the module doc for what gives way first). */
export function sessionViewWithin(
  namespace: string,
  id: string,
  tree: TaskTree,
  options: SessionViewOptions = {},
  maxBytes = READ_BYTES,
): SessionView {
  let view: SessionView | undefined;
  for (const window of WINDOWS) {
    view = buildSessionView(namespace, id, tree, { ...options, window });
    if (jsonBytes(view) <= maxBytes) return view;
  }
  view = buildSessionView(namespace, id, tree, { ...options, window: WINDOWS.at(-1)!, held: false });
  if (jsonBytes(view) <= maxBytes) return view;
  if (view.focus) {
    view = { ...view, focus: shrinkFocus(view.focus, maxBytes - jsonBytes({ ...view, focus: null })) };
  }
  if (jsonBytes(view) <= maxBytes) return view;
  view = { ...view, rows: view.rows.filter((row) => row.kind === "task" && row.on_path) };
  if (jsonBytes(view) <= maxBytes) return view;
  view = { ...view, rows: view.rows.map(withoutBlockerNames) };
  return trimAgents(view, maxBytes);
}

/** A row whose blockers show by id only. */
function withoutBlockerNames(row: Row): Row {
  return row.kind === "task" && row.blocked_by
    ? { ...row, blocked_by: row.blocked_by.map((b) => ({ id: b.id, name: "" })) }
    : row;
}

/** The view with agents at work dropped from the end (and counted) until it fits `maxBytes`. */
function trimAgents(view: SessionView, maxBytes: number): SessionView {
  const agents = [...view.agents];
  let more = view.agents_more ?? 0;
  let out = view;
  while (agents.length > 0 && jsonBytes(out) > maxBytes) {
    agents.pop();
    more++;
    out = { ...view, agents: [...agents], agents_more: more };
  }
  return out;
}

/** The focus with rules dropped from the end (inherited ones kept before own) until it fits `room`. */
function shrinkFocus(focus: Focus, room: number): Focus {
  const description = focus.description.length > DESCRIPTION_KEPT
    ? { description: focus.description.slice(0, DESCRIPTION_KEPT), description_cut: true }
    : {};
  const out: Focus = { ...focus, ...description, criteria: [], constraints: [] };
  let used = jsonBytes(out);
  let cut = 0;
  for (const key of ["criteria", "constraints"] as const) {
    for (const rule of focus[key]) {
      const size = jsonBytes(rule) + 1;
      if (used + size + 24 > room) {
        cut++;
        continue;
      }
      out[key].push(rule);
      used += size;
    }
  }
  if (cut > 0) out.rules_cut = cut;
  return out;
}

/**
 * {@link childRows} within `maxBytes`: the range is cut where the rows stop fitting, and the rest
 * becomes a "more" row (opened with the next read). Undefined when the parent does not exist.
 */
export function childRowsWithin(tree: TaskTree, range: ChildRange, maxBytes = READ_BYTES): Row[] | undefined {
  const rows = childRows(tree, range);
  if (!rows || jsonBytes(rows) <= maxBytes) return rows;
  const kept: Row[] = [];
  let used = 2 + 200; // brackets, and room for the "more" row
  for (const row of rows) {
    const size = jsonBytes(row) + 1;
    if (row.kind !== "task" || used + size > maxBytes) break;
    kept.push(row);
    used += size;
  }
  const first = rows[0]!;
  const start = Math.max(0, range.offset);
  const end = start + rows.reduce((n, row) => n + (row.kind === "task" ? 1 : row.count), 0);
  const shownTo = start + kept.length;
  kept.push({
    kind: "more",
    depth: first.depth,
    parent_id: first.parent_id,
    offset: shownTo,
    count: end - shownTo,
  });
  return kept;
}
