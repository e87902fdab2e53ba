/**
 * Tool group `history` (docs/history.md): a session's revisions, and restoring one.
 * `domain/history.ts` decides what a restore does; the store keeps the entries.
 */
import { z } from "zod";
import { fail } from "../domain/errors.ts";
import { checkRestorable, restoreTree } from "../domain/history.ts";
import { HistoryEntrySchema, RevisionSchema } from "../domain/history_entry.ts";
import { SessionIdSchema } from "../domain/schemas.ts";
import { actorOf, defineTool, type ToolDef } from "./tool.ts";
import { DEFAULT_SESSION } from "../domain/names.ts";

const sessionId = SessionIdSchema.default(DEFAULT_SESSION);

/** Why the history tools have nothing to show when `HISTORY_SIZE` is 0. */
function historyOff(revision: number): string {
  return `History is off on this server (HISTORY_SIZE=0): no changes are kept, so none can be restored. The session is at revision ${revision}.`;
}

const taskHistoryTool = defineTool({
  name: "task_history",
  group: "history",
  title: "Task history",
  description: "A session's recent changes, newest first.",
  input: z.object({
    sessionId,
    limit: z.number().int().min(1).optional().describe("Entries, 1 to HISTORY_SIZE (default 20)"),
  }),
  output: z.object({
    revision: RevisionSchema,
    entries: z.array(HistoryEntrySchema),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run({ sessionId, limit }, { space }) {
    const { historySize } = space;
    if (historySize > 0 && limit !== undefined && limit > historySize) {
      fail("INVALID_INPUT", `limit is 1–${historySize} (HISTORY_SIZE); got ${limit}.`);
    }
    const page = await space.readHistory(sessionId, Math.min(limit ?? 20, Math.max(historySize, 1)));
    const structured = { revision: page.revision, entries: page.entries };
    if (historySize === 0) return { text: historyOff(page.revision), structured };
    if (page.revision === 0) {
      return { text: `Session "${sessionId}" has no changes yet (revision 0).`, structured };
    }
    const lines = [`Session "${sessionId}" is at revision ${page.revision}.`];
    for (const e of page.entries) {
      lines.push(`- r${e.revision} ${e.at.slice(0, 19)}Z ${e.tool}: ${e.summary}`);
    }
    if (page.entries.length === 0) lines.push("No entries kept.");
    else {lines.push(
        "To go back to a revision, call restore_tasks with it (a restore can be undone the same way).",
      );}
    return { text: lines.join("\n"), structured };
  },
});

const restoreTasksTool = defineTool({
  name: "restore_tasks",
  group: "history",
  title: "Restore tasks",
  description:
    "Put a session's tasks back exactly as they were after a revision. The restore is a revision too (undo: restore the one before).",
  input: z.object({
    sessionId,
    revision: z.number().int().min(0).describe("From task_history"),
  }),
  output: z.object({
    revision: RevisionSchema,
    restored_from: z.number().int(),
    added: z.number().int(),
    removed: z.number().int(),
    changed: z.number().int(),
    message: z.string(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run({ sessionId, revision: wanted }, ctx) {
    const { result, revision } = await ctx.space.updateTree(sessionId, (tree, history) => {
      if (history.historySize === 0) fail("NOT_FOUND", historyOff(history.revision));
      checkRestorable(wanted, {
        current: history.revision,
        oldest: history.oldest,
        historySize: history.historySize,
      });
      return { before: history.revision, ...restoreTree(tree, history.deltas, actorOf(ctx)) };
    }, { tool: "restore_tasks", undoTo: wanted });
    const { before, notes, ...counts } = result;
    const message = revision === before
      ? `Session "${sessionId}" already is as it was at revision ${wanted}; nothing changed.`
      : [
        `Restored session "${sessionId}" to revision ${wanted}, as revision ${revision}: ${counts.added} added, ${counts.removed} removed, ${counts.changed} changed.`,
        ...notes,
        `To undo, call restore_tasks with revision ${before}.`,
      ].join("\n");
    // What a restore did to each task is in task_history; the effect names only the tool and the session.
    return { text: message, structured: { revision, restored_from: wanted, ...counts, message }, effect: {} };
  },
});

/** The history tools, in listing order. */
export const HISTORY_TOOLS: ToolDef[] = [taskHistoryTool, restoreTasksTool] as unknown as ToolDef[];
