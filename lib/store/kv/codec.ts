/**
 * Deno KV plumbing shared by the KV store: chunked JSON records and a commit builder that knows
 * Deno KV's per-commit limits.
 *
 * A record is JSON text in UTF-8 split into values of at most {@link CHUNK_BYTES}: the first value
 * sits at the record's key and starts with a 4-byte big-endian count of its chunks, the others sit
 * at `[...key, 1]`, `[...key, 2]`, …, which Deno KV orders right after the key itself. So a record
 * of any size reads back with one ranged `list`, and a reader ignores stale chunks past the count.
 */

/** Deno KV's limits, as enforced by Deno 2.9.6 (measured; see kv_store.ts). */
export const KV_LIMITS = {
  /** Largest value, bytes. */
  value: 65_536,
  /** Mutations per atomic commit. */
  mutations: 1000,
  /** Checks per atomic commit. */
  checks: 100,
  /** Keys (every check and mutation) plus set keys and values again, bytes per commit. */
  payload: 819_200,
  /** Keys of the set mutations, bytes per commit. */
  keys: 81_920,
} as const;

/** Data bytes per value (the first adds a 4-byte header); leaves room under {@link KV_LIMITS}.value. */
export const CHUNK_BYTES = 60_000;

/** What one commit may use: Deno's limits less a margin for estimation slack. */
const BUDGET = {
  mutations: KV_LIMITS.mutations - 10,
  checks: KV_LIMITS.checks - 2,
  payload: KV_LIMITS.payload - 16_384,
  keys: KV_LIMITS.keys - 2_048,
};

/** The largest key part used for the end of a chunk range. */
const LAST = Number.MAX_SAFE_INTEGER;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bytes of `s` in UTF-8, without encoding it. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += c === 0 ? 2 : 1; // a NUL is escaped in keys; harmless overcount in values
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** An upper bound of a key's encoded size (Deno KV's tuple encoding). */
export function keySize(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) {
    if (typeof part === "string") n += utf8Length(part) + 2;
    else if (typeof part === "number") n += 9;
    else if (typeof part === "bigint") n += 18;
    else if (typeof part === "boolean") n += 1;
    else if (part instanceof Uint8Array) n += part.length * 2 + 2;
    else n += 64; // a symbol (Deno's key-part marker); not used by this store
  }
  return n;
}

/** The keys and values of one record: the first value carries the chunk count. */
export function encodeRecord(key: Deno.KvKey, value: unknown): [Deno.KvKey, Uint8Array][] {
  const bytes = encoder.encode(JSON.stringify(value));
  const count = Math.max(1, Math.ceil(bytes.length / CHUNK_BYTES));
  const out: [Deno.KvKey, Uint8Array][] = [];
  for (let i = 0; i < count; i++) {
    const piece = bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
    if (i === 0) {
      const first = new Uint8Array(piece.length + 4);
      new DataView(first.buffer).setUint32(0, count);
      first.set(piece, 4);
      out.push([key, first]);
    } else out.push([[...key, i], piece]);
  }
  return out;
}

/** The chunk count a record's first value declares. */
export function chunkCount(first: Uint8Array): number {
  if (first.length < 4) throw new Error("record value shorter than its header");
  return new DataView(first.buffer, first.byteOffset, first.byteLength).getUint32(0);
}

/** Parses a record from its values in key order (first value first). */
export function decodeRecord(chunks: readonly Uint8Array[]): unknown {
  const first = chunks[0];
  if (!first) throw new Error("record has no value");
  const count = chunkCount(first);
  if (chunks.length < count) throw new Error(`record has ${chunks.length} of its ${count} chunks`);
  if (count === 1) return JSON.parse(decoder.decode(first.subarray(4)));
  let length = first.length - 4;
  for (let i = 1; i < count; i++) length += chunks[i]!.length;
  const bytes = new Uint8Array(length);
  bytes.set(first.subarray(4), 0);
  let at = first.length - 4;
  for (let i = 1; i < count; i++) {
    bytes.set(chunks[i]!, at);
    at += chunks[i]!.length;
  }
  return JSON.parse(decoder.decode(bytes));
}

