/**
 * Garbage collection for the KV store: retired generations and snapshot blobs, and staged ones whose
 * writer died before publishing them.
 *
 * Data is staged (written where no reader looks) under a marker `{ staged: true }`; the commit that
 * publishes it deletes the marker, the commit that unpublishes old data adds `{ staged: false }` for
 * it. So everything unreachable is named by a marker, and sweeping a marker's keys needs no checks:
 * generation and blob names are random and never reused.
 *
 * Staged data is its writer's until the writer is dead: the marker names the writer's lease
 * (liveness.ts), and a sweep takes staged data only from owners without a live lease. So a start
 * right after a crash reclaims what the killed writer staged (the database stays within twice its
 * live data however often writers die), and never what a live writer is staging. Markers without an
 * owner (older databases) wait {@link STAGED_TTL_MS}.
 */
import { decodeJsonAs, encodeJson } from "./codec.ts";
import { type Commit, writeUnchecked } from "./commit.ts";
import { type GarbageKind, type KvLayout, type KvPlace, type Marker, MarkerSchema } from "./layout.ts";
import { livingOwners } from "./liveness.ts";
import { whenUnlocked } from "./retry.ts";

/** Staged data without an owner, older than this and still unpublished, belongs to a writer that died. */
export const STAGED_TTL_MS = 60 * 60 * 1000;

function marker(staged: boolean, owner?: string): Uint8Array {
  return encodeJson({ at: Date.now(), staged, ...(owner ? { owner } : {}) } satisfies Marker);
}

/** Marks staged data in a commit of its own, before any of it is written. */
export async function markStaged(
  { kv, layout, owner }: KvPlace,
  kind: GarbageKind,
  id: string,
): Promise<void> {
  await whenUnlocked(() => kv.set(layout.marker(kind, id), marker(true, owner)));
}

/** Adds to `commit` the marker that retires a generation or blob. */
export function retireIn(layout: KvLayout, commit: Commit, kind: GarbageKind, id: string): void {
  commit.set(layout.marker(kind, id), marker(false));
}

/** Retires data in a commit of its own (staged data that will never be published). */
export async function retire({ kv, layout }: KvPlace, kind: GarbageKind, id: string): Promise<void> {
  await whenUnlocked(() => kv.set(layout.marker(kind, id), marker(false)));
}

/** Deletes the keys of one generation or blob, then its marker; returns how many keys it deleted. */
export async function sweepOne({ kv, layout }: KvPlace, kind: GarbageKind, id: string): Promise<number> {
  let deleted = 0;
  for (const selector of layout.garbage(kind, id)) {
    const keys: Deno.KvKey[] = [];
    for await (const e of kv.list(selector, { batchSize: 1000 })) keys.push(e.key);
    await writeUnchecked(kv, keys.map((key) => ({ delete: key })));
    deleted += keys.length;
  }
  await whenUnlocked(() => kv.delete(layout.marker(kind, id)));
  return deleted + 1;
}

/** What a sweep did: keys deleted, and staged markers left to owners that still hold a lease. */
export interface SweepResult {
  /** Keys deleted, markers included. */
  deleted: number;
  /** Staged data kept because its owner's lease is alive (swept once the lease runs out). */
  kept: number;
  /** Why the sweep stopped before it was done (the rest is swept after a later change). */
  error?: unknown;
}

/**
 * Sweeps every retired marker, staged ones whose owner holds no live lease, and ownerless staged ones
 * older than {@link STAGED_TTL_MS}. Run in the store's queue, so staging of this store's own (a change
 * that failed half-way) is abandoned too.
 */
export async function sweepAll(place: KvPlace, now = Date.now()): Promise<SweepResult> {
  const living = await livingOwners(place.kv, now);
  const due: [GarbageKind, string][] = [];
  let kept = 0;
  for await (const e of place.kv.list<Uint8Array>(place.layout.markers())) {
    const named = place.layout.markerOf(e.key);
    if (!named) continue;
    const parsed = decodeJsonAs(MarkerSchema, e.value);
    const abandoned = !parsed || !parsed.staged ||
      (parsed.owner === undefined
        ? now - parsed.at > STAGED_TTL_MS
        : parsed.owner === place.owner || !living.has(parsed.owner));
    if (abandoned) due.push([named.kind, named.id]);
    else kept++;
  }
  let deleted = 0;
  for (const [kind, id] of due) deleted += await sweepOne(place, kind, id);
  return { deleted, kept };
}
