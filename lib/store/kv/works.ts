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
import { decodeJsonAs, decodeRecordAs, encodeJson, encodeRecord } from "./codec.ts";
import { Commit, writeUnchecked } from "./commit.ts";
import { type KvPlace, newName, recordKeys, WorksVersionSchema } from "./layout.ts";
import { readRecord, readRecords } from "./reader.ts";
import { AGAIN, ON_CONFLICT, retry } from "./retry.ts";
import { markStaged, retire, retireIn, sweepOne } from "./sweeper.ts";

const EntryRecordSchema = WorkEntrySchema.omit({ work_tasks: true }).extend({ blob: z.string().optional() });
type EntryRecord = z.infer<typeof EntryRecordSchema>;

/** A snapshot this small goes into the entry's own commit; bigger ones are staged. */
const INLINE_BLOB_CHUNKS = 4;

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
  readonly #place: KvPlace;
  readonly #defer: (job: () => Promise<void>) => void;
  #cache: WorksCache | undefined;
  /** blobId → snapshot, for the blobs the cached entries name. */
  #snapshots = new Map<string, Task[]>();

  constructor(place: KvPlace, options: KvWorksOptions) {
    this.#kv = place.kv;
    this.#place = place;
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
    return await retry(ON_CONFLICT, async () => {
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
      return AGAIN;
    }, (attempts) =>
      new Error(
        `The work entries kept changing under this write (${attempts} attempts); nothing was saved.`,
      ));
  }

  /**
   * Adds to an import's commit the replacement of every entry by `entries` (the caller checks the
   * store version); returns the blobs to stage before committing. Call after {@link current}.
   */
  planImport(commit: Commit, entries: readonly WorkEntry[]): WorksImportPlan {
    const { layout } = this.#place;
    const cache = this.#cache!;
    commit.set(layout.worksVersion, encodeJson({ seq: cache.seq + 1 }));
    for (const id of cache.entries.keys()) this.#deleteEntry(commit, cache, id);
    const blobs: [string, Task[]][] = [];
    for (const entry of entries) {
      let blob: string | undefined;
      if (entry.work_tasks !== undefined) {
        blob = newName();
        blobs.push([blob, entry.work_tasks]);
        commit.delete(layout.marker("b", blob));
      }
      commit.setRecord(encodeRecord(layout.work(entry.workId), recordOf(entry, blob)));
    }
    return { blobs };
  }

  /** Writes a snapshot where no reader looks yet, under a staged marker. */
  async stageBlob(blob: string, tasks: readonly Task[]): Promise<void> {
    await markStaged(this.#place, "b", blob);
    await writeUnchecked(this.#kv, [{ set: encodeRecord(this.#place.layout.blob(blob), tasks) }]);
  }

  async #current(): Promise<WorksCache> {
    const { layout } = this.#place;
    let version = await this.#kv.get<Uint8Array>(layout.worksVersion);
    for (;;) {
      if (this.#cache && this.#cache.versionstamp === version.versionstamp) return this.#cache;
      const records: { id: string; chunks: Uint8Array[] }[] = [];
      for await (const r of readRecords(this.#kv.list<Uint8Array>(layout.works()), layout.workKeyLength)) {
        if (r.complete) records.push({ id: layout.workOf(r.key), chunks: r.chunks });
      }
      const again = await this.#kv.get<Uint8Array>(layout.worksVersion);
      if (again.versionstamp !== version.versionstamp) {
        version = again;
        continue;
      }
      const cache = await this.#build(version, records);
      if (!cache) {
        // A snapshot was swept meanwhile: its entry was replaced; read again.
        version = await this.#kv.get<Uint8Array>(layout.worksVersion);
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
    const seq = version.value === null ? 0 : parseWorksVersion(version.value);
    const cache: WorksCache = {
      versionstamp: version.versionstamp,
      seq,
      entries: new Map(),
      blobs: new Map(),
      chunks: new Map(),
    };
    const snapshots = new Map<string, Task[]>();
    for (const { id, chunks } of records) {
      const parsed = decodeRecordAs(EntryRecordSchema, chunks);
      if (!parsed) throw new Error(`Deno KV work entry "${id}" is malformed. Restore it from an export.`);
      const { blob, ...fields } = parsed;
      const entry: WorkEntry = fields;
      if (blob !== undefined) {
        let tasks = this.#snapshots.get(blob);
        if (!tasks) {
          const stored = await readRecord(this.#kv, this.#place.layout.blob(blob));
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
    const { layout } = this.#place;
    const commit = new Commit()
      .check(layout.worksVersion, cache.versionstamp)
      .countChange(layout)
      .set(layout.worksVersion, encodeJson({ seq: cache.seq + 1 }));
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
        const parts = encodeRecord(layout.blob(blob), entry.work_tasks);
        if (parts.length <= INLINE_BLOB_CHUNKS && commit.fitsRecord(parts)) commit.setRecord(parts);
        else {
          await this.stageBlob(blob, entry.work_tasks);
          staged.push(blob);
          commit.delete(layout.marker("b", blob));
        }
        this.#snapshots.set(blob, entry.work_tasks);
      }
      if (oldBlob !== undefined && oldBlob !== blob) {
        retireIn(layout, commit, "b", oldBlob);
        retired.push(oldBlob);
      }
      if (blob === undefined) blobs.delete(id);
      else blobs.set(id, blob);
      const parts = encodeRecord(layout.work(id), recordOf(entry, blob));
      commit.replaceRecord(parts, chunks.get(id) ?? 1);
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
        await retire(this.#place, "b", blob);
        this.#defer(() => sweepOne(this.#place, "b", blob).then(() => {}));
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
      this.#defer(() => sweepOne(this.#place, "b", blob).then(() => {}));
    }
    return true;
  }

  /** Adds an entry's deletion (and its blob's retirement) to `commit`; returns the blob. */
  #deleteEntry(commit: Commit, cache: WorksCache, id: string): string | undefined {
    for (const key of recordKeys(this.#place.layout.work(id), cache.chunks.get(id) ?? 1)) commit.delete(key);
    const blob = cache.blobs.get(id);
    if (blob !== undefined) retireIn(this.#place.layout, commit, "b", blob);
    return blob;
  }
}

function parseWorksVersion(bytes: Uint8Array): number {
  const version = decodeJsonAs(WorksVersionSchema, bytes);
  if (!version) throw new Error("Deno KV works version is malformed. Restore it from an export.");
  return version.seq;
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
