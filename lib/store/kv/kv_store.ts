/**
 * The Deno KV store (`KV_PATH`; on Deno Deploy the default KV): sessions, work entries and progress
 * documents as many small keys, safe for any number of processes on one KV.
 *
 * The key layout is in layout.ts, trees and the atomicity of their changes in sessions.ts (their
 * records in records.ts), works in works.ts, garbage in sweeper.ts; values become bytes in codec.ts
 * and are read back by reader.ts; commits are built in commit.ts and retried by retry.ts. Every
 * change is one atomic commit guarded by a versionstamp check and retried on conflict; the reply
 * waits for the commit. Deno KV's limits (checked on Deno 2.9.6): a value ≤ 64 KiB, per commit
 * ≤ 1000 mutations, ≤ 100 checks, ≤ 800 KiB of keys and values, ≤ 80 KiB of set keys.
 *
 * Namespaces (docs/namespaces.md) are spaces under their own key prefix (kv_space.ts, layout.ts):
 * `default` keeps the keys of databases written before namespaces, so they load unchanged.
 *
 * An import replaces everything (or one namespace) in one commit that checks the change counter of
 * each namespace it replaces: trees and snapshots are staged first, then that commit publishes them
 * (it holds the metas, entries and progress documents, so a document whose final commit would pass
 * the limits is refused before anything is written).
 *
 * At open, a local `KV_PATH` gets the same checks as a file (its directory created, able to take a
 * new file), the database must read and take a write (this store's lease, liveness.ts), and what
 * killed writers staged is swept in the background before the first operation (sweeper.ts).
 */
import { DEFAULTS } from "../../config.ts";
import { DomainError, fail } from "../../domain/errors.ts";
import { ownObject } from "../../domain/own_keys.ts";
import { DEFAULT_NAMESPACE, isNamespace } from "../../domain/schemas.ts";
import { watchKvKeys } from "../change_feed.ts";
import { Serial } from "../serial.ts";
import type { SpaceDocument, StoreDocument } from "../file_format.ts";
import { sortNamespaces, type SpaceState, type StoreState } from "../state.ts";
import { Spaces } from "../state_space.ts";
import { type NamespaceOption, type Store, StoreOpenError, type StoreOptions } from "../store.ts";
import { Commit } from "./commit.ts";
import { KvSpace, type SpaceImport } from "./kv_space.ts";
import { DEFAULT_LAYOUT, NAMESPACE_TAG, NAMESPACES_VERSION } from "./layout.ts";
import { AGAIN, ON_CONFLICT, retry, whenUnlocked } from "./retry.ts";
import type { KvSessionStats } from "./sessions.ts";
import { sweepAll, type SweepResult } from "./sweeper.ts";
import { dropDeadLeases, Lease, LEASE_MS, livingOwners, lockDirOf } from "./liveness.ts";
import { checkStorePlace } from "../file_io.ts";

/** Options of {@link KvStore.open}. */
export interface KvStoreOptions extends StoreOptions {
  /**
   * Told what each sweep at start did: keys deleted, and staged writes kept because their writers
   * may still be alive (swept once their leases run out, if the store is still open then).
   */
  onSweep?: (result: SweepResult) => void;
  /** Told of names read in a repaired form (stored by an older version with lone surrogates; old_names.ts). */
  onRepair?: (message: string) => void;
  /** Told once when the database is busy at open (another process holds it); the open waits and retries. */
  onBusy?: (error: unknown) => void;
}

/** See the module doc. */
export class KvStore implements Store {
  readonly kind = "kv" as const;
  readonly historySize: number;
  readonly #kv: Deno.Kv;
  readonly #serial = new Serial();
  readonly #spaces: Spaces<KvSpace>;
  readonly #lease: Lease;
  #closed = false;
  /** A change failed in the store itself and may have left staged data: sweep after the next success. */
  #failed = false;
  #sweepTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #onSweep: (result: SweepResult) => void;

