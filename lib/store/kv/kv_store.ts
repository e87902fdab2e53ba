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
 * An import replaces everything in one commit that checks the store-wide counter `["v"]`: trees and
 * snapshots are staged first, then that commit publishes them (it holds the metas, entries and
 * progress documents, so a document whose final commit would pass the limits is refused before
 * anything is written).
 */
import { DEFAULTS } from "../../config.ts";
import { fail } from "../../domain/errors.ts";
import { type ProgressDoc, ProgressDocSchema } from "../../domain/progress_doc.ts";
import type { TaskTree } from "../../domain/task_tree.ts";
import type { WorkEntry } from "../../domain/work_lru.ts";
import { watchKvKey } from "../change_feed.ts";
import { encodeJson, encodeRecord } from "./codec.ts";
import { Commit } from "./commit.ts";
import { DEFAULT_LAYOUT, type KvLayout, type KvPlace, newName, type SessionMeta } from "./layout.ts";
import { readRecord } from "./reader.ts";
import { AGAIN, ON_CONFLICT, retry } from "./retry.ts";
import { KvSessions, type KvSessionStats } from "./sessions.ts";
import { retire, retireIn, sweepAll } from "./sweeper.ts";
import { KvWorks } from "./works.ts";
import { Serial } from "../serial.ts";
import type { StoreDocument, StoreState } from "../state.ts";
import type { HistoryView } from "../../domain/history.ts";
import {
  type HistoryPage,
  type Store,
  StoreOpenError,
  type StoreOptions,
  type TreeChangeOptions,
  type TreeUpdate,
} from "../store.ts";

/** See the module doc. */
export class KvStore implements Store {
  readonly kind = "kv" as const;
  readonly historySize: number;
  readonly #kv: Deno.Kv;
  readonly #layout: KvLayout;
  readonly #place: KvPlace;
  readonly #serial = new Serial();
  readonly #sessions: KvSessions;
  readonly #works: KvWorks;
  #closed = false;

  private constructor(kv: Deno.Kv, layout: KvLayout, options: StoreOptions) {
    this.#kv = kv;
    this.#layout = layout;
    this.#place = { kv, layout };
    const defer = (job: () => Promise<void>) => {
      // Garbage left by a failed sweep is found again later; it never blocks a change.
      this.#serial.run(() => this.#closed ? Promise.resolve() : job()).catch(() => {});
    };
    this.historySize = options.historySize ?? DEFAULTS.historySize;
    this.#sessions = new KvSessions(this.#place, { defer, historySize: this.historySize });
    this.#works = new KvWorks(this.#place, { defer });
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
    const store = new KvStore(kv, DEFAULT_LAYOUT, options);
    store.#serial.run(() => store.#closed ? Promise.resolve(0) : sweepAll(store.#place)).catch(() => {});
    return store;
  }

  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T> {
    return this.#serial.run(async () => fn((await this.#sessions.current(sessionId))?.tree));
  }

  updateTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryView) => T,
    options: TreeChangeOptions = { tool: "store" },
  ): Promise<TreeUpdate<T>> {
    return this.#serial.run(() => this.#sessions.update(sessionId, fn, options));
  }

  readHistory(sessionId: string, limit: number): Promise<HistoryPage> {
    return this.#serial.run(() => this.#sessions.history(sessionId, limit));
  }

  listSessions(): Promise<string[]> {
    return this.#serial.run(() => this.#sessions.list());
  }

  readWorks<T>(fn: (entries: ReadonlyMap<string, WorkEntry>) => T): Promise<T> {
    return this.#serial.run(async () => fn(await this.#works.current()));
  }

  updateWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T> {
    return this.#serial.run(() => this.#works.update(fn));
  }

  readProgress(project: string): Promise<ProgressDoc | undefined> {
    return this.#serial.run(async () => (await this.#readProgress(project))?.doc);
  }

  updateProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Promise<ProgressDoc> {
    return this.#serial.run(() =>
      retry(ON_CONFLICT, async () => {
        const current = await this.#readProgress(project);
        const doc = fn(current?.doc);
        const parts = encodeRecord(this.#layout.progress(project), doc);
        const commit = new Commit()
          .check(this.#layout.progress(project), current?.versionstamp ?? null)
          .sum(this.#layout.storeVersion, 1n)
          .replaceRecord(parts, current?.chunks ?? 1);
        return await commit.commit(this.#kv) ? doc : AGAIN;
      }, () => new Error(`Progress of "${project}" kept changing under this write; nothing was saved.`))
    );
  }

  listProjects(): Promise<string[]> {
    return this.#serial.run(() => this.#projects());
  }

  exportDocument(): Promise<StoreDocument> {
    return this.#serial.run(() =>
      retry(ON_CONFLICT, async () => {
        const before = await this.#kv.get(this.#layout.storeVersion);
        const sessions: StoreDocument["sessions"] = {};
        for (const id of await this.#sessions.list()) {
          const session = await this.#sessions.current(id);
          if (session) sessions[id] = structuredClone(session.tree.roots);
        }
        const works = [...(await this.#works.current()).values()].map((e) => structuredClone(e));
        const progress: StoreDocument["progress"] = {};
        for (const project of await this.#projects()) {
          const stored = await this.#readProgress(project);
          if (stored) progress[project] = stored.doc;
        }
        const after = await this.#kv.get(this.#layout.storeVersion);
        if (after.versionstamp !== before.versionstamp) return AGAIN;
        return { version: 1 as const, sessions, works, progress };
      }, () => new Error("The store kept changing during the export; try again."))
    );
  }

  importState(state: StoreState): Promise<void> {
    return this.#serial.run(async () => {
      await retry(
        ON_CONFLICT,
        async () => await this.#import(state) || AGAIN,
        () => new Error("The store kept changing during the import; try again."),
      );
      this.#sessions.invalidate();
      this.#works.invalidate();
      await sweepAll(this.#place);
    });
  }

  /** How often each read and write path ran in this process. */
  get stats(): Readonly<KvSessionStats> {
    return this.#sessions.stats;
  }

  watch(onChange: () => void): () => void {
    return watchKvKey(this.#kv, this.#layout.storeVersion, onChange);
  }

  close(): Promise<void> {
    return this.#serial.run(() => {
      if (!this.#closed) this.#kv.close();
      this.#closed = true;
      return Promise.resolve();
    });
  }

  async #import(state: StoreState): Promise<boolean> {
    const layout = this.#layout;
    const version = await this.#kv.get(layout.storeVersion);
    const existing = await this.#sessions.metas();
    await this.#works.current();
    const commit = new Commit().check(layout.storeVersion, version.versionstamp).sum(layout.storeVersion, 1n);
    for (const [id, meta] of existing) {
      if (state.sessions.has(id)) continue;
      commit.delete(layout.meta(id));
      retireIn(layout, commit, "g", meta.gen);
      if (meta.line) retireIn(layout, commit, "h", meta.line);
    }
    const gens = new Map<string, string>();
    for (const id of state.sessions.keys()) {
      const gen = newName();
      gens.set(id, gen);
      const old = existing.get(id);
      commit.set(layout.meta(id), encodeJson({ gen, seq: (old?.seq ?? 0) + 1 } satisfies SessionMeta));
      commit.delete(layout.marker("g", gen));
      if (old) retireIn(layout, commit, "g", old.gen);
      // An imported session starts a new history at revision 0.
      if (old?.line) retireIn(layout, commit, "h", old.line);
    }
    const { blobs } = this.#works.planImport(commit, [...state.works.values()]);
    for await (const e of this.#kv.list(layout.progresses())) commit.delete(e.key);
    for (const [project, doc] of state.progress) {
      commit.setRecord(encodeRecord(layout.progress(project), doc));
    }
    if (!commit.fits()) {
      fail(
        "LIMIT_EXCEEDED",
        `This document has too many sessions, work entries and progress documents (and existing ones to replace) for one Deno KV commit (${commit.mutations} changes). Import it in parts.`,
      );
    }
    for (const [id, tree] of state.sessions) await this.#sessions.stage(tree, gens.get(id));
    for (const [blob, tasks] of blobs) await this.#works.stageBlob(blob, tasks);
    if (await commit.commit(this.#kv)) return true;
    for (const gen of gens.values()) await retire(this.#place, "g", gen);
    for (const [blob] of blobs) await retire(this.#place, "b", blob);
    await sweepAll(this.#place);
    return false;
  }

  /** The projects that have a progress document. */
  async #projects(): Promise<string[]> {
    const projects: string[] = [];
    for await (const e of this.#kv.list(this.#layout.progresses())) {
      const project = this.#layout.projectOf(e.key);
      if (project !== undefined) projects.push(project);
    }
    return projects;
  }

  async #readProgress(
    project: string,
  ): Promise<{ doc: ProgressDoc; versionstamp: string; chunks: number } | undefined> {
    const stored = await readRecord(this.#kv, this.#layout.progress(project));
    if (!stored) return undefined;
    const parsed = ProgressDocSchema.safeParse(stored.value);
    if (!parsed.success) {
      throw new Error(`Deno KV progress document "${project}" is malformed. Restore it from an export.`);
    }
    return { doc: parsed.data, versionstamp: stored.versionstamp, chunks: stored.chunks };
  }
}
