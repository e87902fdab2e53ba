/**
 * Small text rules of the views: escaping, status marks and labels, counts. Pure; the dashboard's
 * script and the chat view bundle it too.
 */
import type { Claim, TaskStatus } from "../domain/schemas.ts";
import { isLive } from "../domain/team.ts";
import { MARKS } from "../domain/tree_text.ts";

/** The status marks, the same as the checklist tree text draws (`✓` done, `○` todo, `◐` in progress). */
export const STATUS_MARKS: Readonly<Record<TaskStatus, string>> = MARKS;

/** Words for a status, for screen readers and tooltips. */
export const STATUS_WORDS: Readonly<Record<TaskStatus, string>> = {
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

/**
 * Whether a lease ending at `expiresAt` is live at `now` (ms since the epoch): the domain's rule
 * (lib/domain/team.ts `isLive`), which reads only the end. An unreadable time counts as ended.
 */
export function leaseLive(expiresAt: string, now: number): boolean {
  return isLive({ expires_at: expiresAt } as Claim, now);
}

/** A span of time, coarser as it grows: `45s`, `12m 05s`, `1h 05m`, `2d 3h`. */
export function durationLabel(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor(s / 3600) % 24}h`;
}

/** What a lease has left at `now`: `12m 05s left`, or once it has ended `stale, ended 3m 00s ago`. */
export function leaseLabel(expiresAt: string, now: number): string {
  const end = Date.parse(expiresAt);
  if (!Number.isFinite(end)) return "stale";
  return now < end ? `${durationLabel(end - now)} left` : `stale, ended ${durationLabel(now - end)} ago`;
}
