/**
 * Task trees in Deno KV: one record per task, a per-process cache, and atomic changes.
 *
 * Reading: one `get` of the session meta per operation. When its versionstamp is the cached one,
 * the cached tree is current. Otherwise the change log names the records other processes wrote since
 * (catch-up), or, when the log does not reach back or the generation changed, the whole generation
 * is listed. Either read is repeated until the meta is unchanged across it, so it is a snapshot.
 *
 * Writing (the atomicity decision): every change is one atomic commit that checks the meta's
 * versionstamp (a concurrent writer makes it fail; the change is then re-run on the fresh tree) and
 * writes the records the transaction touched, the meta, and a log entry.
 * - Removed tasks need no writes to leave the tree: the parent's (or root) record drops their ids.
 *   Their keys are deleted in the same commit as far as it has room; the rest stay unreachable and
 *   are swept afterwards by commits that check the meta, so a sweep never deletes a live record.
 *   A delete of a 50,000-task subtree is therefore one small commit.
 * - Touched records that do not fit in one commit (1000 mutations, 800 KiB: e.g. 500 new tasks
 *   with long descriptions) go to a new generation: the whole tree is written under a fresh random
 *   prefix that no reader looks at, then one checked commit flips the meta to it. O(session size),
 *   rare, and still all-or-nothing; the old generation is retired and swept.
 */
import type { Task } from "../../domain/schemas.ts";
import { TaskTree, type TreeChanges } from "../../domain/task_tree.ts";
import {
  CHUNK_BYTES,
  chunkCount,
  chunkKeys,
  Commit,
  decodeJson,
  decodeRecord,
  encodeJson,
  encodeRecord,
  groupRecords,
  recordRange,
  writeUnchecked,
} from "./codec.ts";
import {
  LOG_KEEP,
  LogEntrySchema,
  logKey,
  markerKey,
  metaKey,
  newName,
  type SessionMeta,
  SessionMetaSchema,
  STORE_VERSION_KEY,
  taskKey,
} from "./layout.ts";
import { applyDelta, parseDelta, parseRecord, recordOf, RootRecordSchema } from "./records.ts";
import { markStaged, retire, retireIn, sweepOne } from "./sweeper.ts";

/** More changed ids than this since the cached version: reload the whole session instead. */
const CATCH_UP_MAX = 2000;
/** Attempts of a change that keeps meeting concurrent writers before it gives up. */
const MAX_ATTEMPTS = 50;

/** A session as this process last read or wrote it. */
export interface CachedSession {
  tree: TaskTree;
  gen: string;
  seq: number;
  /** The meta's versionstamp at which `tree` is exact. */
  versionstamp: string;
  /** Chunk count of every record stored in more than one chunk. */
  chunks: Map<string, number>;
}

/** Options of {@link KvSessions}. */
export interface KvSessionsOptions {
  /** Runs a job after the current operation, in the store's queue (garbage sweeps). */
  defer: (job: () => Promise<void>) => void;
}

type RawRecords = Map<string, Uint8Array[] | null>;

/** How often each path ran in this process (for tests, logs and the benchmark). */
export interface KvSessionStats {
  /** Sessions read whole (first use, another generation, or the log did not reach back). */
  fullLoads: number;
  /** Sessions brought up to date from the change log. */
  catchUps: number;
  /** Changes too big for one commit, published as a new generation. */
  flips: number;
  /** Commits refused by a concurrent writer's change and re-run. */
  conflicts: number;
}

/** See the module doc. Not safe for concurrent calls: the store runs them one at a time. */
export class KvSessions {
  readonly #kv: Deno.Kv;
  readonly #defer: (job: () => Promise<void>) => void;
  readonly #cache = new Map<string, CachedSession>();
  /** See {@link KvSessionStats}. */
  readonly stats: KvSessionStats = { fullLoads: 0, catchUps: 0, flips: 0, conflicts: 0 };

  constructor(kv: Deno.Kv, options: KvSessionsOptions) {
    this.#kv = kv;
    this.#defer = options.defer;
  }

