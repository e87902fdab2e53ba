/**
 * The work-info cache (docs/requirements.md W1–W6): recent work summaries that one agent leaves for the next.
 *
 * Recency is a use counter on each entry (`used`): saving and reading by id set it to one more than
 * the highest, and past the capacity the entries with the lowest counters are evicted. Keeping the
 * order in the entries (not in a separate list) lets every store, Deno KV included, keep it as
 * ordinary fields. Pure: ids and time are passed in.
 */
import { z } from "zod";
import { fail } from "./errors.ts";
import { LIMITS } from "./limits.ts";
import { SessionIdSchema, type Task, TaskSchema } from "./schemas.ts";

/** An 8-digit work id. */
export const WorkIdSchema = z.string().regex(/^\d{8}$/, "a workId is exactly 8 digits, e.g. 12345678");

/** One saved piece of work, with the frozen task snapshot when it named a known session. */
export const WorkEntrySchema = z.object({
  workId: WorkIdSchema,
  work_timestamp: z.string(),
  work_description: z.string().min(1).max(LIMITS.workDescriptionLength),
  work_summarize: z.string().min(1).max(LIMITS.workSummaryLength),
  sessionId: SessionIdSchema.optional(),
  work_tasks: z.array(TaskSchema).optional(),
  used: z.number().int().nonnegative(),
});
/** See {@link WorkEntrySchema}. */
export type WorkEntry = z.infer<typeof WorkEntrySchema>;

/** An entry as tools and resources show it: everything but the use counter. */
export type WorkInfo = Omit<WorkEntry, "used">;

/** What {@link saveWork} needs besides the entries. */
export interface SaveWorkInput {
  work_summarize: string;
  work_description: string;
  sessionId?: string | undefined;
  /** The session's roots when the session exists (see {@link snapshotTasks}). */
  snapshot?: readonly Task[] | undefined;
  /** ISO time of the save. */
  now: string;
  /** Draws a random 8-digit id; called again while it collides. */
  randomId: () => string;
  capacity: number;
}

/** What a save or a touch did: the entry used, and the entries evicted to make room. */
export interface WorkUse {
  entry: WorkEntry;
  evicted: WorkEntry[];
}

/** Entries most recently used first. */
export function byRecency(entries: Iterable<WorkEntry>): WorkEntry[] {
  return [...entries].sort((a, b) => b.used - a.used);
}

/** At most `capacity` entries, most recently used first (what get_recent_works_info lists). */
export function recentWorks(entries: Iterable<WorkEntry>, capacity: number): WorkEntry[] {
  return byRecency(entries).slice(0, Math.max(0, capacity));
}

/** The entry without its use counter, copied. */
export function workInfo(entry: WorkEntry): WorkInfo {
  const { used: _used, ...info } = entry;
  return info;
}

function nextUse(entries: Iterable<WorkEntry>): number {
  let max = 0;
  for (const e of entries) max = Math.max(max, e.used);
  return max + 1;
}

/**
 * A deep, frozen copy of a session's roots: what a work entry keeps, unchanged whatever happens to
 * the tasks later (W5.2, W5.5). Refuses (`LIMIT_EXCEEDED`) a tree above {@link LIMITS.workSnapshotLength}.
 */
export function snapshotTasks(roots: readonly Task[], sessionId: string): readonly Task[] {
  const json = JSON.stringify(roots);
  if (json.length > LIMITS.workSnapshotLength) {
    fail(
      "LIMIT_EXCEEDED",
      `Session "${sessionId}" is too large to snapshot (${json.length} characters of JSON; at most ${LIMITS.workSnapshotLength}). Save without sessionId and name the session in work_summarize; the next agent reads the live tree.`,
    );
  }
  return deepFreeze(JSON.parse(json) as Task[]);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Saves work into `entries` (a map by workId, changed in place): overwrites the entry of the same
 * session (keeping its id), makes it most recent, and evicts past the capacity. Without a snapshot
 * the entry has no `work_tasks`, even when an earlier save of the session had one.
 */
export function saveWork(
  entries: Map<string, WorkEntry>,
  input: SaveWorkInput,
): WorkUse & { overwritten: boolean } {
  let previous: WorkEntry | undefined;
  if (input.sessionId !== undefined) {
    for (const e of entries.values()) if (e.sessionId === input.sessionId) previous = e;
  }
  let workId = previous?.workId;
  while (workId === undefined) {
    const candidate = input.randomId();
    if (!WorkIdSchema.safeParse(candidate).success) throw new Error(`randomId gave "${candidate}"`);
    if (!entries.has(candidate)) workId = candidate;
  }
  const entry: WorkEntry = {
    workId,
    work_timestamp: input.now,
    work_description: input.work_description,
    work_summarize: input.work_summarize,
    used: nextUse(entries.values()),
  };
  if (input.sessionId !== undefined) entry.sessionId = input.sessionId;
  if (input.snapshot !== undefined) entry.work_tasks = input.snapshot as Task[];
  entries.set(workId, entry);
  return { entry, overwritten: previous !== undefined, evicted: evict(entries, input.capacity) };
}

/**
 * Marks an entry used (get_work_by_id, W4.4) and evicts past the capacity (which may have shrunk
 * since the last save); `NOT_FOUND` when absent.
 */
export function touchWork(entries: Map<string, WorkEntry>, workId: string, capacity: number): WorkUse {
  const entry = entries.get(workId) ??
    fail(
      "NOT_FOUND",
      `No work with id "${workId}": it was never saved or has been evicted. Call get_recent_works_info for the current ids.`,
    );
  entry.used = nextUse(entries.values());
  return { entry, evicted: evict(entries, capacity) };
}

/** Removes the least recently used entries beyond `capacity`; returns them, least recent last. */
export function evict(entries: Map<string, WorkEntry>, capacity: number): WorkEntry[] {
  if (entries.size <= capacity) return [];
  const evicted = byRecency(entries.values()).slice(Math.max(0, capacity));
  for (const e of evicted) entries.delete(e.workId);
  return evicted;
}

/** A random 8-digit id from 10000000 to 99999999 (Web Crypto, so the module stays portable). */
export function randomWorkId(): string {
  const n = new Uint32Array(1);
  crypto.getRandomValues(n);
  return String(10_000_000 + (n[0]! % 90_000_000));
}
