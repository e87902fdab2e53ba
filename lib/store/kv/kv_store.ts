/**
 * The Deno KV store (`KV_PATH`; on Deno Deploy the default KV): sessions, work entries and progress
 * documents as many small keys, safe for any number of processes on one KV.
 *
 * The key layout is in layout.ts, trees and the atomicity of their changes in sessions.ts,
 * works in works.ts, garbage in sweeper.ts. Every change is one atomic commit guarded by a
 * versionstamp check and retried on conflict; the reply waits for the commit. Deno KV's limits
 * (checked on Deno 2.9.6): a value ≤ 64 KiB, per commit ≤ 1000 mutations, ≤ 100 checks, ≤ 800 KiB
 * of keys and values, ≤ 80 KiB of set keys.
 *
 * An import replaces everything in one commit that checks the store-wide counter `["v"]`: trees and
 * snapshots are staged first, then that commit publishes them (it holds the metas, entries and
 * progress documents, so a document whose final commit would pass the limits is refused before
 * anything is written).
 */
import { fail } from "../../domain/errors.ts";
import { type ProgressDoc, ProgressDocSchema } from "../../domain/progress_doc.ts";
import type { TaskTree } from "../../domain/task_tree.ts";
import type { WorkEntry } from "../../domain/work_lru.ts";
import { chunkKeys, Commit, decodeJson, encodeJson, encodeRecord, readRecord } from "./codec.ts";
import {
  markerKey,
  metaKey,
  newName,
  progressKey,
  type SessionMeta,
  SessionMetaSchema,
  STORE_VERSION_KEY,
} from "./layout.ts";
import { KvSessions, type KvSessionStats } from "./sessions.ts";
import { retire, retireIn, sweepAll } from "./sweeper.ts";
import { KvWorks } from "./works.ts";
import { Serial } from "../serial.ts";
import type { StoreDocument, StoreState } from "../state.ts";
import { type Store, StoreOpenError } from "../store.ts";

const MAX_ATTEMPTS = 50;

/** See the module doc. */
export class KvStore implements Store {
  readonly kind = "kv" as const;
  readonly #kv: Deno.Kv;
  readonly #serial = new Serial();
  readonly #sessions: KvSessions;
  readonly #works: KvWorks;
  #closed = false;

  private constructor(kv: Deno.Kv) {
    this.#kv = kv;
    const defer = (job: () => Promise<void>) => {
      // Garbage left by a failed sweep is found again later; it never blocks a change.
      this.#serial.run(() => this.#closed ? Promise.resolve() : job()).catch(() => {});
    };
    this.#sessions = new KvSessions(kv, { defer });
    this.#works = new KvWorks(kv, { defer });
  }

