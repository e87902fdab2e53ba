/**
 * Small text rules of the views: escaping, status marks and labels, counts. Pure; the dashboard's
 * script and the chat view bundle it too.
 */
import { MARKS } from "../domain/tree_text.ts";

type Status = "todo" | "in_progress" | "done";

/** The status marks, the same as the checklist tree text draws (`✓` done, `○` todo, `◐` in progress). */
export const STATUS_MARKS: Readonly<Record<Status, string>> = MARKS;

/** Words for a status, for screen readers and tooltips. */
export const STATUS_WORDS: Readonly<Record<Status, string>> = {
  done: "done",
  todo: "to do",
  in_progress: "in progress",
};

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` safe inside HTML text and quoted attribute values: `& < > " '` become entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** Whole percent of `done` in `total` (0 for an empty total), rounded down so 100 means all. */
export function percent(done: number, total: number): number {
  return total === 0 ? 0 : Math.floor((done * 100) / total);
}

/** `3/7 done (42%)`. */
export function progressLabel(done: number, total: number): string {
  return `${done}/${total} done (${percent(done, total)}%)`;
}

/** `1 task` / `12 tasks`. */
export function tasksLabel(count: number): string {
  return count === 1 ? "1 task" : `${count} tasks`;
}

/** What a row's count says: `3 of 12 tasks done (this one and those inside it)`. */
export function foldedLabel(done: number, total: number): string {
  return `${done} of ${tasksLabel(total)} done (this one and those inside it)`;
}

/** What a placeholder row for unshown siblings says. */
export function moreLabel(count: number): string {
  return `${count} more ${count === 1 ? "task" : "tasks"}`;
}

/** An ISO time as `2026-11-23 08:15:03 UTC`; any other text unchanged. */
export function timeLabel(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}
