/**
 * Atomic commits that know Deno KV's per-commit limits, and unchecked writes split over as many
 * commits as they need.
 */
import { chunkKeys, type KvLayout } from "./layout.ts";
import { whenUnlocked } from "./retry.ts";

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

/** What one commit may use: Deno's limits less a margin for estimation slack. */
const BUDGET = {
  mutations: KV_LIMITS.mutations - 10,
  checks: KV_LIMITS.checks - 2,
  payload: KV_LIMITS.payload - 16_384,
  keys: KV_LIMITS.keys - 2_048,
};

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

  /**
   * Queues the sets of a record that replaces one stored in `oldCount` chunks, and the deletes of
   * the old chunks past the new ones.
   */
  replaceRecord(parts: readonly [Deno.KvKey, Uint8Array][], oldCount: number): this {
    this.setRecord(parts);
    const key = parts[0]![0];
    for (const stale of chunkKeys(key, parts.length, oldCount)) this.delete(stale);
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

  /** Queues the additions that count a change under `layout` (its {@link KvLayout.changeCounters}). */
  countChange(layout: KvLayout): this {
    for (const key of layout.changeCounters) this.sum(key, 1n);
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
      // Deletes first: a key both deleted (the old contents) and set (the new) in one commit keeps the set.
      for (const key of this.#deletes) op.delete(key);
      for (const [key, value] of this.#sets) op.set(key, value);
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
