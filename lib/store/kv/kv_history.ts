/**
 * Session history in Deno KV (docs/history.md): one small entry key per revision, its delta
 * beside it, both written by the checked commit that makes the change (so revisions stay unique and
 * consecutive across processes, and nothing is recorded that was not committed).
 *
 * A delta that does not fit in that commit (a level of thousands of tasks replaced) is staged first
 * under a random blob name that no reader looks at, marked as garbage until the commit publishes it;
 * the commit then holds only the blob's name. Entries past `HISTORY_SIZE` are invisible to readers
 * (they look at the last `HISTORY_SIZE` revisions only) and deleted now and then without checks.
 */
import {
  type Delta,
  type HistoryContext,
  type HistoryPage,
  oldestKept,
  type RecordedChange,
} from "../../domain/history.ts";
import { type HistoryEntry, HistoryEntrySchema } from "../../domain/history_entry.ts";
import { decodeJsonAs, decodeRecordAs, encodeJson, encodeRecord } from "./codec.ts";
import { type Commit, writeUnchecked } from "./commit.ts";
import { DeltaRecordSchema, type KvPlace, newName, recordKeys, recordRange } from "./layout.ts";
import { readChunks, readRecords } from "./reader.ts";
import { markStaged, retire } from "./sweeper.ts";

/** Old entries are deleted once every this many revisions (a few more than `HISTORY_SIZE` may stay). */
const TRIM_EVERY = 16;

/** See the module doc. */
export class KvHistory {
  readonly #place: KvPlace;
  /** Entries kept per session (`HISTORY_SIZE`). */
  readonly size: number;

  constructor(place: KvPlace, size: number) {
    this.#place = place;
    this.size = size;
  }

  /**
   * Adds `entry` of history line `line` to `commit`: its entry key and its delta, inline when it fits,
   * else staged first. Returns the staged blob (for {@link discard} when the commit fails).
   */
  async addTo(commit: Commit, line: string, entry: RecordedChange): Promise<string | undefined> {
    if (this.size === 0) return undefined;
    const { layout } = this.#place;
    const { delta, ...head } = entry;
    commit.set(layout.historyEntry(line, entry.revision), encodeJson(head));
    const key = layout.historyDelta(line, entry.revision);
    const inline = encodeRecord(key, { delta });
    if (commit.fitsRecord(inline)) {
      commit.setRecord(inline);
      return undefined;
    }
    const blob = newName();
    const id = `${line}/${blob}`;
    await markStaged(this.#place, "d", id);
    const blobKey = layout.deltaBlob(line, blob);
    await writeUnchecked(this.#place.kv, [{ set: encodeRecord(blobKey, { delta }) }]);
    commit.setRecord(encodeRecord(key, { blob })).delete(layout.marker("d", id));
    return id;
  }

  /** Marks a staged delta whose commit failed as garbage. */
  async discard(staged: string | undefined): Promise<void> {
    if (staged) await retire(this.#place, "d", staged);
  }

  /** The revision and newest `limit` entries of a line whose current revision is `rev`. */
  async page(line: string | undefined, rev: number, limit: number): Promise<HistoryPage> {
    const oldest = await this.#oldest(line, rev);
    if (!line || oldest === undefined) return { revision: rev, oldest, entries: [] };
    const entries: HistoryEntry[] = [];
    const { kv, layout } = this.#place;
    const range = layout.historyEntries(line, oldest, rev + 1);
    for await (const e of kv.list<Uint8Array>(range, { reverse: true, limit })) {
      const entry = decodeJsonAs(HistoryEntrySchema, e.value);
      if (entry) entries.push(entry);
    }
    return { revision: rev, oldest, entries };
  }

  /**
   * What a change sees of the history: with `undoTo`, the oldest revision kept and the deltas of the
   * revisions after `undoTo` (newest first); without, no reads at all. A revision whose entry or delta
   * is missing (trimmed by a process with a smaller `HISTORY_SIZE`) moves the oldest kept past it.
   */
  async view(line: string | undefined, rev: number, undoTo: number | undefined): Promise<HistoryContext> {
    const view: HistoryContext = { revision: rev, oldest: undefined, historySize: this.size, deltas: [] };
    if (undoTo === undefined || !line) return view;
    view.oldest = await this.#oldest(line, rev);
    if (view.oldest === undefined || undoTo < view.oldest || undoTo >= rev) return view;
    const { kv, layout } = this.#place;
    const deltas = new Map<number, Delta>();
    const listed = kv.list<Uint8Array>(layout.historyDeltas(line, undoTo + 1, rev + 1), { batchSize: 500 });
    for await (const r of readRecords(listed, layout.historyDeltaKeyLength)) {
      if (!r.complete) continue;
      const record = decodeRecordAs(DeltaRecordSchema, r.chunks);
      const revision = layout.revisionOf(r.key);
      if (record && "delta" in record) deltas.set(revision, record.delta);
      else if (record) {
        const blob = await readChunks(kv, layout.deltaBlob(line, record.blob));
        const stored = blob?.complete ? decodeRecordAs(DeltaRecordSchema, blob.chunks) : undefined;
        if (stored && "delta" in stored) deltas.set(revision, stored.delta);
      }
    }
    for (let r = rev; r > undoTo; r--) {
      const delta = deltas.get(r);
      if (!delta) {
        view.oldest = r;
        view.deltas = [];
        return view;
      }
      view.deltas.push(delta);
    }
    return view;
  }

  /** Whether a change that made revision `rev` should be followed by {@link trim}. */
  due(rev: number): boolean {
    return rev > this.size && rev % TRIM_EVERY === 0;
  }

  /** Deletes the entries of `line` older than the last `HISTORY_SIZE` before `rev` (no reader looks there). */
  async trim(line: string, rev: number): Promise<void> {
    const { kv, layout } = this.#place;
    const below = rev - this.size + 1;
    const keys: Deno.KvKey[] = [];
    for await (const e of kv.list(layout.historyEntries(line, 0, below))) keys.push(e.key);
    const listed = kv.list<Uint8Array>(layout.historyDeltas(line, 0, below), { batchSize: 500 });
    for await (const r of readRecords(listed, layout.historyDeltaKeyLength)) {
      keys.push(...r.extra);
      if (r.chunks.length === 0) continue;
      keys.push(...recordKeys(r.key, r.chunks.length));
      const record = r.complete ? decodeRecordAs(DeltaRecordSchema, r.chunks) : undefined;
      if (record && "blob" in record) {
        for await (const e of kv.list(recordRange(layout.deltaBlob(line, record.blob)))) keys.push(e.key);
      }
    }
    await writeUnchecked(kv, keys.map((key) => ({ delete: key })));
  }

  /** The oldest revision kept: the first entry within the last `HISTORY_SIZE` before `rev`. */
  async #oldest(line: string | undefined, rev: number): Promise<number | undefined> {
    if (!line || this.size === 0 || rev === 0) return undefined;
    const { kv, layout } = this.#place;
    const from = Math.max(1, rev - this.size + 1);
    for await (const e of kv.list(layout.historyEntries(line, from, rev + 1), { limit: 1 })) {
      return oldestKept(rev, layout.revisionOf(e.key), this.size);
    }
    return undefined;
  }
}
