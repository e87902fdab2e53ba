/**
 * Tool group `works` (docs/requirements.md W1–W6): work summaries one agent leaves for the next, in an LRU kept
 * in the store (`domain/work_lru.ts` decides; this file translates).
 */
import { z } from "zod";
import { LIMITS } from "../domain/limits.ts";
import { SessionIdSchema, TaskSchema } from "../domain/schemas.ts";
import { countTasks } from "../domain/task_tree.ts";
import { renderTree } from "../domain/tree_text.ts";
import {
  randomWorkId,
  recentWorks,
  saveWork,
  snapshotTasks,
  touchWork,
  type WorkEntry,
  WorkIdSchema,
  workInfo,
} from "../domain/work_lru.ts";
import type { Logger } from "../log.ts";
import { defineTool, type ToolDef } from "./tool.ts";

function logEvictions(log: Logger, evicted: readonly WorkEntry[], capacity: number): void {
  for (const e of evicted) {
    log.info("work evicted", {
      workId: e.workId,
      work_description: e.work_description,
      sessionId: e.sessionId,
      capacity,
    });
  }
}

const saveTool = defineTool({
  name: "save_current_work_info",
  group: "works",
  title: "Save work info",
  description:
    "Save your work summary for the next agent; returns a workId. With sessionId, snapshots that tree; a later save for it replaces the entry. Least recently used entries are evicted.",
  input: z.object({
    work_summarize: z.string().trim().min(1).max(LIMITS.workSummaryLength).describe(
      "What was done, what is left, where to look",
    ),
    work_description: z.string().trim().min(1).max(LIMITS.workDescriptionLength).describe("Short title"),
    sessionId: SessionIdSchema.optional().describe("Task tree to snapshot"),
  }),
  output: z.object({
    workId: z.string(),
    message: z.string(),
    timestamp: z.string().describe("ISO time"),
    warning: z.string().optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run({ work_summarize, work_description, sessionId }, { space, log, workCacheSize }) {
    const snapshot = sessionId === undefined
      ? undefined
      : await space.readTree(sessionId, (tree) => tree && snapshotTasks(tree.roots, sessionId));
    const now = new Date().toISOString();
    const { entry, overwritten, evicted } = await space.updateWorks((entries) =>
      saveWork(entries, {
        work_summarize,
        work_description,
        sessionId,
        snapshot,
        now,
        randomId: randomWorkId,
        capacity: workCacheSize,
      })
    );
    const { workId } = entry;
    let warning: string | undefined;
    if (sessionId !== undefined && snapshot === undefined) {
      warning =
        `Session "${sessionId}" does not exist: the work was saved without a task snapshot. Check the sessionId.`;
      log.warn("work saved for unknown session", { workId, sessionId });
    }
    log.info("work saved", { workId, sessionId, overwritten });
    logEvictions(log, evicted, workCacheSize);
    const parts = [`Saved work ${workId} at ${now}`];
    if (overwritten) parts.push(`, replacing the earlier entry of session "${sessionId}"`);
    if (snapshot) parts.push(` with a snapshot of ${countTasks(snapshot)} tasks of session "${sessionId}"`);
    parts.push(". Give this workId to the next agent (get_work_by_id).");
    if (evicted.length > 0) {
      parts.push(` Evicted least recently used: ${evicted.map((e) => e.workId).join(", ")}.`);
    }
    const message = parts.join("");
    return {
      text: warning ? `${message}\nWarning: ${warning}` : message,
      structured: { workId, message, timestamp: now, ...(warning ? { warning } : {}) },
    };
  },
});

const recentTool = defineTool({
  name: "get_recent_works_info",
  group: "works",
  title: "Recent works",
  description: "List saved work, most recently used first. Read one with get_work_by_id.",
  input: z.object({}),
  output: z.object({
    works: z.array(
      z.object({ workId: z.string(), work_timestamp: z.string(), work_description: z.string() }),
    ),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run(_args, { space, workCacheSize }) {
    const works = await space.readWorks((entries) =>
      recentWorks(entries.values(), workCacheSize).map(({ workId, work_timestamp, work_description }) => ({
        workId,
        work_timestamp,
        work_description,
      }))
    );
    const text = works.length === 0 ? "No saved work yet." : [
      "Saved work, most recently used first:",
      ...works.map((w) => `- ${w.workId} · ${w.work_timestamp} · ${w.work_description}`),
      "Read one with get_work_by_id.",
    ].join("\n");
    return { text, structured: { works } };
  },
});

const byIdTool = defineTool({
  name: "get_work_by_id",
  group: "works",
  title: "Get work",
  description:
    "Get one saved work: its summary, and the task snapshot from save time when it named a known session. Counts as use (keeps it from eviction).",
  input: z.object({ workId: WorkIdSchema.describe("8 digits, from get_recent_works_info") }),
  output: z.object({
    workId: z.string(),
    work_timestamp: z.string(),
    work_description: z.string(),
    work_summarize: z.string(),
    sessionId: z.string().optional(),
    work_tasks: z.array(TaskSchema).optional().describe("Task snapshot at save time"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run({ workId }, { space, log, workCacheSize }) {
    const { info, evicted } = await space.updateWorks((entries) => {
      const used = touchWork(entries, workId, workCacheSize);
      return { info: workInfo(used.entry), evicted: used.evicted };
    });
    logEvictions(log, evicted, workCacheSize);
    return { text: describeWork(info), structured: info };
  },
});

/** A work entry as Markdown: title, time, summary, and (unless `withTasks` is false) the snapshot as a tree. */
export function describeWork(info: ReturnType<typeof workInfo>, withTasks = true): string {
  const lines = [
    `Work ${info.workId}: ${info.work_description}`,
    `Saved ${info.work_timestamp}${info.sessionId === undefined ? "" : ` for session "${info.sessionId}"`}`,
    "",
    info.work_summarize,
  ];
  if (info.work_tasks && !withTasks) {
    lines.push(
      "",
      `(A snapshot of ${countTasks(info.work_tasks)} tasks at save time: get_work_by_id shows it.)`,
    );
  } else if (info.work_tasks) {
    lines.push("", `Tasks at save time (${countTasks(info.work_tasks)}):`, renderTree(info.work_tasks));
  } else if (info.sessionId !== undefined) {
    lines.push("", `(Session "${info.sessionId}" did not exist at save time: no task snapshot.)`);
  }
  return lines.join("\n");
}

/** The work tools, in listing order. */
export const WORK_TOOLS: ToolDef[] = [saveTool, recentTool, byIdTool] as unknown as ToolDef[];
