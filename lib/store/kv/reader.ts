/**
 * The one chunk reader of the KV store: records (see codec.ts) read back from a listing, whole or
 * not, with the keys that belong to no record.
 */
import { chunkCount, decodeRecord } from "./codec.ts";
import { chunkIndex, recordRange } from "./layout.ts";

/** One record as listed: its key, its values in order, and listed keys that belong to no record. */
export interface ListedRecord {
  key: Deno.KvKey;
  /** The record's values in key order, from its own key on; short of its count when chunks are missing. */
  chunks: Uint8Array[];
  /** Whether `chunks` holds all the values the first one counts. */
  complete: boolean;
  /** The versionstamp of the record's own key ("" when it is absent). */
  versionstamp: string;
  /** Stale chunks past the count, or chunks whose record is gone: garbage left by a crash. */
  extra: Deno.KvKey[];
}

/** Groups a key-ordered listing of records whose keys have `keyLength` parts into records. */
export async function* readRecords(
  entries: AsyncIterable<Deno.KvEntry<Uint8Array>>,
  keyLength: number,
): AsyncGenerator<ListedRecord> {
  let current: (ListedRecord & { count: number }) | undefined;
  const done = (r: ListedRecord & { count: number }): ListedRecord => {
    r.complete = r.chunks.length >= r.count;
    return r;
  };
  for await (const e of entries) {
    if (e.key.length === keyLength) {
      if (current) yield done(current);
      const count = chunkCount(e.value);
      current = {
        key: e.key,
        chunks: [e.value],
        count,
        complete: false,
        versionstamp: e.versionstamp,
        extra: [],
      };
      continue;
    }
    const index = current && e.key.length === keyLength + 1 ? chunkIndex(current.key, e.key) : undefined;
    if (current && index !== undefined) {
      if (index === current.chunks.length && current.chunks.length < current.count) {
        current.chunks.push(e.value);
      } else current.extra.push(e.key);
    } else {
      // A chunk whose first value is gone: garbage left by a crash or a stale chunk count.
      if (current) yield done(current);
      current = undefined;
      yield { key: e.key.slice(0, keyLength), chunks: [], complete: false, versionstamp: "", extra: [e.key] };
    }
  }
  if (current) yield done(current);
}

/**
 * Reads the values of the record at `key`, or `undefined` when its key is absent. One listing batch
 * reads the key and its chunks together, so a record that another process replaces meanwhile is
 * never read half old.
 */
export async function readChunks(kv: Deno.Kv, key: Deno.KvKey): Promise<ListedRecord | undefined> {
  let found: ListedRecord | undefined;
  const entries = kv.list<Uint8Array>(recordRange(key), { batchSize: 500 });
  for await (const r of readRecords(entries, key.length)) if (r.chunks.length > 0) found = r;
  return found;
}

/** A record read back: its value, the versionstamp of its first key, and its chunk count. */
export interface StoredRecord {
  value: unknown;
  versionstamp: string;
  chunks: number;
}

/** Reads and decodes one record, or `undefined` when its key is absent; throws when it is damaged. */
export async function readRecord(kv: Deno.Kv, key: Deno.KvKey): Promise<StoredRecord | undefined> {
  const found = await readChunks(kv, key);
  if (!found) return undefined;
  return {
    value: decodeRecord(found.chunks),
    versionstamp: found.versionstamp,
    chunks: chunkCount(found.chunks[0]!),
  };
}
