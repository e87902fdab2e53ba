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
 * - A change that changes something also bumps the session's revision in the meta and writes its
 *   history entry in the same commit (history.ts); one that changes nothing commits nothing, and one
 *   that only renews a lease commits its records without a revision.
 */
import {
  type HistoryContext,
  historyEntry,
  type HistoryPage,
  leaseRenewed,
  recordChange,
  type RecordedChange,
  type TreeChangeOptions,
  type TreeUpdate,
} from "../../domain/history.ts";
import type { Task } from "../../domain/schemas.ts";
import { TaskTree, type TreeChanges } from "../../domain/task_tree.ts";
import { CHUNK_BYTES, chunkCount, decodeJsonAs, encodeJson, encodeRecord } from "./codec.ts";
import { Commit, writeUnchecked } from "./commit.ts";
import {
  type KvLayout,
  type KvPlace,
  LOG_KEEP,
  LogEntrySchema,
  newName,
  recordKeys,
  type SessionMeta,
  SessionMetaSchema,
} from "./layout.ts";
import { KvHistory } from "./kv_history.ts";
import { readChunks, readRecords } from "./reader.ts";
import { applyDelta, parseDelta, parseRecord, parseRoot, recordOf } from "./records.ts";
import { AGAIN, ON_CONFLICT, retry, type RetryPolicy } from "./retry.ts";
import { markStaged, retire, retireIn, sweepOne } from "./sweeper.ts";

/** A sweep of unreachable keys: a few rounds, then left to a later one (it fails harmlessly). */
const SWEEP: RetryPolicy = { attempts: 5, pauseMs: () => 0 };
/** More changed ids than this since the cached version: reload the whole session instead. */
const CATCH_UP_MAX = 2000;

/** A session as this process last read or wrote it. */
export interface CachedSession {
  tree: TaskTree;
  gen: string;
  seq: number;
  /** The meta's versionstamp at which `tree` is exact. */
  versionstamp: string;
  /** The session's revision. */
  rev: number;
  /** The session's history line (none before its first recorded change). */
  line: string | undefined;
  /** Chunk count of every record stored in more than one chunk. */
  chunks: Map<string, number>;
}

/** Options of {@link KvSessions}. */
export interface KvSessionsOptions {
  /** Runs a job after the current operation, in the store's queue (garbage sweeps). */
  defer: (job: () => Promise<void>) => void;
  /** History entries kept per session (`HISTORY_SIZE`). */
  historySize: number;
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
  readonly #place: KvPlace;
  readonly #defer: (job: () => Promise<void>) => void;
  readonly #cache = new Map<string, CachedSession>();
  readonly #history: KvHistory;
  /** See {@link KvSessionStats}. */
  readonly stats: KvSessionStats = { fullLoads: 0, catchUps: 0, flips: 0, conflicts: 0 };

  constructor(place: KvPlace, options: KvSessionsOptions) {
    this.#kv = place.kv;
    this.#place = place;
    this.#defer = options.defer;
    this.#history = new KvHistory(place, options.historySize);
  }

