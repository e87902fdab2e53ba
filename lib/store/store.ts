/**
 * The one store interface behind every tool: task trees per session, the work-info entries and the
 * progress documents. Memory, JSON file and Deno KV implement it and pass the same contract tests.
 *
 * Changes run as callbacks on the current state: the callback is synchronous and may throw a
 * `DomainError`, in which case nothing is kept. A returned promise resolves only after the change
 * is durable in the store (the reply waits for it).
 */
import type { ProgressDoc } from "../domain/progress_doc.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import type { StoreDocument, StoreState } from "./state.ts";

/** Which implementation a store is (reported by `/healthz`). */
export type StoreKind = "memory" | "file" | "kv";

/** See the module doc. */
export interface Store {
  /** Which implementation this is. */
  readonly kind: StoreKind;
  /** Runs `fn` on the session's tree (undefined when the session does not exist); `fn` must not change it. */
  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T>;
  /** Changes the session's tree atomically, creating the session when absent. */
  updateTree<T>(sessionId: string, fn: (tree: TaskTree) => T): Promise<T>;
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
