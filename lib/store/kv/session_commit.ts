/**
 * Writing a KV session (sessions.ts): every change is one atomic commit that checks the meta's
 * versionstamp and writes the touched records, the meta, a log entry and the history entry; a change
 * that does not fit goes to a new generation, staged where no reader looks and published by one
 * checked commit of the meta.
 */
import type { RecordedChange } from "../../domain/history.ts";
import type { TaskTree, TreeChanges } from "../../domain/task_tree.ts";
import { CHUNK_BYTES, encodeJson, encodeRecord } from "./codec.ts";
import { Commit, writeUnchecked } from "./commit.ts";
import type { KvHistory } from "./kv_history.ts";
import { type KvLayout, type KvPlace, LOG_KEEP, newName, recordKeys, type SessionMeta } from "./layout.ts";
import { recordOf } from "./records.ts";
import type { CachedSession } from "./session_load.ts";
import { markStaged, retire, retireIn, sweepOne } from "./sweeper.ts";

/** What a commit needs from the sessions it writes for (sessions.ts): the place, history and deferred jobs. */
export interface CommitContext {
  place: KvPlace;
  history: KvHistory;
  /** Counts a change published as a new generation. */
  onFlip: () => void;
  /** Runs a job after the current operation, in the store's queue. */
  defer: (job: () => Promise<void>) => void;
  /** Sweeps keys that no longer belong to the session, later. */
  sweepLater: (sessionId: string, keys: Deno.KvKey[]) => void;
}

/**
 * Writes `tree` under a new generation nobody reads yet (marked staged); returns the generation.
 * Publishing it is the caller's checked commit of the meta (and of the marker's deletion). Also
 * returns the chunk count of every record stored in more than one chunk.
 */
export async function stageTree(
  place: KvPlace,
  tree: TaskTree,
  gen: string = newName(),
): Promise<{ gen: string; chunks: Map<string, number> }> {
  const chunks = new Map<string, number>();
  await markStaged(place, "g", gen);
  await writeUnchecked(place.kv, recordsOf(place.layout, tree, gen, chunks));
  return { gen, chunks };
}

/**
 * Commits what a transaction changed, with its history entry, in one checked commit; a change too
 * big for one commit goes to a new generation. Null: a concurrent writer changed the session first.
 */
export async function commitChange(
  ctx: CommitContext,
  sessionId: string,
  session: CachedSession | undefined,
  tree: TaskTree,
  changes: TreeChanges,
  entry: RecordedChange | undefined,
): Promise<CachedSession | null> {
  const { place } = ctx;
  const { layout } = place;
  const gen = session?.gen ?? newName();
  const seq = (session?.seq ?? 0) + 1;
  const at = revisionOf(session, entry);
  const commit = metaCommit(place, sessionId, session, { gen, seq, ...at });
  const ids = [...changes.touched];
  if (!session || changes.rootsChanged) ids.push("");
  const chunks = new Map(session?.chunks);
  for (const id of ids) {
    const key = layout.task(gen, id);
    const parts = encodeRecord(key, recordOf(tree, id));
    if (!commit.fitsRecord(parts)) return flip(ctx, sessionId, session, tree, entry);
    commit.replaceRecord(parts, chunks.get(id) ?? 1);
    if (parts.length > 1) chunks.set(id, parts.length);
    else chunks.delete(id);
  }
  let log = encodeJson({ ids: [...ids, ...changes.removed] });
  if (log.length > CHUNK_BYTES) log = encodeJson({ full: true });
  commit.set(layout.log(gen, seq), log);
  if (seq > LOG_KEEP) commit.delete(layout.log(gen, seq - LOG_KEEP));
  if (!commit.fits()) return flip(ctx, sessionId, session, tree, entry);
  const staged = entry && at.line ? await ctx.history.addTo(commit, at.line, entry) : undefined;
  if (!commit.fits()) {
    await ctx.history.discard(staged);
    return flip(ctx, sessionId, session, tree, entry);
  }
  const leftovers: Deno.KvKey[] = [];
  for (const id of changes.removed) {
    for (const k of recordKeys(layout.task(gen, id), chunks.get(id) ?? 1)) {
      if (commit.fitsDelete(k)) commit.delete(k);
      else leftovers.push(k);
    }
    chunks.delete(id);
  }
  const done = await commit.commit(place.kv);
  if (!done) {
    await ctx.history.discard(staged);
    return null;
  }
  if (leftovers.length > 0) ctx.sweepLater(sessionId, leftovers);
  return { tree, gen, seq, versionstamp: done.versionstamp, chunks, ...at };
}

/** A change too big for one commit: a new generation, published by one checked commit. */
async function flip(
  ctx: CommitContext,
  sessionId: string,
  session: CachedSession | undefined,
  tree: TaskTree,
  entry: RecordedChange | undefined,
): Promise<CachedSession | null> {
  const { place } = ctx;
  ctx.onFlip();
  const { gen, chunks } = await stageTree(place, tree);
  const seq = (session?.seq ?? 0) + 1;
  const { layout } = place;
  const at = revisionOf(session, entry);
  const commit = metaCommit(place, sessionId, session, { gen, seq, ...at }).delete(layout.marker("g", gen));
  if (session) retireIn(layout, commit, "g", session.gen);
  const staged = entry && at.line ? await ctx.history.addTo(commit, at.line, entry) : undefined;
  const done = await commit.commit(place.kv);
  if (!done) await ctx.history.discard(staged);
  const dead = done ? session?.gen : gen;
  if (!done) await retire(place, "g", gen);
  if (dead) ctx.defer(() => sweepOne(place, "g", dead).then(() => {}));
  if (!done) return null;
  return { tree, gen, seq, versionstamp: done.versionstamp, chunks, ...at };
}

/** The one commit that changes a session: checks its meta and sets it to `meta`, bumping the store version. */
function metaCommit(
  place: KvPlace,
  sessionId: string,
  session: CachedSession | undefined,
  meta: SessionMeta,
): Commit {
  const { layout } = place;
  return new Commit()
    .check(layout.meta(sessionId), session?.versionstamp ?? null)
    .countChange(layout)
    .set(layout.meta(sessionId), encodeJson(meta));
}

/** The revision and history line after a change that records `entry` (none: the session's as they are). */
function revisionOf(
  session: CachedSession | undefined,
  entry: RecordedChange | undefined,
): { rev: number; line: string | undefined } {
  if (!entry) return { rev: session?.rev ?? 0, line: session?.line };
  return { rev: entry.revision, line: session?.line ?? newName() };
}

/** Every record of `tree` under generation `gen`, the root record first; notes multi-chunk records. */
function* recordsOf(
  layout: KvLayout,
  tree: TaskTree,
  gen: string,
  chunks: Map<string, number>,
): Generator<{ set: [Deno.KvKey, Uint8Array][] }> {
  const ids = [""];
  for (const { task } of tree.walk()) ids.push(task.id);
  for (const id of ids) {
    const set = encodeRecord(layout.task(gen, id), recordOf(tree, id));
    if (set.length > 1) chunks.set(id, set.length);
    yield { set };
  }
}
