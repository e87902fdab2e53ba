/**
 * The work-info entries in Deno KV, LRU order and eviction included.
 *
 * An entry is one record `["w", workId]` holding its fields and its recency counter `used`; its task
 * snapshot (`work_tasks`, possibly megabytes) is an immutable blob `["b", blobId]` that the entry
 * names. Every change (a save with its evictions, a touch) is one atomic commit that checks and
 * bumps the works version `["wv"]`, so two processes saving at once never lose an entry and the
 * capacity holds across them. A snapshot too big for that commit is staged first (see
 * sweeper.ts) and published by it. The entries and their snapshots are cached per process and
 * re-read only when the works version moved; snapshots are re-read only when new.
 */
import { z } from "zod";
import { fail } from "../../domain/errors.ts";
import type { Task } from "../../domain/schemas.ts";
import { type WorkEntry, WorkEntrySchema } from "../../domain/work_lru.ts";
import {
  chunkCount,
  chunkKeys,
  Commit,
  decodeJson,
  decodeRecord,
  encodeJson,
  encodeRecord,
  groupRecords,
  readRecord,
  writeUnchecked,
} from "./codec.ts";
import {
  blobKey,
  markerKey,
  newName,
  STORE_VERSION_KEY,
  workKey,
  WORKS_VERSION_KEY,
  WorksVersionSchema,
} from "./layout.ts";
import { markStaged, retire, retireIn, sweepOne } from "./sweeper.ts";

const EntryRecordSchema = WorkEntrySchema.omit({ work_tasks: true }).extend({ blob: z.string().optional() });
type EntryRecord = z.infer<typeof EntryRecordSchema>;

/** A snapshot this small goes into the entry's own commit; bigger ones are staged. */
const INLINE_BLOB_CHUNKS = 4;
const MAX_ATTEMPTS = 50;

interface WorksCache {
  versionstamp: string | null;
  seq: number;
  entries: Map<string, WorkEntry>;
  /** workId → the blob holding its snapshot. */
  blobs: Map<string, string>;
  /** workId → chunk count of its record, when more than one. */
  chunks: Map<string, number>;
}

/** Options of {@link KvWorks}. */
export interface KvWorksOptions {
  /** Runs a job after the current operation, in the store's queue (garbage sweeps). */
  defer: (job: () => Promise<void>) => void;
}

/** What an import must publish: blobs to stage first, then the commit's changes. */
export interface WorksImportPlan {
  blobs: [string, Task[]][];
}

/** See the module doc. Not safe for concurrent calls: the store runs them one at a time. */
export class KvWorks {
  readonly #kv: Deno.Kv;
  readonly #defer: (job: () => Promise<void>) => void;
  #cache: WorksCache | undefined;
  /** blobId → snapshot, for the blobs the cached entries name. */
  #snapshots = new Map<string, Task[]>();

  constructor(kv: Deno.Kv, options: KvWorksOptions) {
    this.#kv = kv;
    this.#defer = options.defer;
  }

  /** Forgets the cache (after an import). */
  invalidate(): void {
    this.#cache = undefined;
  }