  /** Ids of the sessions that exist. */
  async list(): Promise<string[]> {
    const ids: string[] = [];
    const { layout } = this.#place;
    for await (const e of this.#kv.list(layout.metas())) ids.push(layout.sessionOf(e.key));
    return ids;
  }

  /** Every session's meta, by session id. */
  async metas(): Promise<Map<string, SessionMeta>> {
    const metas = new Map<string, SessionMeta>();
    const { layout } = this.#place;
    for await (const e of this.#kv.list<Uint8Array>(layout.metas())) {
      const id = layout.sessionOf(e.key);
      metas.set(id, parseMeta(e.value, id));
    }
    return metas;
  }

  /** Forgets every cached tree (after an import). */
  invalidate(): void {
    this.#cache.clear();
  }

  /** The session as stored now, or undefined when it does not exist. */
  async current(sessionId: string): Promise<CachedSession | undefined> {
    let entry = await this.#kv.get<Uint8Array>(this.#place.layout.meta(sessionId));
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
      const again = await this.#kv.get<Uint8Array>(this.#place.layout.meta(sessionId));
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

  /** The session's revision and newest `limit` history entries. */
  async history(sessionId: string, limit: number): Promise<HistoryPage> {
    const entry = await this.#kv.get<Uint8Array>(this.#place.layout.meta(sessionId));
    const meta = entry.value === null ? undefined : parseMeta(entry.value, sessionId);
    return await this.#history.page(meta?.line, meta?.rev ?? 0, limit);
  }

  /**
   * Runs `fn` on the session's tree and commits what it changed with its history entry; re-runs it
   * after a conflict.
   */
  async update<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryContext) => T,
    options: TreeChangeOptions,
  ): Promise<TreeUpdate<T>> {
    return await retry(ON_CONFLICT, async () => {
      const session = await this.current(sessionId);
      const tree = session?.tree ?? new TaskTree();
      const rev = session?.rev ?? 0;
      const view = await this.#history.view(session?.line, rev, options.undoTo);
      const { result, changes, rollback } = tree.transact((t) => fn(t, view));
      const delta = recordChange(tree, changes);
      // Nothing to write, unless a lease was renewed: written, with no revision (history.ts).
      if (session && delta.length === 0 && !leaseRenewed(tree, changes)) return { result, revision: rev };
      const entry: RecordedChange | undefined = delta.length === 0
        ? undefined
        : historyEntry(tree, delta, { revision: rev + 1, tool: options.tool, at: new Date().toISOString() });
      let next: CachedSession | null;
      try {
        next = await this.#commit(sessionId, session, tree, changes, entry);
      } catch (error) {
        rollback();
        this.#cache.delete(sessionId);
        throw error;
      }
      if (next) {
        this.#cache.set(sessionId, next);
        const line = next.line;
        if (entry && line && this.#history.due(next.rev)) {
          this.#defer(() => this.#history.trim(line, next.rev));
        }
        return { result, revision: next.rev };
      }
      rollback();
      this.stats.conflicts++;
      return AGAIN;
    }, (attempts) =>
      new Error(
        `Session "${sessionId}" kept changing under this write (${attempts} attempts); nothing was changed. Try again.`,
      ));
  }

