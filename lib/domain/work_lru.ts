/**
 * The work-info cache (seeds 000/001): recent work summaries that one agent leaves for the next.
 *
 * Recency is a use counter on each entry (`used`): saving and reading by id set it to one more than
 * the highest, and past the capacity the entries with the lowest counters are evicted. Keeping the
 * order in the entries (not in a separate list) lets every store, Deno KV included, keep it as
 * ordinary fields. Pure: ids and time are passed in.
 */
import { z } from "zod";
import { fail } from "./errors.ts";
import { SessionIdSchema, TaskSchema } from "./schemas.ts";

/** Longest `work_description` (seed 001). */
export const MAX_WORK_DESCRIPTION = 200;
/** Longest `work_summarize`. */
export const MAX_WORK_SUMMARY = 20_000;

/** An 8-digit work id. */
export const WorkIdSchema = z.string().regex(/^\d{8}$/, "a workId is exactly 8 digits");

/** One saved piece of work, with the frozen task snapshot when it named a known session. */
export const WorkEntrySchema = z.object({
  workId: WorkIdSchema,
  work_timestamp: z.string(),
  work_description: z.string().min(1).max(MAX_WORK_DESCRIPTION),
  work_summarize: z.string().min(1).max(MAX_WORK_SUMMARY),
  sessionId: SessionIdSchema.optional(),
  work_tasks: z.array(TaskSchema).optional(),
  used: z.number().int().nonnegative(),
});
/** See {@link WorkEntrySchema}. */
export type WorkEntry = z.infer<typeof WorkEntrySchema>;

/** What {@link saveWork} needs besides the entries. */
export interface SaveWorkInput {
  work_summarize: string;
  work_description: string;
  sessionId?: string | undefined;
  /** Deep copy of the session's roots, when the session exists. */
  snapshot?: z.infer<typeof TaskSchema>[] | undefined;
  /** ISO time of the save. */
  now: string;
  /** Draws a random 8-digit id; called again while it collides. */
  randomId: () => string;
  capacity: number;
}

/** Entries most recently used first. */
export function byRecency(entries: Iterable<WorkEntry>): WorkEntry[] {
  return [...entries].sort((a, b) => b.used - a.used);
}

function nextUse(entries: Iterable<WorkEntry>): number {
  let max = 0;
  for (const e of entries) max = Math.max(max, e.used);
  return max + 1;
}

/**
 * Saves work into `entries` (a map by workId, changed in place): overwrites the entry of the same
 * session (keeping its id), makes it most recent, and evicts past the capacity.
 */
export function saveWork(
  entries: Map<string, WorkEntry>,
  input: SaveWorkInput,
): { entry: WorkEntry; overwritten: boolean; evicted: WorkEntry[] } {
  let previous: WorkEntry | undefined;
  if (input.sessionId !== undefined) {
    for (const e of entries.values()) if (e.sessionId === input.sessionId) previous = e;
  }
  let workId = previous?.workId;
  while (workId === undefined || (!previous && entries.has(workId))) workId = input.randomId();
  const entry: WorkEntry = {
    workId,
    work_timestamp: input.now,
    work_description: input.work_description,
    work_summarize: input.work_summarize,
    used: nextUse(entries.values()),
  };
  if (input.sessionId !== undefined) entry.sessionId = input.sessionId;
  if (input.snapshot !== undefined) entry.work_tasks = input.snapshot;
  entries.set(workId, entry);
  return { entry, overwritten: previous !== undefined, evicted: evict(entries, input.capacity) };
}

/** Marks an entry used (get_work_by_id); NOT_FOUND when absent. */
export function touchWork(entries: Map<string, WorkEntry>, workId: string): WorkEntry {
  const entry = entries.get(workId) ??
    fail(
      "NOT_FOUND",
      `No work with id "${workId}": it was never saved or has been evicted. Call get_recent_works_info for the current ids.`,
    );
  entry.used = nextUse(entries.values());
  return entry;
}

/** Removes the least recently used entries beyond `capacity`; returns them. */
export function evict(entries: Map<string, WorkEntry>, capacity: number): WorkEntry[] {
  if (entries.size <= capacity) return [];
  const evicted = byRecency(entries.values()).slice(capacity);
  for (const e of evicted) entries.delete(e.workId);
  return evicted;
}

/** A random 8-digit id from 10000000 to 99999999. */
export function randomWorkId(): string {
  const n = new Uint32Array(1);
  crypto.getRandomValues(n);
  return String(10_000_000 + (n[0]! % 90_000_000));
}
