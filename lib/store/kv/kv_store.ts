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
 * Namespaces (README "Namespaces") are spaces under their own key prefix (kv_space.ts, layout.ts):
 * `default` keeps the keys of databases written before namespaces, so they load unchanged.
 *
 * An import replaces everything (or one namespace) in one commit that checks the change counter of
 * each namespace it replaces: trees and snapshots are staged first, then that commit publishes them
 * (it holds the metas, entries and progress documents, so a document whose final commit would pass
 * the limits is refused before anything is written).
 */
import { DEFAULTS } from "../../config.ts";
import { fail } from "../../domain/errors.ts";
import { DEFAULT_NAMESPACE, isNamespace } from "../../domain/schemas.ts";
import { watchKvKeys } from "../change_feed.ts";
import { Serial } from "../serial.ts";
import {
  sortNamespaces,
  type SpaceDocument,
  type SpaceState,
  type StoreDocument,
  type StoreState,
} from "../state.ts";
import { Spaces } from "../state_space.ts";
import { type NamespaceOption, type Store, StoreOpenError, type StoreOptions } from "../store.ts";
import { Commit } from "./commit.ts";
import { KvSpace, type SpaceImport } from "./kv_space.ts";
import { DEFAULT_LAYOUT, NAMESPACE_TAG, NAMESPACES_VERSION } from "./layout.ts";
import { AGAIN, ON_CONFLICT, retry } from "./retry.ts";
import type { KvSessionStats } from "./sessions.ts";
import { sweepAll } from "./sweeper.ts";

/** See the module doc. */
export class KvStore implements Store {
  readonly kind = "kv" as const;
  readonly historySize: number;
  readonly #kv: Deno.Kv;
  readonly #serial = new Serial();
  readonly #spaces: Spaces<KvSpace>;
  #closed = false;

  private constructor(kv: Deno.Kv, options: StoreOptions) {
    this.#kv = kv;
    this.historySize = options.historySize ?? DEFAULTS.historySize;
    const run = <T>(job: () => Promise<T>) => this.#serial.run(job);
    const defer = (job: () => Promise<void>) => {
      // Garbage left by a failed sweep is found again later; it never blocks a change.
      this.#serial.run(() => this.#closed ? Promise.resolve() : job()).catch(() => {});
    };
    const historySize = this.historySize;
    this.#spaces = new Spaces((namespace) => new KvSpace(kv, { namespace, historySize, run, defer }));
  }

  /**
   * Opens the KV at `path` (`:memory:` allowed), or the default KV without one (Deno Deploy).
   * Throws {@link StoreOpenError}. Sweeps garbage that earlier processes left, after the first reply.
   */
  static async open(path?: string, options: StoreOptions = {}): Promise<KvStore> {
    let kv: Deno.Kv;
    try {
      kv = await Deno.openKv(path);
    } catch (error) {
      throw new StoreOpenError(`Cannot open Deno KV ${path ?? "(default)"}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const store = new KvStore(kv, options);
    store.#serial.run(async () => {
      for (const namespace of [DEFAULT_NAMESPACE, ...await store.#otherNamespaces()]) {
        if (store.#closed) return;
        await sweepAll(store.#spaces.get(namespace).place);
      }
    }).catch(() => {});
    return store;
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
          // fromEntries: a namespace may be named `__proto__`.
          if (others.length > 0) doc.namespaces = Object.fromEntries(others);
        }
        const after = await this.#kv.getMany(counters);
        if (after.some((entry, i) => entry.versionstamp !== before[i]!.versionstamp)) return AGAIN;
        return doc;
      }, () => new Error("The store kept changing during the export; try again."))
    );
  }

  async importState(state: StoreState, options: NamespaceOption = {}): Promise<void> {
    const one = options.namespace === undefined ? undefined : this.#spaces.get(options.namespace);
    return await this.#serial.run(async () => {
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
    return this.#serial.run(() => {
      if (!this.#closed) this.#kv.close();
      this.#closed = true;
      return Promise.resolve();
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
