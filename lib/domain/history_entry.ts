/**
 * One line of a session's history and its revision numbers: the shapes `task_history`, the stores
 * and the dashboard share. Kept apart from history.ts (deltas, restores) so that the browser
 * bundles of the dashboard and the plan view carry only these few lines.
 */
import { z } from "zod";

/** A session's revision after a call: how many changes it has had (0: never changed). */
export const RevisionSchema = z.number().int().nonnegative();

/** One line of `task_history`: the revision a change made, when, by which tool, and what it did. */
export const HistoryEntrySchema = z.object({
  revision: z.number().int().min(1),
  at: z.string().describe("ISO time"),
  tool: z.string(),
  summary: z.string(),
});
/** See {@link HistoryEntrySchema}. */
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;
