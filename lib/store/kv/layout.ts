/**
 * The Deno KV key layout of the store. Every value is bytes (see codec.ts); records that may
 * pass 64 KiB are chunked.
 *
 * | key | value |
 * | --- | --- |
 * | `["m", sessionId]` | session meta `{ gen, seq }`: which generation holds its tasks, change count |
 * | `["t", gen, taskId]` (+ chunks) | a task record: the task's fields, `tasks` = its child ids in order |
 * | `["t", gen, ""]` | the session's root record: `tasks` = the root ids in order |
 * | `["l", gen, seq]` | change log: ids whose records change `seq` wrote or removed (last {@link LOG_KEEP}) |
 * | `["w", workId]` (+ chunks) | a work entry without its snapshot, `blob` naming the snapshot |
 * | `["wv"]` | works version `{ seq }`, checked and bumped by every works change |
 * | `["b", blobId]` (+ chunks) | a work snapshot (`work_tasks`), immutable once written |
 * | `["p", project]` (+ chunks) | a progress document |
 * | `["v"]` | store-wide change counter, bumped by every change (export and import check it) |
 * | `["gc", "g" or "b", id]` | a generation or blob to delete: retired, or staged and not yet live |
 *
 * A generation (`gen`) is a random name for one copy of a session's tasks: small changes edit it in
 * place, a change too big for one commit writes a new one and flips the meta to it.
 */
import { z } from "zod";

/** Change-log entries kept per generation; a reader further behind reloads the whole session. */
export const LOG_KEEP = 64;

/** A session's meta key. */
export function metaKey(sessionId: string): Deno.KvKey {
  return ["m", sessionId];
}

/** A task record's key (`""`: the root record). */
export function taskKey(gen: string, id: string): Deno.KvKey {
  return ["t", gen, id];
}

/** A change-log entry's key. */
export function logKey(gen: string, seq: number): Deno.KvKey {
  return ["l", gen, seq];
}

/** A work entry's key. */
export function workKey(workId: string): Deno.KvKey {
  return ["w", workId];
}

/** A work snapshot's key. */
export function blobKey(blobId: string): Deno.KvKey {
  return ["b", blobId];
}

/** A progress document's key. */
export function progressKey(project: string): Deno.KvKey {
  return ["p", project];
}

/** The works version key. */
export const WORKS_VERSION_KEY: Deno.KvKey = ["wv"];
/** The store-wide change counter. */
export const STORE_VERSION_KEY: Deno.KvKey = ["v"];

/** Kinds of garbage: a task generation or a work snapshot blob. */
export type GarbageKind = "g" | "b";

/** A garbage marker's key. */
export function markerKey(kind: GarbageKind, id: string): Deno.KvKey {
  return ["gc", kind, id];
}

/** A session's meta value. */
export const SessionMetaSchema = z.object({ gen: z.string().min(1), seq: z.number().int().nonnegative() });
/** See {@link SessionMetaSchema}. */
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

/** The works version value. */
export const WorksVersionSchema = z.object({ seq: z.number().int().nonnegative() });

/** A garbage marker: `staged` data becomes garbage only when its writer failed to publish it. */
export const MarkerSchema = z.object({ at: z.number(), staged: z.boolean() });
/** See {@link MarkerSchema}. */
export type Marker = z.infer<typeof MarkerSchema>;

/** A change-log entry: the record ids to re-read, or `full` for "reload everything". */
export const LogEntrySchema = z.union([
  z.object({ ids: z.array(z.string()) }),
  z.object({ full: z.literal(true) }),
]);

/** A fresh random name for a generation or a blob (64 bits, hex). */
export function newName(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