  /** Ids of the sessions that exist. */
  async list(): Promise<string[]> {
    const ids: string[] = [];
    for await (const e of this.#kv.list({ prefix: ["m"] })) ids.push(String(e.key[1]));
    return ids;
  }

  /** Forgets every cached tree (after an import). */
  invalidate(): void {
    this.#cache.clear();
  }

  /** The session as stored now, or undefined when it does not exist. */
  async current(sessionId: string): Promise<CachedSession | undefined> {
    let entry = await this.#kv.get<Uint8Array>(metaKey(sessionId));
    for (;;) {
      if (entry.value === null) {
        this.#cache.delete(sessionId);
        return undefined;
      }
      const cached = this.#cache.get(sessionId);
      if (cached?.versionstamp === entry.versionstamp) return cached;
      const meta = parseMeta(entry.value, sessionId);
      const delta = cached ? await this.#readDelta(cached, meta) : undefined;
      const all = delta ? undefined : await this.#readAll(meta.gen);
      const again = await this.#kv.get<Uint8Array>(metaKey(sessionId));
      if (again.versionstamp !== entry.versionstamp) {
        entry = again;
        continue;
      }
      const session = delta
        ? caughtUp(cached!, meta, entry.versionstamp, delta)
        : this.#build(sessionId, meta, entry.versionstamp, all!);
      if (!session) {
        // The log did not add up: read the whole session on the next round.
        this.#cache.delete(sessionId);
        continue;
      }
      if (delta) this.stats.catchUps++;
      else this.stats.fullLoads++;
      this.#cache.set(sessionId, session);
      return session;
    }
  }

  /** Runs `fn` on the session's tree and commits what it changed; re-runs it after a conflict. */
  async update<T>(sessionId: string, fn: (tree: TaskTree) => T): Promise<T> {
    for (let attempt = 1;; attempt++) {
      const session = await this.current(sessionId);
      const tree = session?.tree ?? new TaskTree();
      const { result, changes, rollback } = tree.transact(fn);
      if (session && !changed(changes)) return result;
      let next: CachedSession | null;
      try {
        next = await this.#commit(sessionId, session, tree, changes);
      } catch (error) {
        rollback();
        this.#cache.delete(sessionId);
        throw error;
      }
      if (next) {
        this.#cache.set(sessionId, next);
        return result;
      }
      rollback();
      this.stats.conflicts++;
      if (attempt >= MAX_ATTEMPTS) {
        throw new Error(
          `Session "${sessionId}" kept changing under this write (${attempt} attempts); nothing was changed. Try again.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 2)));
    }
  }

  /**
   * Writes `tree` under a new generation nobody reads yet (marked staged); returns the generation.
   * Publishing it is the caller's checked commit of the meta (and of the marker's deletion). Also
   * returns the chunk count of every record stored in more than one chunk.
   */
  async stage(tree: TaskTree, gen = newName()): Promise<{ gen: string; chunks: Map<string, number> }> {
    const chunks = new Map<string, number>();
    await markStaged(this.#kv, "g", gen);
    await writeUnchecked(this.#kv, recordsOf(tree, gen, chunks));
    return { gen, chunks };
  }

  async #commit(
    sessionId: string,
    session: CachedSession | undefined,
    tree: TaskTree,
    changes: TreeChanges,
  ): Promise<CachedSession | null> {
    const gen = session?.gen ?? newName();
    const seq = (session?.seq ?? 0) + 1;
    const commit = new Commit()
      .check(metaKey(sessionId), session?.versionstamp ?? null)
      .sum(STORE_VERSION_KEY, 1n)
      .set(metaKey(sessionId), encodeJson({ gen, seq } satisfies SessionMeta));
    const ids = [...changes.touched];
    if (!session || changes.rootsChanged) ids.push("");
    const chunks = new Map(session?.chunks);
    for (const id of ids) {
      const key = taskKey(gen, id);
      const parts = encodeRecord(key, recordOf(tree, id));
      if (!commit.fitsRecord(parts)) return this.#flip(sessionId, session, tree);
      commit.setRecord(parts);
      for (const stale of chunkKeys(key, parts.length, chunks.get(id) ?? 1)) commit.delete(stale);
      if (parts.length > 1) chunks.set(id, parts.length);
      else chunks.delete(id);
    }
    let log = encodeJson({ ids: [...ids, ...changes.removed] });
    if (log.length > CHUNK_BYTES) log = encodeJson({ full: true });
    commit.set(logKey(gen, seq), log);
    if (seq > LOG_KEEP) commit.delete(logKey(gen, seq - LOG_KEEP));
    if (!commit.fits()) return this.#flip(sessionId, session, tree);
    const leftovers: Deno.KvKey[] = [];
    for (const id of changes.removed) {
      const key = taskKey(gen, id);
      for (const k of [key, ...chunkKeys(key, 1, chunks.get(id) ?? 1)]) {
        if (commit.fitsDelete(k)) commit.delete(k);
        else leftovers.push(k);
      }
      chunks.delete(id);
    }
    const done = await commit.commit(this.#kv);
    if (!done) return null;
    if (leftovers.length > 0) this.#defer(() => this.#sweepUnreachable(sessionId, leftovers));
    return { tree, gen, seq, versionstamp: done.versionstamp, chunks };
  }

  /** A change too big for one commit: a new generation, published by one checked commit. */
  async #flip(
    sessionId: string,
    session: CachedSession | undefined,
    tree: TaskTree,
  ): Promise<CachedSession | null> {
    this.stats.flips++;
    const { gen, chunks } = await this.stage(tree);
    const seq = (session?.seq ?? 0) + 1;
    const commit = new Commit()
      .check(metaKey(sessionId), session?.versionstamp ?? null)
      .sum(STORE_VERSION_KEY, 1n)
      .set(metaKey(sessionId), encodeJson({ gen, seq } satisfies SessionMeta))
      .delete(markerKey("g", gen));
    if (session) retireIn(commit, "g", session.gen);
    const done = await commit.commit(this.#kv);
    const dead = done ? session?.gen : gen;
    if (!done) await retire(this.#kv, "g", gen);
    if (dead) this.#defer(() => sweepOne(this.#kv, "g", dead).then(() => {}));
    if (!done) return null;
    return { tree, gen, seq, versionstamp: done.versionstamp, chunks };
  }

  /** The records that other writers changed since `cached`, from the change log; undefined: read all. */
  async #readDelta(cached: CachedSession, meta: SessionMeta): Promise<RawRecords | undefined> {
    if (meta.gen !== cached.gen || meta.seq <= cached.seq || meta.seq - cached.seq >= LOG_KEEP) {
      return undefined;
    }
    const ids = new Set<string>();
    let expect = cached.seq + 1;
    const range = { start: logKey(meta.gen, cached.seq + 1), end: logKey(meta.gen, meta.seq + 1) };
    for await (const e of this.#kv.list<Uint8Array>(range)) {
      if (e.key[2] !== expect++) return undefined;
      const log = LogEntrySchema.safeParse(decodeJson(e.value));
      if (!log.success || "full" in log.data) return undefined;
      for (const id of log.data.ids) ids.add(id);
      if (ids.size > CATCH_UP_MAX) return undefined;
    }
    if (expect !== meta.seq + 1) return undefined;
    const out: RawRecords = new Map();
    const list = [...ids];
    const batches: Promise<void>[] = [];
    for (let i = 0; i < list.length; i += 10) {
      const batch = list.slice(i, i + 10);
      batches.push((async () => {
        const entries = await this.#kv.getMany<Uint8Array[]>(batch.map((id) => taskKey(meta.gen, id)));
        for (const [j, e] of entries.entries()) {
          const id = batch[j]!;
          if (e.value === null) out.set(id, null);
          else if (chunkCount(e.value) === 1) out.set(id, [e.value]);
          else {
            const record = await readRecordChunks(this.#kv, taskKey(meta.gen, id));
            out.set(id, record);
          }
        }
      })());
    }
    await Promise.all(batches);
    return out;
  }

  /** Every record of a generation, with the keys that belong to no record (stale chunks). */
  async #readAll(gen: string): Promise<{ records: RawRecords; extra: Deno.KvKey[] }> {
    const records: RawRecords = new Map();
    const extra: Deno.KvKey[] = [];
    const entries = this.#kv.list<Uint8Array>({ prefix: ["t", gen] }, { batchSize: 1000 });
    for await (const r of groupRecords(entries, 3)) {
      extra.push(...r.extra);
      if (r.chunks.length === 0) continue;
      if (r.chunks.length < chunkCount(r.chunks[0]!)) extra.push(r.key);
      else records.set(String(r.key[2]), r.chunks);
    }
    return { records, extra };
  }

  #build(
    sessionId: string,
    meta: SessionMeta,
    versionstamp: string,
    { records, extra }: { records: RawRecords; extra: Deno.KvKey[] },
  ): CachedSession {
    const problem = (what: string) =>
      new Error(`Deno KV session "${sessionId}" is inconsistent: ${what}. Restore it from an export.`);
    const rootChunks = records.get("");
    if (!rootChunks) throw problem("its root record is missing");
    const tasks = new Map<string, { task: Task; childIds: string[] }>();
    const chunks = new Map<string, number>();
    for (const [id, parts] of records) {
      if (id === "" || !parts) continue;
      const record = parseRecord(parts, id);
      if (!record) throw problem(`task record "${id}" is malformed`);
      tasks.set(id, record);
      if (parts.length > 1) chunks.set(id, parts.length);
    }
    const root = RootRecordSchema.safeParse(decodeRecord(rootChunks));
    if (!root.success) throw problem("its root record is malformed");
    const resolve = (ids: string[], owner: string): Task[] =>
      ids.map((id) =>
        tasks.get(id)?.task ?? (() => {
          throw problem(`${owner} lists a missing task "${id}"`);
        })()
      );
    const roots = resolve(root.data.tasks, "the root record");
    const seen = new Set<string>();
    const stack = [...roots];
    while (stack.length > 0) {
      const task = stack.pop()!;
      if (seen.has(task.id)) throw problem(`task "${task.id}" is listed twice`);
      seen.add(task.id);
      task.tasks = resolve(tasks.get(task.id)!.childIds, `task "${task.id}"`);
      stack.push(...task.tasks);
    }
    const garbage = [...extra];
    for (const id of tasks.keys()) {
      if (!seen.has(id)) {
        const key = taskKey(meta.gen, id);
        garbage.push(key, ...chunkKeys(key, 1, chunks.get(id) ?? 1));
        chunks.delete(id);
      }
    }
    if (garbage.length > 0) this.#defer(() => this.#sweepUnreachable(sessionId, garbage));
    return { tree: new TaskTree(roots), gen: meta.gen, seq: meta.seq, versionstamp, chunks };
  }

  /**
   * Deletes task keys that no longer belong to the tree, in commits that check the session meta: a
   * key is deleted only while the version at which it was judged unreachable is still current.
   */
  async #sweepUnreachable(sessionId: string, keys: Deno.KvKey[]): Promise<void> {
    for (let attempt = 0; attempt < 5 && keys.length > 0; attempt++) {
      const session = await this.current(sessionId);
      if (!session) return;
      keys = keys.filter((key) => isGarbage(session, key));
      let i = 0;
      for (let ok = true; ok && i < keys.length;) {
        const commit = new Commit().check(metaKey(sessionId), session.versionstamp);
        const start = i;
        while (i < keys.length && commit.fitsDelete(keys[i]!)) commit.delete(keys[i++]!);
        ok = (await commit.commit(this.#kv)) !== null;
        if (!ok) i = start;
      }
      keys = keys.slice(i);
    }
  }
}

function isGarbage(session: CachedSession, key: Deno.KvKey): boolean {
  // Keys of another generation are swept with their generation.
  if (key[1] !== session.gen) return false;
  const id = String(key[2]);
  if (id === "") return key.length === 4 && Number(key[3]) >= (session.chunks.get(id) ?? 1);
  if (!session.tree.get(id)) return true;
  return key.length === 4 && Number(key[3]) >= (session.chunks.get(id) ?? 1);
}

function changed(changes: TreeChanges): boolean {
  return changes.rootsChanged || changes.touched.size > 0 || changes.removed.size > 0;
}

function parseMeta(bytes: Uint8Array, sessionId: string): SessionMeta {
  const parsed = SessionMetaSchema.safeParse(decodeJson(bytes));
  if (!parsed.success) throw new Error(`Deno KV session "${sessionId}" has a malformed meta record.`);
  return parsed.data;
}

async function readRecordChunks(kv: Deno.Kv, key: Deno.KvKey): Promise<Uint8Array[] | null> {
  const chunks: Uint8Array[] = [];
  let count = 0;
  for await (const e of kv.list<Uint8Array>(recordRange(key), { batchSize: 500 })) {
    if (chunks.length === 0) {
      if (e.key.length !== key.length) return null;
      count = chunkCount(e.value);
    } else if (e.key[key.length] !== chunks.length) return null;
    chunks.push(e.value);
    if (chunks.length === count) return chunks;
  }
  return null;
}

/** Every record of `tree` under generation `gen`, the root record first; notes multi-chunk records. */
function* recordsOf(
  tree: TaskTree,
  gen: string,
  chunks: Map<string, number>,
): Generator<{ set: [Deno.KvKey, Uint8Array][] }> {
  const ids = [""];
  for (const { task } of tree.walk()) ids.push(task.id);
  for (const id of ids) {
    const set = encodeRecord(taskKey(gen, id), recordOf(tree, id));
    if (set.length > 1) chunks.set(id, set.length);
    yield { set };
  }
}

/** The cached session brought up to `records` from the change log; undefined: read it whole. */
function caughtUp(
  cached: CachedSession,
  meta: SessionMeta,
  versionstamp: string,
  records: RawRecords,
): CachedSession | undefined {
  const delta = parseDelta(records);
  const tree = delta && applyDelta(cached.tree, delta);
  if (!tree) return undefined;
  const chunks = new Map(cached.chunks);
  for (const [id, parts] of records) {
    if (parts && parts.length > 1) chunks.set(id, parts.length);
    else chunks.delete(id);
  }
  return { tree, gen: meta.gen, seq: meta.seq, versionstamp, chunks };
}
