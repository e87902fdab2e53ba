/**
 * The one store interface behind every tool: task trees per session, the work-info entries and the
 * progress documents. Memory, JSON file and Deno KV implement it and pass the same contract tests.
 *
 * Changes run as callbacks on the current state: the callback is synchronous and may throw a
 * `DomainError`, in which case nothing is kept. A returned promise resolves only after the change
 * is durable in the store (the reply waits for it).
 */
import type { HistoryEntry, HistoryView } from "../domain/history.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import type { StoreDocument, StoreState } from "./state.ts";

/** Which implementation a store is (reported by `/healthz`). */
export type StoreKind = "memory" | "file" | "kv";

/** Options every store takes. */
export interface StoreOptions {
  /** History entries kept per session (`HISTORY_SIZE`, default in `DEFAULTS`); 0 keeps none. */
  historySize?: number;
}

/** What a change to a session's tree answered, and the session's revision after it. */
export interface TreeUpdate<T> {
  result: T;
  /** The new revision; the current one when the change changed nothing. */
  revision: number;
}

/** How a change is recorded in the session's history (README "History and undo"). */
export interface TreeChangeOptions {
  /** The tool that made the change, shown by `task_history`. */
  tool: string;
  /** Pass the change the deltas of the revisions after this one (what a restore replays). */
  undoTo?: number;
}

/** A session's history as `task_history` shows it. */
export interface HistoryPage {
  /** The session's current revision (0: never changed). */
  revision: number;
  /** The oldest revision kept; undefined when none is. */
  oldest: number | undefined;
  /** The newest entries first, at most the limit asked for. */
  entries: HistoryEntry[];
}

/** See the module doc. */
export interface Store {
  /** Which implementation this is. */
  readonly kind: StoreKind;
  /** History entries kept per session (`HISTORY_SIZE`); 0 keeps none. */
  readonly historySize: number;
  /** Runs `fn` on the session's tree (undefined when the session does not exist); `fn` must not change it. */
  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T>;
  /**
   * Changes the session's tree atomically, creating the session when absent. A change that changed
   * something gets the session's next revision and a history entry, written in the same atomic
   * change as the tree; `fn` sees the history (and, with `undoTo`, the deltas a restore needs).
   */
  updateTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryView) => T,
    options?: TreeChangeOptions,
  ): Promise<TreeUpdate<T>>;
  /** The session's revision and its newest `limit` history entries. */
  readHistory(sessionId: string, limit: number): Promise<HistoryPage>;
  /** Ids of the sessions that exist. */
  listSessions(): Promise<string[]>;
  /** Runs `fn` on the work entries by id; `fn` must not change them. */
  readWorks<T>(fn: (entries: ReadonlyMap<string, WorkEntry>) => T): Promise<T>;
  /** Changes the work entries atomically (save, touch, evict). */
  updateWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T>;
  /** The project's progress document, if any. */
  readProgress(project: string): Promise<ProgressDoc | undefined>;
  /** Replaces the project's document with what `fn` makes of the current one. */
  updateProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Promise<ProgressDoc>;
  /** Names of the projects that have a document. */
  listProjects(): Promise<string[]>;
  /** The whole store as one document, read as one consistent snapshot (`deno task export`). */
  exportDocument(): Promise<StoreDocument>;
  /**
   * Replaces the whole store with `state` in one atomic change (`deno task import`): on any
   * failure nothing changed. `state` comes validated from {@link StoreState.fromFile}.
   */
  importState(state: StoreState): Promise<void>;
  /**
   * Calls `onChange` soon after any change to the store, made by this process or by another one
   * sharing it (the dashboard's live updates); returns the function that stops watching.
   */
  watch(onChange: () => void): () => void;
  /** Releases files, locks and handles. */
  close(): Promise<void>;
}

/** A store that could not open: names the place and the problem (a corrupt file is never replaced). */
export class StoreOpenError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreOpenError";
  }
}