  private constructor(kv: Deno.Kv, lease: Lease, options: KvStoreOptions) {
    this.#kv = kv;
    this.#lease = lease;
    this.#onSweep = options.onSweep ?? (() => {});
    this.historySize = options.historySize ?? DEFAULTS.historySize;
    const run = <T>(job: () => Promise<T>) => this.#serial.run(job);
    const change = <T>(job: () => Promise<T>) => this.#change(job);
    const owner = lease.owner;
    const defer = (job: () => Promise<void>) => {
      // Garbage left by a failed sweep is found again later; it never blocks a change.
      this.#serial.run(() => this.#closed ? Promise.resolve() : job()).catch(() => {});
    };
    const historySize = this.historySize;
    const onRepair = options.onRepair;
    this.#spaces = new Spaces((namespace) =>
      new KvSpace(kv, {
        namespace,
        historySize,
        run,
        change,
        defer,
        owner,
        onRepair: onRepair && ((message) => onRepair(`namespace ${JSON.stringify(namespace)}: ${message}`)),
      })
    );
  }

  /**
   * Opens the KV at `path` (`:memory:` allowed), or the default KV without one (Deno Deploy).
   * Throws {@link StoreOpenError} when the place or the database cannot be used. Sweeps what dead
   * writers left, before the first operation.
   */
  static async open(path?: string, options: KvStoreOptions = {}): Promise<KvStore> {
    const name = path ?? "(default)";
    const local = path !== undefined && path !== ":memory:" && !/^https?:\/\//i.test(path);
    if (local) await checkStorePlace(path, "KV_PATH");
    // Several processes opening one new database at once, or another holding it, make SQLite answer
    // "database is locked": wait and try again (ON_LOCKED) rather than refuse to start.
    let told = false;
    const onBusy = (error: unknown) => {
      if (!told) options.onBusy?.(error);
      told = true;
    };
    let kv: Deno.Kv;
    try {
      kv = await whenUnlocked(() => Deno.openKv(path), onBusy);
    } catch (error) {
      throw new StoreOpenError(`Cannot open Deno KV ${name}: ${(error as Error).message}`, { cause: error });
    }
    let lease: Lease;
    try {
      await whenUnlocked(() => kv.get(DEFAULT_LAYOUT.storeVersion), onBusy);
      lease = await Lease.take(kv, local ? lockDirOf(path) : undefined);
    } catch (error) {
      kv.close();
      throw new StoreOpenError(`Cannot read and write Deno KV ${name}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const store = new KvStore(kv, lease, options);
    store.#sweep(true);
    return store;
  }

  /**
   * Runs a change in the store's queue. When the store itself fails under it (a full disk in the
   * middle of staging), what it staged is swept after the next change that succeeds, without a restart.
   */
  async #change<T>(run: () => Promise<T>): Promise<T> {
    try {
      const result = await this.#serial.run(run);
      if (this.#failed) {
        this.#failed = false;
        this.#sweep(false);
      }
      return result;
    } catch (error) {
      if (!(error instanceof DomainError)) this.#failed = true;
      throw error;
    }
  }

  /**
   * Sweeps the garbage of every namespace in the store's queue; at start also drops dead leases
   * and, when live owners kept staged data, looks again once their leases could have run out.
   */
  #sweep(atStart: boolean): void {
    this.#serial.run(async () => {
      let kept = 0;
      let deleted = 0;
      try {
        for (const namespace of [DEFAULT_NAMESPACE, ...await this.#otherNamespaces()]) {
          if (this.#closed) return;
          const result = await sweepAll(this.#spaces.get(namespace).place);
          kept += result.kept;
          deleted += result.deleted;
        }
      } catch (error) {
        this.#failed = true; // try again after the next change
        if (atStart) this.#onSweep({ deleted, kept, error });
        throw error;
      }
      if (!atStart) return;
      this.#onSweep({ deleted, kept });
      await dropDeadLeases(this.#kv, await livingOwners(this.#kv));
      if (kept > 0) {
        const timer = setTimeout(() => this.#sweep(false), LEASE_MS + 1000);
        Deno.unrefTimer(timer);
        this.#sweepTimer = timer;
      }
    }).catch(() => {});
  }

  space(namespace: string): KvSpace {
    return this.#spaces.get(namespace);
  }

  listNamespaces(): Promise<string[]> {
    return this.#serial.run(async () => {
      const names: string[] = [];
      for (const namespace of [DEFAULT_NAMESPACE, ...await this.#otherNamespaces()]) {
        if (await this.#spaces.get(namespace).holdsAnything()) names.push(namespace);
      }
      return sortNamespaces(names);
    });
  }

  async exportDocument(options: NamespaceOption = {}): Promise<StoreDocument> {
    const one = options.namespace === undefined ? undefined : this.#spaces.get(options.namespace);
    const counters = one ? [one.layout.storeVersion] : [DEFAULT_LAYOUT.storeVersion, NAMESPACES_VERSION];
    return await this.#serial.run(() =>
      retry(ON_CONFLICT, async () => {
        const before = await this.#kv.getMany(counters);
        let doc: StoreDocument;
        if (one) {
          doc = { version: 1, ...await one.exportPart() };
        } else {
          doc = { version: 1, ...await this.#spaces.get(DEFAULT_NAMESPACE).exportPart() };
          const others: [string, Omit<SpaceDocument, "history">][] = [];
          for (const namespace of await this.#otherNamespaces()) {
            const part = await this.#spaces.get(namespace).exportPart();
            const empty = Object.keys(part.sessions).length + part.works.length +
                Object.keys(part.progress).length === 0;
            if (!empty) others.push([namespace, part]);
          }
          // Own keys: a namespace may be named `__proto__`.
          if (others.length > 0) doc.namespaces = ownObject(others);
        }
        const after = await this.#kv.getMany(counters);
        if (after.some((entry, i) => entry.versionstamp !== before[i]!.versionstamp)) return AGAIN;
        return doc;
      }, () => new Error("The store kept changing during the export; try again."))
    );
  }

  async importState(state: StoreState, options: NamespaceOption = {}): Promise<void> {
    const one = options.namespace === undefined ? undefined : this.#spaces.get(options.namespace);
    return await this.#change(async () => {
      const targets: [KvSpace, SpaceState][] = one
        ? [[one, state.space(DEFAULT_NAMESPACE)]]
        : sortNamespaces([DEFAULT_NAMESPACE, ...await this.#otherNamespaces(), ...state.namespaces()])
          .map((namespace) => [this.#spaces.get(namespace), state.space(namespace)]);
      await retry(
        ON_CONFLICT,
        async () => await this.#import(targets, !one) || AGAIN,
        () => new Error("The store kept changing during the import; try again."),
      );
      for (const [space] of targets) await space.afterImport();
    });
  }

  /** How often each read and write path of namespace `default` ran in this process. */
  get stats(): Readonly<KvSessionStats> {
    return this.#spaces.get(DEFAULT_NAMESPACE).stats;
  }

  watch(onChange: () => void): () => void {
    return watchKvKeys(this.#kv, [DEFAULT_LAYOUT.storeVersion, NAMESPACES_VERSION], onChange);
  }

  close(): Promise<void> {
    return this.#serial.run(async () => {
      if (this.#closed) return;
      this.#closed = true;
      clearTimeout(this.#sweepTimer);
      await this.#lease.release();
      this.#kv.close();
    });
  }

  /**
   * Replaces each target space's contents in one commit; `everything` also checks that no other
   * namespace appeared meanwhile. False when another writer got in between (nothing changed).
   */
  async #import(targets: readonly [KvSpace, SpaceState][], everything: boolean): Promise<boolean> {
    const commit = new Commit();
    if (everything) {
      commit.check(NAMESPACES_VERSION, (await this.#kv.get(NAMESPACES_VERSION)).versionstamp);
    }
    for (const [space] of targets) {
      const version = await this.#kv.get(space.layout.storeVersion);
      commit.check(space.layout.storeVersion, version.versionstamp).countChange(space.layout);
    }
    const plans: SpaceImport[] = [];
    for (const [space, state] of targets) plans.push(await space.planImport(commit, state));
    if (!commit.fits()) {
      fail(
        "LIMIT_EXCEEDED",
        `This document has too many sessions, work entries, progress documents and namespaces (and existing ones to replace) for one Deno KV commit (${commit.mutations} changes). Import it in parts (one namespace at a time with --namespace).`,
      );
    }
    for (const plan of plans) await plan.stage();
    if (await commit.commit(this.#kv)) return true;
    for (const plan of plans) await plan.abandon();
    return false;
  }

  /**
   * The names of the namespaces other than `default` that have keys, found by skipping from one
   * `["n", NAME]` prefix to the next (one small listing per namespace, whatever its size).
   */
  async #otherNamespaces(): Promise<string[]> {
    const names: string[] = [];
    let selector: Deno.KvListSelector = { prefix: [NAMESPACE_TAG] };
    for (;;) {
      let next: Deno.KvKeyPart | undefined;
      for await (const e of this.#kv.list(selector, { limit: 1 })) next = e.key[1];
      if (next === undefined) return names;
      if (isNamespace(next) && next !== DEFAULT_NAMESPACE) names.push(next);
      // `true` sorts after every other key part, so this starts right past every key under ["n", next]
      // (a foreign key part that is no name is skipped the same way).
      selector = { prefix: [NAMESPACE_TAG], start: [NAMESPACE_TAG, next, true] };
    }
  }
}
