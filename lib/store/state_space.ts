/**
 * A {@link Space} over a {@link StoreState}: how the memory and JSON file stores give each namespace
 * its view. The store decides how a read or a change reaches its state (the file store re-reads the
 * file and writes it under a lock); the space picks its namespace's part of the state each time.
 */
import type { HistoryContext, HistoryPage, TreeChangeOptions, TreeUpdate } from "../domain/history.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import type { Applied, SpaceState, StoreState } from "./state.ts";
import { checkNamespace, type Space, type StoreKind } from "./store.ts";

/** How a store lets its spaces read and change its state. */
export interface StateHandle {
  /** Runs `fn` on the current state. */
  read<T>(fn: (state: StoreState) => T): Promise<T>;
  /** Applies a change to the state and makes it durable; undoes it when that fails. */
  mutate<T>(apply: (state: StoreState) => Applied<T>): Promise<T>;
}

/** See the module doc. */
export class StateSpace implements Space {
  readonly namespace: string;
  readonly kind: StoreKind;
  readonly historySize: number;
  readonly #state: StateHandle;

  constructor(options: { namespace: string; kind: StoreKind; historySize: number; state: StateHandle }) {
    this.namespace = options.namespace;
    this.kind = options.kind;
    this.historySize = options.historySize;
    this.#state = options.state;
  }

  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T> {
    return this.#read((space) => fn(space.sessions.get(sessionId)));
  }

  updateTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryContext) => T,
    options: TreeChangeOptions = { tool: "store" },
  ): Promise<TreeUpdate<T>> {
    const historySize = this.historySize;
    return this.#mutate((space) => space.applyTree(sessionId, fn, { ...options, historySize }));
  }

  readHistory(sessionId: string, limit: number): Promise<HistoryPage> {
    return this.#read((space) => space.readHistory(sessionId, limit, this.historySize));
  }

  listSessions(): Promise<string[]> {
    return this.#read((space) => [...space.sessions.keys()]);
  }

  readWorks<T>(fn: (entries: ReadonlyMap<string, WorkEntry>) => T): Promise<T> {
    return this.#read((space) => fn(space.works));
  }

  updateWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T> {
    return this.#mutate((space) => space.applyWorks(fn));
  }

  readProgress(project: string): Promise<ProgressDoc | undefined> {
    return this.#read((space) => space.progress.get(project));
  }

  updateProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Promise<ProgressDoc> {
    return this.#mutate((space) => space.applyProgress(project, fn));
  }

  listProjects(): Promise<string[]> {
    return this.#read((space) => [...space.progress.keys()]);
  }

  version(): Promise<string> {
    return this.#read((space) => space.version());
  }

  #read<T>(fn: (space: SpaceState) => T): Promise<T> {
    return this.#state.read((state) => fn(state.space(this.namespace)));
  }

  #mutate<T>(apply: (space: SpaceState) => Applied<T>): Promise<T> {
    return this.#state.mutate((state) => apply(state.space(this.namespace)));
  }
}

/** The spaces of one store, made on first use and kept (see {@link Store.space}). */
export class Spaces<S extends Space> {
  readonly #made = new Map<string, S>();
  readonly #make: (namespace: string) => S;

  constructor(make: (namespace: string) => S) {
    this.#make = make;
  }

  /** The space of `namespace` (checked), the same object every time. */
  get(namespace: string): S {
    let space = this.#made.get(namespace);
    if (!space) this.#made.set(namespace, space = this.#make(checkNamespace(namespace)));
    return space;
  }

  /** The spaces made so far. */
  made(): Iterable<S> {
    return this.#made.values();
  }
}