  /**
   * Opens the KV at `path` (`:memory:` allowed), or the default KV without one (Deno Deploy).
   * Throws {@link StoreOpenError}. Sweeps garbage that earlier processes left, after the first reply.
   */
  static async open(path?: string): Promise<KvStore> {
    let kv: Deno.Kv;
    try {
      kv = await Deno.openKv(path);
    } catch (error) {
      throw new StoreOpenError(`Cannot open Deno KV ${path ?? "(default)"}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const store = new KvStore(kv);
    store.#serial.run(() => store.#closed ? Promise.resolve(0) : sweepAll(kv)).catch(() => {});
    return store;
  }

  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T> {
    return this.#serial.run(async () => fn((await this.#sessions.current(sessionId))?.tree));
  }

  updateTree<T>(sessionId: string, fn: (tree: TaskTree) => T): Promise<T> {
    return this.#serial.run(() => this.#sessions.update(sessionId, fn));
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
    return this.#serial.run(async () => {
      for (let attempt = 1;; attempt++) {
        const current = await this.#readProgress(project);
        const doc = fn(current?.doc);
        const key = progressKey(project);
        const parts = encodeRecord(key, doc);
        const commit = new Commit()
          .check(key, current?.versionstamp ?? null)
          .sum(STORE_VERSION_KEY, 1n)
          .setRecord(parts);
        for (const stale of chunkKeys(key, parts.length, current?.chunks ?? 1)) commit.delete(stale);
        if (await commit.commit(this.#kv)) return doc;
        if (attempt >= MAX_ATTEMPTS) {
          throw new Error(`Progress of "${project}" kept changing under this write; nothing was saved.`);
        }
      }
    });
  }

  listProjects(): Promise<string[]> {
    return this.#serial.run(async () => {
      const projects: string[] = [];
      for await (const e of this.#kv.list({ prefix: ["p"] })) {
        if (e.key.length === 2) projects.push(String(e.key[1]));
      }
      return projects;
    });
  }

  exportDocument(): Promise<StoreDocument> {
    return this.#serial.run(async () => {
      for (let attempt = 1;; attempt++) {
        const before = await this.#kv.get(STORE_VERSION_KEY);
        const sessions: StoreDocument["sessions"] = {};
        for (const id of await this.#sessions.list()) {
          const session = await this.#sessions.current(id);
          if (session) sessions[id] = structuredClone(session.tree.roots);
        }
        const works = [...(await this.#works.current()).values()].map((e) => structuredClone(e));
        const progress: StoreDocument["progress"] = {};
        for await (const e of this.#kv.list({ prefix: ["p"] })) {
          if (e.key.length !== 2) continue;
          const project = String(e.key[1]);
          const stored = await this.#readProgress(project);
          if (stored) progress[project] = stored.doc;
        }
        const after = await this.#kv.get(STORE_VERSION_KEY);
        if (after.versionstamp === before.versionstamp) return { version: 1, sessions, works, progress };
        if (attempt >= MAX_ATTEMPTS) throw new Error("The store kept changing during the export; try again.");
      }
    });
  }

  importState(state: StoreState): Promise<void> {
    return this.#serial.run(async () => {
      for (let attempt = 1;; attempt++) {
        if (await this.#import(state)) break;
        if (attempt >= MAX_ATTEMPTS) throw new Error("The store kept changing during the import; try again.");
      }
      this.#sessions.invalidate();
      this.#works.invalidate();
      await sweepAll(this.#kv);
    });
  }

  /** How often each read and write path ran in this process. */
  get stats(): Readonly<KvSessionStats> {
    return this.#sessions.stats;
  }

  close(): Promise<void> {
    return this.#serial.run(() => {
      if (!this.#closed) this.#kv.close();
      this.#closed = true;
      return Promise.resolve();
    });
  }

  async #import(state: StoreState): Promise<boolean> {
    const version = await this.#kv.get(STORE_VERSION_KEY);
    const existing = new Map<string, SessionMeta>();
    for await (const e of this.#kv.list<Uint8Array>({ prefix: ["m"] })) {
      existing.set(String(e.key[1]), SessionMetaSchema.parse(decodeJson(e.value)));
    }
    await this.#works.current();
    const commit = new Commit().check(STORE_VERSION_KEY, version.versionstamp).sum(STORE_VERSION_KEY, 1n);
    for (const [id, meta] of existing) {
      if (state.sessions.has(id)) continue;
      commit.delete(metaKey(id));
      retireIn(commit, "g", meta.gen);
    }
    const gens = new Map<string, string>();
    for (const id of state.sessions.keys()) {
      const gen = newName();
      gens.set(id, gen);
      const old = existing.get(id);
      commit.set(metaKey(id), encodeJson({ gen, seq: (old?.seq ?? 0) + 1 } satisfies SessionMeta));
      commit.delete(markerKey("g", gen));
      if (old) retireIn(commit, "g", old.gen);
    }
    const { blobs } = this.#works.planImport(commit, [...state.works.values()]);
    for await (const e of this.#kv.list({ prefix: ["p"] })) commit.delete(e.key);
    for (const [project, doc] of state.progress) commit.setRecord(encodeRecord(progressKey(project), doc));
    if (!commit.fits()) {
      fail(
        "LIMIT_EXCEEDED",
        `This document has too many sessions, work entries and progress documents (and existing ones to replace) for one Deno KV commit (${commit.mutations} changes). Import it in parts.`,
      );
    }
    for (const [id, tree] of state.sessions) await this.#sessions.stage(tree, gens.get(id));
    for (const [blob, tasks] of blobs) await this.#works.stageBlob(blob, tasks);
    if (await commit.commit(this.#kv)) return true;
    for (const gen of gens.values()) await retire(this.#kv, "g", gen);
    for (const [blob] of blobs) await retire(this.#kv, "b", blob);
    await sweepAll(this.#kv);
    return false;
  }

  async #readProgress(
    project: string,
  ): Promise<{ doc: ProgressDoc; versionstamp: string; chunks: number } | undefined> {
    const stored = await readRecord(this.#kv, progressKey(project));
    if (!stored) return undefined;
    const parsed = ProgressDocSchema.safeParse(stored.value);
    if (!parsed.success) {
      throw new Error(`Deno KV progress document "${project}" is malformed. Restore it from an export.`);
    }
    return { doc: parsed.data, versionstamp: stored.versionstamp, chunks: stored.chunks };
  }
}