/** The keys of a record's chunks past the first, from `from` up to (not including) `to`. */
export function chunkKeys(key: Deno.KvKey, from: number, to: number): Deno.KvKey[] {
  const keys: Deno.KvKey[] = [];
  for (let i = Math.max(1, from); i < to; i++) keys.push([...key, i]);
  return keys;
}

/** A selector for a record's key and all its chunk keys. */
export function recordRange(key: Deno.KvKey): Deno.KvListSelector {
  return { start: key, end: [...key, LAST] };
}

/** A record read back: its value, the versionstamp of its first key, and its chunk count. */
export interface StoredRecord {
  value: unknown;
  versionstamp: string;
  chunks: number;
}

/**
 * Reads one record, or `undefined` when its key is absent. One listing batch reads the key and its
 * chunks together, so a record that another process replaces meanwhile is never read half old.
 */
export async function readRecord(kv: Deno.Kv, key: Deno.KvKey): Promise<StoredRecord | undefined> {
  const chunks: Uint8Array[] = [];
  let versionstamp = "";
  let count = 0;
  for await (const e of kv.list<Uint8Array>(recordRange(key), { batchSize: 500 })) {
    if (chunks.length === 0) {
      if (e.key.length !== key.length) return undefined; // only stale chunks: the record is gone
      versionstamp = e.versionstamp;
      count = chunkCount(e.value);
    } else if (e.key[key.length] !== chunks.length) break;
    chunks.push(e.value);
    if (chunks.length === count) break;
  }
  if (chunks.length === 0) return undefined;
  return { value: decodeRecord(chunks), versionstamp, chunks: count };
}

/** Groups a key-ordered listing into records: yields each record's key and its values. */
export async function* groupRecords(
  entries: AsyncIterable<Deno.KvEntry<Uint8Array>>,
  keyLength: number,
): AsyncGenerator<{ key: Deno.KvKey; chunks: Uint8Array[]; extra: Deno.KvKey[] }> {
  let current: { key: Deno.KvKey; chunks: Uint8Array[]; extra: Deno.KvKey[] } | undefined;
  for await (const e of entries) {
    if (e.key.length === keyLength) {
      if (current) yield current;
      current = { key: e.key, chunks: [e.value], extra: [] };
    } else if (current && e.key.length === keyLength + 1 && samePrefix(current.key, e.key)) {
      const want = chunkCount(current.chunks[0]!);
      if (e.key[keyLength] === current.chunks.length && current.chunks.length < want) {
        current.chunks.push(e.value);
      } else current.extra.push(e.key);
    } else {
      // A chunk whose first value is gone: garbage left by a crash or a stale chunk count.
      if (current) yield current;
      current = undefined;
      yield { key: e.key.slice(0, keyLength), chunks: [], extra: [e.key] };
    }
  }
  if (current) yield current;
}

function samePrefix(a: Deno.KvKey, b: Deno.KvKey): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Tries a busy database this long before giving up. */
const BUSY_TIMEOUT_MS = 30_000;

/**
 * Runs a write, again while SQLite reports "database is locked". Several processes on one local KV
 * meet that error whenever their transactions overlap; the write then did not happen, so trying
 * again (after a short random pause) is safe.
 */
export async function whenUnlocked<T>(write: () => Promise<T>): Promise<T> {
  const start = Date.now();
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!String(error).includes("database is locked") || Date.now() - start > BUSY_TIMEOUT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(10, attempt)));
    }
  }
}

/**
 * One atomic commit being built, with its size kept against Deno KV's limits.
 *
 * `fits` answers whether more mutations still fit; callers decide what to do when they do not.
 */
export class Commit {
  readonly checks: Deno.AtomicCheck[] = [];
  readonly #sets: [Deno.KvKey, Uint8Array][] = [];
  readonly #deletes: Deno.KvKey[] = [];
  readonly #sums: [Deno.KvKey, bigint][] = [];
  #payload = 0;
  #keys = 0;