  /** The entries as stored now. */
  async current(): Promise<Map<string, WorkEntry>> {
    return (await this.#current()).entries;
  }

  /** Runs `fn` on the entries and commits what it changed; re-runs it after a conflict. */
  async update<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T> {
    for (let attempt = 1;; attempt++) {
      const cache = await this.#current();
      const before = new Map([...cache.entries].map(([id, e]) => [id, { ...e }]));
      const restore = () => {
        cache.entries.clear();
        for (const [id, e] of before) cache.entries.set(id, e);
      };
      let result: T;
      try {
        result = fn(cache.entries);
      } catch (error) {
        restore();
        throw error;
      }
      let committed: boolean;
      try {
        committed = await this.#commit(cache, before);
      } catch (error) {
        restore();
        throw error;
      }
      if (committed) return result;
      restore();
      if (attempt >= MAX_ATTEMPTS) {
        throw new Error(
          `The work entries kept changing under this write (${attempt} attempts); nothing was saved.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 2)));
    }
  }

  /**
   * Adds to an import's commit the replacement of every entry by `entries` (the caller checks the
   * store version); returns the blobs to stage before committing. Call after {@link current}.
   */
  planImport(commit: Commit, entries: readonly WorkEntry[]): WorksImportPlan {
    const cache = this.#cache!;
    commit.set(WORKS_VERSION_KEY, encodeJson({ seq: cache.seq + 1 }));
    for (const id of cache.entries.keys()) this.#deleteEntry(commit, cache, id);
    const blobs: [string, Task[]][] = [];
    for (const entry of entries) {
      let blob: string | undefined;
      if (entry.work_tasks !== undefined) {
        blob = newName();
        blobs.push([blob, entry.work_tasks]);
        commit.delete(markerKey("b", blob));
      }
      commit.setRecord(encodeRecord(workKey(entry.workId), recordOf(entry, blob)));
    }
    return { blobs };
  }

  /** Writes a snapshot where no reader looks yet, under a staged marker. */
  async stageBlob(blob: string, tasks: readonly Task[]): Promise<void> {
    await markStaged(this.#kv, "b", blob);
    await writeUnchecked(this.#kv, [{ set: encodeRecord(blobKey(blob), tasks) }]);
  }

  async #current(): Promise<WorksCache> {
    let version = await this.#kv.get<Uint8Array>(WORKS_VERSION_KEY);
    for (;;) {
      if (this.#cache && this.#cache.versionstamp === version.versionstamp) return this.#cache;
      const records: { id: string; chunks: Uint8Array[] }[] = [];
      for await (const r of groupRecords(this.#kv.list<Uint8Array>({ prefix: ["w"] }), 2)) {
        if (r.chunks.length > 0 && r.chunks.length >= chunkCount(r.chunks[0]!)) {
          records.push({ id: String(r.key[1]), chunks: r.chunks });
        }
      }
      const again = await this.#kv.get<Uint8Array>(WORKS_VERSION_KEY);
      if (again.versionstamp !== version.versionstamp) {
        version = again;
        continue;
      }
      const cache = await this.#build(version, records);
      if (!cache) {
        // A snapshot was swept meanwhile: its entry was replaced; read again.
        version = await this.#kv.get<Uint8Array>(WORKS_VERSION_KEY);
        continue;
      }
      this.#cache = cache;
      return cache;
    }
  }

  async #build(
    version: Deno.KvEntryMaybe<Uint8Array>,
    records: { id: string; chunks: Uint8Array[] }[],
  ): Promise<WorksCache | undefined> {
    const seq = version.value === null ? 0 : WorksVersionSchema.parse(decodeJson(version.value)).seq;
    const cache: WorksCache = {
      versionstamp: version.versionstamp,
      seq,
      entries: new Map(),
      blobs: new Map(),
      chunks: new Map(),
    };
    const snapshots = new Map<string, Task[]>();
    for (const { id, chunks } of records) {
      const parsed = EntryRecordSchema.safeParse(decodeRecord(chunks));
      if (!parsed.success) {
        throw new Error(`Deno KV work entry "${id}" is malformed. Restore it from an export.`);
      }
      const { blob, ...fields } = parsed.data;
      const entry: WorkEntry = fields;
      if (blob !== undefined) {
        let tasks = this.#snapshots.get(blob);
        if (!tasks) {
          const stored = await readRecord(this.#kv, blobKey(blob));
          if (!stored) return undefined;
          tasks = stored.value as Task[];
        }
        snapshots.set(blob, tasks);
        entry.work_tasks = tasks;
        cache.blobs.set(id, blob);
      }
      cache.entries.set(id, entry);
      if (chunks.length > 1) cache.chunks.set(id, chunks.length);
    }
    this.#snapshots = snapshots;
    return cache;
  }

  /** Commits the difference between `before` and the cached entries; false on a conflict. */
  async #commit(cache: WorksCache, before: Map<string, WorkEntry>): Promise<boolean> {
    const commit = new Commit()
      .check(WORKS_VERSION_KEY, cache.versionstamp)
      .sum(STORE_VERSION_KEY, 1n)
      .set(WORKS_VERSION_KEY, encodeJson({ seq: cache.seq + 1 }));
    const staged: string[] = [];
    const blobs = new Map(cache.blobs);
    const chunks = new Map(cache.chunks);
    const retired: string[] = [];
    let any = false;
    for (const [id, entry] of cache.entries) {
      const previous = before.get(id);
      if (previous && sameEntry(previous, entry)) continue;
      any = true;
      const oldBlob = cache.blobs.get(id);
      let blob = previous && previous.work_tasks === entry.work_tasks ? oldBlob : undefined;
      if (entry.work_tasks !== undefined && blob === undefined) {
        blob = newName();
        const parts = encodeRecord(blobKey(blob), entry.work_tasks);
        if (parts.length <= INLINE_BLOB_CHUNKS && commit.fitsRecord(parts)) commit.setRecord(parts);
        else {
          await this.stageBlob(blob, entry.work_tasks);
          staged.push(blob);
          commit.delete(markerKey("b", blob));
        }
        this.#snapshots.set(blob, entry.work_tasks);
      }
      if (oldBlob !== undefined && oldBlob !== blob) {
        retireIn(commit, "b", oldBlob);
        retired.push(oldBlob);
      }
      if (blob === undefined) blobs.delete(id);
      else blobs.set(id, blob);
      const key = workKey(id);
      const parts = encodeRecord(key, recordOf(entry, blob));
      commit.setRecord(parts);
      for (const stale of chunkKeys(key, parts.length, chunks.get(id) ?? 1)) commit.delete(stale);
      if (parts.length > 1) chunks.set(id, parts.length);
      else chunks.delete(id);
    }
    for (const id of before.keys()) {
      if (cache.entries.has(id)) continue;
      any = true;
      const oldBlob = this.#deleteEntry(commit, cache, id);
      if (oldBlob !== undefined) retired.push(oldBlob);
      blobs.delete(id);
      chunks.delete(id);
    }
    if (!any) return true;
    const abandon = async () => {
      for (const blob of staged) {
        await retire(this.#kv, "b", blob);
        this.#defer(() => sweepOne(this.#kv, "b", blob).then(() => {}));
      }
    };
    if (!commit.fits()) {
      await abandon();
      fail(
        "LIMIT_EXCEEDED",
        "These work entries do not fit in one Deno KV commit: lower WORK_CACHE_SIZE or shorten the summaries.",
      );
    }
    const done = await commit.commit(this.#kv);
    if (!done) {
      await abandon();
      return false;
    }
    cache.versionstamp = done.versionstamp;
    cache.seq++;
    cache.blobs = blobs;
    cache.chunks = chunks;
    for (const blob of retired) {
      this.#snapshots.delete(blob);
      this.#defer(() => sweepOne(this.#kv, "b", blob).then(() => {}));
    }
    return true;
  }

  /** Adds an entry's deletion (and its blob's retirement) to `commit`; returns the blob. */
  #deleteEntry(commit: Commit, cache: WorksCache, id: string): string | undefined {
    const key = workKey(id);
    commit.delete(key);
    for (const stale of chunkKeys(key, 1, cache.chunks.get(id) ?? 1)) commit.delete(stale);
    const blob = cache.blobs.get(id);
    if (blob !== undefined) retireIn(commit, "b", blob);
    return blob;
  }
}

function recordOf(entry: WorkEntry, blob: string | undefined): EntryRecord {
  const { work_tasks: _tasks, ...fields } = entry;
  return blob === undefined ? fields : { ...fields, blob };
}

function sameEntry(a: WorkEntry, b: WorkEntry): boolean {
  return a.work_tasks === b.work_tasks && a.workId === b.workId && a.used === b.used &&
    a.work_timestamp === b.work_timestamp && a.work_description === b.work_description &&
    a.work_summarize === b.work_summarize && a.sessionId === b.sessionId;
}
