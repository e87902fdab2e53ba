/**
 * The one store interface behind every tool: namespaces (docs/namespaces.md), each a {@link Space}
 * with its task trees per session, its work-info entries and its progress documents. Memory, JSON
 * file and Deno KV implement it and pass the same contract tests.
 *
 * Changes run as callbacks on the current state: the callback is synchronous and may throw a
 * `DomainError`, in which case nothing is kept. A returned promise resolves only after the change
 * is durable in the store (the reply waits for it).
 */
import type { HistoryContext, HistoryPage, TreeChangeOptions, TreeUpdate } from "../domain/history.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import { fail } from "../domain/errors.ts";
import { isNamespace, NAMESPACE_RULE } from "../domain/schemas.ts";
import type { StoreDocument } from "./file_format.ts";
import type { StoreState } from "./state.ts";

/** Which implementation a store is (reported by `/healthz`). */
export type StoreKind = "memory" | "file" | "kv";

/** Options every store takes. */
export interface StoreOptions {
  /** History entries kept per session (`HISTORY_SIZE`, default in `DEFAULTS`); 0 keeps none. */
  historySize?: number;
}

/** One namespace's data: everything tools read and change. Two spaces never see each other's data. */
export interface Space {
  /** The namespace's name. */
  readonly namespace: string;
  /** Which implementation holds it. */
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
    fn: (tree: TaskTree, history: HistoryContext) => T,
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
  /**
   * A text that moves whenever anything in the namespace changes, a lease renewal included, and not
   * when another namespace changes: what the dashboard compares after each change (issue 35). Read
   * without visiting the namespace's tasks: KV lists the versionstamps of its sessions' metas, works
   * and progress documents; memory and a JSON file name each session's revision with its claims and
   * `git` records in progress, each document's revision and each work's save and use.
   */
  version(): Promise<string>;
}

/** Which namespace an export or import covers; without one, every namespace. */
export interface NamespaceOption {
  namespace?: string;
}

/** The whole store: every namespace (see the module doc). */
export interface Store {
  /** Which implementation this is. */
  readonly kind: StoreKind;
  /** History entries kept per session (`HISTORY_SIZE`); 0 keeps none. */
  readonly historySize: number;
  /**
   * The space of `namespace` (`default` holds everything stored before namespaces); the same object
   * on every call. Throws a `DomainError` (`INVALID_INPUT`) for an invalid name.
   */
  space(namespace: string): Space;
  /** The namespaces that hold anything (a session, a work entry or a progress document), `default` first, then by name. */
  listNamespaces(): Promise<string[]>;
  /**
   * The store as one document, read as one consistent snapshot (`deno task export`): every namespace
   * (`default` at the top level, the others in `namespaces`), or with `namespace` that one alone at
   * the top level.
   */
  exportDocument(options?: NamespaceOption): Promise<StoreDocument>;
  /**
   * Replaces the whole store with `state` in one atomic change (`deno task import`): on any
   * failure nothing changed. With `namespace`, replaces only that namespace, with `state`'s
   * `default` space. `state` comes validated from {@link StoreState.fromFile}.
   */
  importState(state: StoreState, options?: NamespaceOption): Promise<void>;
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

/** Checks a namespace name for {@link Store.space}; throws `INVALID_INPUT` naming the rule. */
export function checkNamespace(namespace: string): string {
  if (!isNamespace(namespace)) {
    fail("INVALID_INPUT", `Invalid namespace ${JSON.stringify(namespace)}: ${NAMESPACE_RULE}.`);
  }
  return namespace;
}