  /** Number of mutations so far. */
  get mutations(): number {
    return this.#sets.length + this.#deletes.length + this.#sums.length;
  }

  /** Whether nothing is queued. */
  get empty(): boolean {
    return this.mutations === 0;
  }

  /** Adds a check that `key` still has `versionstamp` (null: absent). */
  check(key: Deno.KvKey, versionstamp: string | null): this {
    this.checks.push({ key, versionstamp });
    this.#payload += keySize(key);
    return this;
  }

  /** Queues a set of raw bytes. */
  set(key: Deno.KvKey, value: Uint8Array): this {
    const k = keySize(key);
    this.#sets.push([key, value]);
    this.#payload += 2 * k + value.length;
    this.#keys += k;
    return this;
  }

  /** Queues the sets of a record (see the module doc). */
  setRecord(parts: readonly [Deno.KvKey, Uint8Array][]): this {
    for (const [key, value] of parts) this.set(key, value);
    return this;
  }

  /** Queues a delete. */
  delete(key: Deno.KvKey): this {
    this.#deletes.push(key);
    this.#payload += keySize(key);
    return this;
  }

  /** Queues an addition to a 64-bit counter. */
  sum(key: Deno.KvKey, n: bigint): this {
    this.#sums.push([key, n]);
    this.#payload += 2 * keySize(key) + 8;
    this.#keys += keySize(key);
    return this;
  }

  /** Whether the commit stays within the limits with `more` further mutations of about `bytes`. */
  fits(more = 0, bytes = 0, keyBytes = 0): boolean {
    return this.mutations + more <= BUDGET.mutations && this.checks.length <= BUDGET.checks &&
      this.#payload + bytes <= BUDGET.payload && this.#keys + keyBytes <= BUDGET.keys;
  }

  /** Whether the sets of a record fit as well. */
  fitsRecord(parts: readonly [Deno.KvKey, Uint8Array][]): boolean {
    let bytes = 0;
    let keys = 0;
    for (const [key, value] of parts) {
      const k = keySize(key);
      bytes += 2 * k + value.length;
      keys += k;
    }
    return this.fits(parts.length, bytes, keys);
  }

  /** Whether a delete of `key` fits as well. */
  fitsDelete(key: Deno.KvKey): boolean {
    return this.fits(1, keySize(key));
  }

  /** Commits; `null` when a check failed (someone else changed a checked key). */
  async commit(kv: Deno.Kv): Promise<Deno.KvCommitResult | null> {
    const result = await whenUnlocked(() => {
      const op = kv.atomic();
      for (const check of this.checks) op.check(check);
      for (const [key, value] of this.#sets) op.set(key, value);
      for (const key of this.#deletes) op.delete(key);
      for (const [key, n] of this.#sums) op.sum(key, n);
      return op.commit();
    });
    return result.ok ? result : null;
  }
}

/**
 * Commits `items` unchecked, in as many commits as their size needs: only for keys no reader looks
 * at yet (staged data) or that no reader will look at again (garbage). A big record's chunks may
 * land in different commits.
 */
export async function writeUnchecked(
  kv: Deno.Kv,
  items: Iterable<{ set: [Deno.KvKey, Uint8Array][] } | { delete: Deno.KvKey }>,
): Promise<void> {
  let commit = new Commit();
  const flush = async () => {
    if (!commit.empty) await commit.commit(kv);
    commit = new Commit();
  };
  for (const item of items) {
    if ("delete" in item) {
      if (!commit.fitsDelete(item.delete)) await flush();
      commit.delete(item.delete);
      continue;
    }
    for (const part of item.set) {
      if (!commit.fitsRecord([part])) await flush();
      commit.set(part[0], part[1]);
    }
  }
  await flush();
}

/** Encodes small JSON (metadata) as bytes. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Decodes {@link encodeJson}'s bytes. */
export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}