  /**
   * Writes `tree` under a new generation nobody reads yet (marked staged); returns the generation.
   * Publishing it is the caller's checked commit of the meta (and of the marker's deletion). Also
   * returns the chunk count of every record stored in more than one chunk.
   */
  async stage(tree: TaskTree, gen = newName()): Promise<{ gen: string; chunks: Map<string, number> }> {
    const chunks = new Map<string, number>();
    await markStaged(this.#place, "g", gen);
    await writeUnchecked(this.#kv, recordsOf(this.#place.layout, tree, gen, chunks));
    return { gen, chunks };
  }

  async #commit(
    sessionId: string,
    session: CachedSession | undefined,
    tree: TaskTree,
    changes: TreeChanges,
    entry: RecordedChange | undefined,
  ): Promise<CachedSession | null> {
    const { layout } = this.#place;
    const gen = session?.gen ?? newName();
    const seq = (session?.seq ?? 0) + 1;
    const at = revisionOf(session, entry);
    const commit = this.#metaCommit(sessionId, session, { gen, seq, ...at });
    const ids = [...changes.touched];
    if (!session || changes.rootsChanged) ids.push("");
    const chunks = new Map(session?.chunks);
    for (const id of ids) {
      const key = layout.task(gen, id);
      const parts = encodeRecord(key, recordOf(tree, id));
      if (!commit.fitsRecord(parts)) return this.#flip(sessionId, session, tree, entry);
      commit.replaceRecord(parts, chunks.get(id) ?? 1);
      if (parts.length > 1) chunks.set(id, parts.length);
      else chunks.delete(id);
    }
    let log = encodeJson({ ids: [...ids, ...changes.removed] });
    if (log.length > CHUNK_BYTES) log = encodeJson({ full: true });
    commit.set(layout.log(gen, seq), log);
    if (seq > LOG_KEEP) commit.delete(layout.log(gen, seq - LOG_KEEP));
    if (!commit.fits()) return this.#flip(sessionId, session, tree, entry);
    const staged = entry && at.line ? await this.#history.addTo(commit, at.line, entry) : undefined;
    if (!commit.fits()) {
      await this.#history.discard(staged);
      return this.#flip(sessionId, session, tree, entry);
    }
    const leftovers: Deno.KvKey[] = [];
    for (const id of changes.removed) {
      for (const k of recordKeys(layout.task(gen, id), chunks.get(id) ?? 1)) {
        if (commit.fitsDelete(k)) commit.delete(k);
        else leftovers.push(k);
      }
      chunks.delete(id);
    }
    const done = await commit.commit(this.#kv);
    if (!done) {
      await this.#history.discard(staged);
      return null;
    }
    if (leftovers.length > 0) this.#defer(() => this.#sweepUnreachable(sessionId, leftovers));
    return { tree, gen, seq, versionstamp: done.versionstamp, chunks, ...at };
  }

  /** A change too big for one commit: a new generation, published by one checked commit. */
  async #flip(
    sessionId: string,
    session: CachedSession | undefined,
    tree: TaskTree,
    entry: RecordedChange | undefined,
  ): Promise<CachedSession | null> {
    this.stats.flips++;
    const { gen, chunks } = await this.stage(tree);
    const seq = (session?.seq ?? 0) + 1;
    const { layout } = this.#place;
    const at = revisionOf(session, entry);
    const commit = this.#metaCommit(sessionId, session, { gen, seq, ...at }).delete(layout.marker("g", gen));
    if (session) retireIn(layout, commit, "g", session.gen);
    const staged = entry && at.line ? await this.#history.addTo(commit, at.line, entry) : undefined;
    const done = await commit.commit(this.#kv);
    if (!done) await this.#history.discard(staged);
    const dead = done ? session?.gen : gen;
    if (!done) await retire(this.#place, "g", gen);
    if (dead) this.#defer(() => sweepOne(this.#place, "g", dead).then(() => {}));
    if (!done) return null;
    return { tree, gen, seq, versionstamp: done.versionstamp, chunks, ...at };
  }

  /** The one commit that changes a session: checks its meta and sets it to `meta`, bumping the store version. */
  #metaCommit(sessionId: string, session: CachedSession | undefined, meta: SessionMeta): Commit {
    const { layout } = this.#place;
    return new Commit()
      .check(layout.meta(sessionId), session?.versionstamp ?? null)
      .countChange(layout)
      .set(layout.meta(sessionId), encodeJson(meta));
  }

  /** The records that other writers changed since `cached`, from the change log; undefined: read all. */
  async #readDelta(cached: CachedSession, meta: SessionMeta): Promise<RawRecords | undefined> {
    if (meta.gen !== cached.gen || meta.seq <= cached.seq || meta.seq - cached.seq >= LOG_KEEP) {
      return undefined;
    }
    const ids = new Set<string>();
    let expect = cached.seq + 1;
    const { layout } = this.#place;
    const range = layout.logRange(meta.gen, cached.seq + 1, meta.seq + 1);
    for await (const e of this.#kv.list<Uint8Array>(range)) {
      if (layout.seqOf(e.key) !== expect++) return undefined;
      const log = decodeJsonAs(LogEntrySchema, e.value);
      if (!log || "full" in log) return undefined;
      for (const id of log.ids) ids.add(id);
      if (ids.size > CATCH_UP_MAX) return undefined;
    }
    if (expect !== meta.seq + 1) return undefined;
    const out: RawRecords = new Map();
    const list = [...ids];
    const batches: Promise<void>[] = [];
    for (let i = 0; i < list.length; i += 10) {
      const batch = list.slice(i, i + 10);
      batches.push((async () => {
        const entries = await this.#kv.getMany<Uint8Array[]>(batch.map((id) => layout.task(meta.gen, id)));
        for (const [j, e] of entries.entries()) {
          const id = batch[j]!;
          if (e.value === null) out.set(id, null);
          else if (chunkCount(e.value) === 1) out.set(id, [e.value]);
          else {
            const record = await readChunks(this.#kv, layout.task(meta.gen, id));
            out.set(id, record?.complete ? record.chunks : null);
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
    const { layout } = this.#place;
    const entries = this.#kv.list<Uint8Array>(layout.tasks(gen), { batchSize: 1000 });
    for await (const r of readRecords(entries, layout.taskKeyLength)) {
      extra.push(...r.extra);
      if (r.chunks.length === 0) continue;
      if (!r.complete) extra.push(r.key);
      else records.set(layout.taskOf(r.key).id, r.chunks);
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
    // Ids an older version wrote with lone surrogates are read with U+FFFD, as their keys hold them.
    let repaired = false;
    const onRename = () => (repaired = true);
    const tasks = new Map<string, { task: Task; childIds: string[] }>();
    const chunks = new Map<string, number>();
    for (const [id, parts] of records) {
      if (id === "" || !parts) continue;
      const record = parseRecord(parts, id, onRename);
      if (!record) throw problem(`task record "${id}" is malformed`);
      tasks.set(id, record);
      if (parts.length > 1) chunks.set(id, parts.length);
    }
    const rootIds = parseRoot(rootChunks, onRename);
    if (!rootIds) throw problem("its root record is malformed");
    const seen = new Set<string>();
    const dropped: string[] = [];
    const resolve = (ids: string[], owner: string): Task[] => {
      const list: Task[] = [];
      for (const id of ids) {
        const task = tasks.get(id)?.task;
        if (!task) throw problem(`${owner} lists a missing task "${id}"`);
        if (seen.has(id)) {
          // Two ids an older version kept apart became one key (and one record): list it once.
          if (!repaired) throw problem(`task "${id}" is listed twice`);
          dropped.push(`${owner} lists task ${JSON.stringify(id)} again`);
          continue;
        }
        seen.add(id);
        list.push(task);
      }
      return list;
    };
    const roots = resolve(rootIds, "the root record");
    const stack = [...roots];
    while (stack.length > 0) {
      const task = stack.pop()!;
      task.tasks = resolve(tasks.get(task.id)!.childIds, `task "${task.id}"`);
      stack.push(...task.tasks);
    }
    if (repaired) {
      this.#place.onRepair?.(
        `session ${
          JSON.stringify(sessionId)
        }: names stored by an older version with lone surrogates are read with U+FFFD in their place${
          dropped.length > 0
            ? `; ids that became one: ${dropped.join("; ")} (the one record kept is shown once)`
            : ""
        }`,
      );
    }
    const garbage = [...extra];
    for (const id of tasks.keys()) {
      if (!seen.has(id)) {
        garbage.push(...recordKeys(this.#place.layout.task(meta.gen, id), chunks.get(id) ?? 1));
        chunks.delete(id);
      }
    }
    if (garbage.length > 0) this.#defer(() => this.#sweepUnreachable(sessionId, garbage));
    const tree = new TaskTree(roots);
    return { tree, gen: meta.gen, seq: meta.seq, versionstamp, chunks, rev: meta.rev ?? 0, line: meta.line };
  }

  /**
   * Deletes task keys that no longer belong to the tree, in commits that check the session meta: a
   * key is deleted only while the version at which it was judged unreachable is still current.
   */
  async #sweepUnreachable(sessionId: string, keys: Deno.KvKey[]): Promise<void> {
    if (keys.length === 0) return;
    await retry(SWEEP, async () => {
      const session = await this.current(sessionId);
      if (!session) return;
      keys = keys.filter((key) => isGarbage(this.#place.layout, session, key));
      let i = 0;
      for (let ok = true; ok && i < keys.length;) {
        const commit = new Commit().check(this.#place.layout.meta(sessionId), session.versionstamp);
        const start = i;
        while (i < keys.length && commit.fitsDelete(keys[i]!)) commit.delete(keys[i++]!);
        ok = (await commit.commit(this.#kv)) !== null;
        if (!ok) i = start;
      }
      keys = keys.slice(i);
      return keys.length === 0 ? undefined : AGAIN;
    }, () => new Error(`Session "${sessionId}" kept changing during a sweep; its garbage is swept later.`));
  }
}

function isGarbage(layout: KvLayout, session: CachedSession, key: Deno.KvKey): boolean {
  const { gen, id, chunk } = layout.taskOf(key);
  // Keys of another generation are swept with their generation.
  if (gen !== session.gen) return false;
  if (id !== "" && !session.tree.get(id)) return true;
  return chunk >= (session.chunks.get(id) ?? 1);
}

/** The revision and history line after a change that records `entry` (none: the session's as they are). */
function revisionOf(
  session: CachedSession | undefined,
  entry: RecordedChange | undefined,
): { rev: number; line: string | undefined } {
  if (!entry) return { rev: session?.rev ?? 0, line: session?.line };
  return { rev: entry.revision, line: session?.line ?? newName() };
}

function parseMeta(bytes: Uint8Array, sessionId: string): SessionMeta {
  const meta = decodeJsonAs(SessionMetaSchema, bytes);
  if (!meta) throw new Error(`Deno KV session "${sessionId}" has a malformed meta record.`);
  return meta;
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
  return { tree, gen: meta.gen, seq: meta.seq, versionstamp, chunks, rev: meta.rev ?? 0, line: meta.line };
}
