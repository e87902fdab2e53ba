/** The default store: everything in memory, no file operations (R4.2, R4.5). */
import { DEFAULTS } from "../config.ts";
import type { HistoryView } from "../domain/history.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import { Listeners } from "./change_feed.ts";
import { type StoreDocument, StoreState } from "./state.ts";
import {
  type HistoryPage,
  type Store,
  type StoreOptions,
  type TreeChangeOptions,
  type TreeUpdate,
} from "./store.ts";

/** A store that lives as long as the process. */
export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  #state = new StoreState();
  #listeners = new Listeners();
  readonly historySize: number;

  constructor(options: StoreOptions = {}) {
    this.historySize = options.historySize ?? DEFAULTS.historySize;
  }

  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T> {
    return Promise.resolve().then(() => fn(this.#state.sessions.get(sessionId)));
  }

  updateTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryView) => T,
    options: TreeChangeOptions = { tool: "store" },
  ): Promise<TreeUpdate<T>> {
    return Promise.resolve().then(() =>
      this.#changed(
        this.#state.applyTree(sessionId, fn, { ...options, historySize: this.historySize }).result,
      )
    );
  }

  readHistory(sessionId: string, limit: number): Promise<HistoryPage> {
    return Promise.resolve().then(() => this.#state.readHistory(sessionId, limit, this.historySize));
  }

  listSessions(): Promise<string[]> {
    return Promise.resolve([...this.#state.sessions.keys()]);
  }

  readWorks<T>(fn: (entries: ReadonlyMap<string, WorkEntry>) => T): Promise<T> {
    return Promise.resolve().then(() => fn(this.#state.works));
  }

  updateWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T> {
    return Promise.resolve().then(() => this.#changed(this.#state.applyWorks(fn).result));
  }

  readProgress(project: string): Promise<ProgressDoc | undefined> {
    return Promise.resolve(this.#state.progress.get(project));
  }

  updateProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Promise<ProgressDoc> {
    return Promise.resolve().then(() => this.#changed(this.#state.applyProgress(project, fn).result));
  }

  listProjects(): Promise<string[]> {
    return Promise.resolve([...this.#state.progress.keys()]);
  }

  exportDocument(): Promise<StoreDocument> {
    return Promise.resolve().then(() => structuredClone(this.#state.toDocument()));
  }

  importState(state: StoreState): Promise<void> {
    return Promise.resolve().then(() => this.#changed(this.#state.replaceWith(state).result));
  }

  watch(onChange: () => void): () => void {
    return this.#listeners.add(onChange);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #changed<T>(result: T): T {
    queueMicrotask(() => this.#listeners.notify());
    return result;
  }
}
