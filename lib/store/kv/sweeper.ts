/**
 * Garbage collection for the KV store: retired generations and snapshot blobs, and staged ones whose
 * writer died before publishing them.
 *
 * Data is staged (written where no reader looks) under a marker `{ staged: true }`; the commit that
 * publishes it deletes the marker, the commit that unpublishes old data adds `{ staged: false }` for
 * it. So everything unreachable is named by a marker, and sweeping a marker's keys needs no checks:
 * generation and blob names are random and never reused.
 */
import { type Commit, encodeJson, recordRange, whenUnlocked, writeUnchecked } from "./codec.ts";
import { blobKey, type GarbageKind, type Marker, markerKey, MarkerSchema } from "./layout.ts";

/** Staged data older than this, still unpublished, belongs to a writer that died. */
export const STAGED_TTL_MS = 60 * 60 * 1000;

/** Marks staged data in a commit of its own, before any of it is written. */
export async function markStaged(kv: Deno.Kv, kind: GarbageKind, id: string): Promise<void> {
  const marker: Marker = { at: Date.now(), staged: true };
  await whenUnlocked(() => kv.set(markerKey(kind, id), encodeJson(marker)));
}

/** Adds to `commit` the marker that retires a generation or blob. */
export function retireIn(commit: Commit, kind: GarbageKind, id: string): void {
  const marker: Marker = { at: Date.now(), staged: false };
  commit.set(markerKey(kind, id), encodeJson(marker));
}

/** Retires data in a commit of its own (staged data that will never be published). */
export async function retire(kv: Deno.Kv, kind: GarbageKind, id: string): Promise<void> {
  const marker: Marker = { at: Date.now(), staged: false };
  await whenUnlocked(() => kv.set(markerKey(kind, id), encodeJson(marker)));
}

/** Deletes the keys of one generation or blob, then its marker. */
export async function sweepOne(kv: Deno.Kv, kind: GarbageKind, id: string): Promise<number> {
  const selectors: Deno.KvListSelector[] = kind === "g"
    ? [{ prefix: ["t", id] }, { prefix: ["l", id] }]
    : [recordRange(blobKey(id))];
  let deleted = 0;
  for (const selector of selectors) {
    const keys: Deno.KvKey[] = [];
    for await (const e of kv.list(selector, { batchSize: 1000 })) keys.push(e.key);
    await writeUnchecked(kv, keys.map((key) => ({ delete: key })));
    deleted += keys.length;
  }
  await whenUnlocked(() => kv.delete(markerKey(kind, id)));
  return deleted;
}

/** Sweeps every retired marker, and staged ones older than {@link STAGED_TTL_MS}. */
export async function sweepAll(kv: Deno.Kv, now = Date.now()): Promise<number> {
  const due: [GarbageKind, string][] = [];
  for await (const e of kv.list<Uint8Array>({ prefix: ["gc"] })) {
    const [, kind, id] = e.key;
    if ((kind !== "g" && kind !== "b") || typeof id !== "string") continue;
    const parsed = MarkerSchema.safeParse(JSON.parse(new TextDecoder().decode(e.value)));
    if (!parsed.success || !parsed.data.staged || now - parsed.data.at > STAGED_TTL_MS) due.push([kind, id]);
  }
  let deleted = 0;
  for (const [kind, id] of due) deleted += await sweepOne(kv, kind, id);
  return deleted;
}
