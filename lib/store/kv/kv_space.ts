/**
 * One namespace of the Deno KV store: its sessions, works and progress documents under the
 * namespace's key layout (layout.ts: no prefix for `default`, `["n", NAME]` for the others).
 * Everything runs in the store's queue (kv_store.ts), so the caches here see one operation at a time.
 */
import type { HistoryContext } from "../../domain/history.ts";
import { type ProgressDoc, ProgressDocSchema } from "../../domain/progress_doc.ts";
import { setOwn } from "../../domain/own_keys.ts";
import { DEFAULT_NAMESPACE } from "../../domain/schemas.ts";
import type { TaskTree } from "../../domain/task_tree.ts";
import type { WorkEntry } from "../../domain/work_lru.ts";
import type { SpaceDocument } from "../file_format.ts";
import type { SpaceState } from "../state.ts";
import type { HistoryPage, TreeChangeOptions, TreeUpdate } from "../../domain/history.ts";
import type { Space } from "../store.ts";
import { encodeJson, encodeRecord } from "./codec.ts";
import { Commit } from "./commit.ts";
import { type KvLayout, type KvPlace, namespaceLayout, newName, type SessionMeta } from "./layout.ts";
import { readRecord } from "./reader.ts";
import { AGAIN, ON_CONFLICT, retry } from "./retry.ts";
import { KvSessions, type KvSessionStats } from "./sessions.ts";
import { retire, retireIn, sweepAll } from "./sweeper.ts";
import { KvWorks } from "./works.ts";

/** Options of {@link KvSpace}. */
export interface KvSpaceOptions {
  namespace: string;
  historySize: number;
  /** Runs a job in the store's queue (every operation of every space goes through it). */
  run: <T>(job: () => Promise<T>) => Promise<T>;
  /** Runs a change in the store's queue (the store sweeps after one that failed; kv_store.ts). */
  change?: <T>(job: () => Promise<T>) => Promise<T>;
  /** Runs a job after the current operation, in the store's queue (garbage sweeps). */
  defer: (job: () => Promise<void>) => void;
  /** The store's lease name, written into the markers of what it stages (liveness.ts). */
  owner?: string;
  /** Told of names read in a repaired form (old_names.ts). */
  onRepair?: (message: string) => void;
}

/** What an import into this space must do around the one commit that publishes it. */
export interface SpaceImport {
  /** Writes the staged trees and snapshots (before the commit). */
  stage(): Promise<void>;
  /** Retires what was staged (the commit did not happen). */
  abandon(): Promise<void>;
}

/** See the module doc. */
export class KvSpace implements Space {
  readonly kind = "kv" as const;
  readonly namespace: string;
  readonly historySize: number;
  readonly layout: KvLayout;
  readonly place: KvPlace;
  readonly #kv: Deno.Kv;
  readonly #run: <T>(job: () => Promise<T>) => Promise<T>;
  readonly #change: <T>(job: () => Promise<T>) => Promise<T>;
  readonly #sessions: KvSessions;
  readonly #works: KvWorks;

  constructor(kv: Deno.Kv, options: KvSpaceOptions) {
    this.namespace = options.namespace;
    this.historySize = options.historySize;
    this.layout = namespaceLayout(options.namespace);
    this.place = { kv, layout: this.layout, owner: options.owner, onRepair: options.onRepair };
    this.#kv = kv;
    this.#run = options.run;
    this.#change = options.change ?? options.run;
    this.#sessions = new KvSessions(this.place, { defer: options.defer, historySize: this.historySize });
    this.#works = new KvWorks(this.place, { defer: options.defer });
  }

  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T> {
    return this.#run(async () => fn((await this.#sessions.current(sessionId))?.tree));
  }

  updateTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryContext) => T,
    options: TreeChangeOptions = { tool: "store" },
  ): Promise<TreeUpdate<T>> {
    return this.#change(() => this.#sessions.update(sessionId, fn, options));
  }

  readHistory(sessionId: string, limit: number): Promise<HistoryPage> {
    return this.#run(() => this.#sessions.history(sessionId, limit));
  }

  listSessions(): Promise<string[]> {
    return this.#run(() => this.#sessions.list());
  }

  readWorks<T>(fn: (entries: ReadonlyMap<string, WorkEntry>) => T): Promise<T> {
    return this.#run(async () => fn(await this.#works.current()));
  }

  updateWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T> {
    return this.#change(() => this.#works.update(fn));
  }

  readProgress(project: string): Promise<ProgressDoc | undefined> {
    return this.#run(async () => (await this.#readProgress(project))?.doc);
  }

  updateProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Promise<ProgressDoc> {
    return this.#run(() =>
      retry(ON_CONFLICT, async () => {
        const current = await this.#readProgress(project);
        const doc = fn(current?.doc);
        const parts = encodeRecord(this.layout.progress(project), doc);
        const commit = new Commit()
          .check(this.layout.progress(project), current?.versionstamp ?? null)
          .countChange(this.layout)
          .replaceRecord(parts, current?.chunks ?? 1);
        return await commit.commit(this.#kv) ? doc : AGAIN;
      }, () => new Error(`Progress of "${project}" kept changing under this write; nothing was saved.`))
    );
  }

  listProjects(): Promise<string[]> {
    return this.#run(() => this.projects());
  }

  version(): Promise<string> {
    return this.#run(async () => {
      // Every change to a session rewrites its meta (a renewal too), every works change bumps the
      // works version, and a progress document is rewritten whole: their versionstamps say it all.
      const stamps: string[] = [];
      const [works] = await Promise.all([
        this.#kv.get(this.layout.worksVersion),
        ...[this.layout.metas(), this.layout.progresses()].map(async (selector) => {
          for await (const e of this.#kv.list(selector)) {
            stamps.push(`${JSON.stringify(e.key)}@${e.versionstamp}`);
          }
        }),
      ]);
      return JSON.stringify([stamps.sort(), works.versionstamp]);
    });
  }

  /** How often each read and write path ran in this process. */
  get stats(): Readonly<KvSessionStats> {
    return this.#sessions.stats;
  }

  /** Whether the space holds a session, a work entry or a progress document (in the store's queue). */
  async holdsAnything(): Promise<boolean> {
    for (const selector of [this.layout.metas(), this.layout.works(), this.layout.progresses()]) {
      for await (const _ of this.#kv.list(selector, { limit: 1 })) return true;
    }
    return false;
  }

  /** The space's part of an export (in the store's queue; the caller checks it was one snapshot). */
  async exportPart(): Promise<Omit<SpaceDocument, "history">> {
    const sessions: SpaceDocument["sessions"] = {};
    for (const id of await this.#sessions.list()) {
      const session = await this.#sessions.current(id);
      if (session) setOwn(sessions, id, structuredClone(session.tree.roots));
    }
    const works = [...(await this.#works.current()).values()].map((e) => structuredClone(e));
    const progress: SpaceDocument["progress"] = {};
    for (const project of await this.projects()) {
      const stored = await this.#readProgress(project);
      if (stored) setOwn(progress, project, stored.doc);
    }
    return { sessions, works, progress };
  }

  /**
   * Adds to `commit` the replacement of everything in this space by `state` (in the store's queue);
   * the caller checks and counts the version, commits, and calls {@link afterImport}. Returns what
   * must happen before and instead of that commit.
   */
  async planImport(commit: Commit, state: SpaceState): Promise<SpaceImport> {
    const layout = this.layout;
    const existing = await this.#sessions.metas();
    await this.#works.current();
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
    // A commit applies its sets before its deletes: delete only the keys no new document takes.
    const written = new Set<string>();
    for (const [project, doc] of state.progress) {
      const parts = encodeRecord(layout.progress(project), doc);
      for (const [key] of parts) written.add(JSON.stringify(key));
      commit.setRecord(parts);
    }
    for await (const e of this.#kv.list(layout.progresses())) {
      if (!written.has(JSON.stringify(e.key))) commit.delete(e.key);
    }
    return {
      stage: async () => {
        for (const [id, tree] of state.sessions) await this.#sessions.stage(tree, gens.get(id));
        for (const [blob, tasks] of blobs) await this.#works.stageBlob(blob, tasks);
      },
      abandon: async () => {
        for (const gen of gens.values()) await retire(this.place, "g", gen);
        for (const [blob] of blobs) await retire(this.place, "b", blob);
        await sweepAll(this.place);
      },
    };
  }

  /** Forgets the caches after an import and sweeps what it retired (in the store's queue). */
  async afterImport(): Promise<void> {
    this.#sessions.invalidate();
    this.#works.invalidate();
    await sweepAll(this.place);
  }

  /** The projects that have a progress document (in the store's queue). */
  async projects(): Promise<string[]> {
    const projects: string[] = [];
    for await (const e of this.#kv.list(this.layout.progresses())) {
      const project = this.layout.projectOf(e.key);
      if (project !== undefined) projects.push(project);
    }
    return projects;
  }

  async #readProgress(
    project: string,
  ): Promise<{ doc: ProgressDoc; versionstamp: string; chunks: number } | undefined> {
    const stored = await readRecord(this.#kv, this.layout.progress(project));
    if (!stored) return undefined;
    const parsed = ProgressDocSchema.safeParse(stored.value);
    if (!parsed.success) {
      const where = this.namespace === DEFAULT_NAMESPACE ? "" : ` of namespace "${this.namespace}"`;
      throw new Error(
        `Deno KV progress document "${project}"${where} is malformed. Restore it from an export.`,
      );
    }
    return { doc: parsed.data, versionstamp: stored.versionstamp, chunks: stored.chunks };
  }
}
