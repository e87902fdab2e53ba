/**
 * The one place where a failing store becomes a coded refusal: every store the server opens is
 * wrapped by {@link guardStore}, which turns a failure of the store itself (disk full, read-only file
 * system, permission denied, a file that can no longer be read or parsed, a Deno KV error) into a
 * `DomainError` with the code `STORE_UNAVAILABLE`, and logs the cause.
 *
 * Refusals by the domain and errors thrown by a change's own callback pass through unchanged: only
 * what failed inside the store is the store's failure. The stores keep nothing of a change they could
 * not make durable, so once the cause is gone the next change works without a restart.
 */
import { DomainError } from "../domain/errors.ts";
import type { HistoryContext } from "../domain/history.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";
import type { Logger } from "../log.ts";
import type { StoreDocument } from "./file_format.ts";
import type { StoreState } from "./state.ts";
import type { HistoryPage, TreeChangeOptions, TreeUpdate } from "../domain/history.ts";
import type { NamespaceOption, Space, Store } from "./store.ts";
import { StoreOpenError } from "./store.ts";

/** Wraps `store` so that its own failures are `STORE_UNAVAILABLE` (see the module doc). */
export function guardStore(store: Store, log: Logger): Store {
  return store instanceof GuardedStore ? store : new GuardedStore(store, log);
}

/** What a user is told about a store failure: the kind of cause, never the exception's text. */
export function describeStoreFailure(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = String((error as Error)?.message ?? "");
  if (code === "ENOSPC" || /no space left|disk is full|disk full/i.test(message)) return "the disk is full";
  if (code === "EROFS" || /read-only|readonly/i.test(message)) return "the file system is read-only";
  if (
    error instanceof Deno.errors.PermissionDenied || code === "EACCES" || code === "EPERM" ||
    error instanceof Deno.errors.NotCapable
  ) return "permission was denied";
  if (error instanceof StoreOpenError) return "the store's file can no longer be read or parsed";
  if (
    error instanceof Deno.errors.NotADirectory || error instanceof Deno.errors.IsADirectory ||
    error instanceof Deno.errors.NotFound
  ) return "the store's path is not usable";
  return "the store failed";
}

/** Runs a store call, turning a failure of the store itself into `STORE_UNAVAILABLE` (module doc). */
type Guard = <R>(
  what: "read" | "change",
  call: (own: <F extends (...args: never[]) => unknown>(fn: F) => F) => Promise<R>,
) => Promise<R>;

function guardOf(kind: string, log: Logger): Guard {
  return async (what, call) => {
    // What the callbacks threw; made only when one throws (every tool call passes through here).
    let thrown: object[] | undefined;
    // `own` marks a callback so that what it throws passes through as it is.
    const own = <F extends (...args: never[]) => unknown>(fn: F): F =>
      ((...args: Parameters<F>) => {
        try {
          return fn(...args);
        } catch (error) {
          if (typeof error === "object" && error !== null) (thrown ??= []).push(error);
          throw error;
        }
      }) as F;
    try {
      return await call(own);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      if (typeof error === "object" && error !== null && thrown?.includes(error)) throw error;
      const cause = describeStoreFailure(error);
      log.error("store unavailable", { store: kind, operation: what, cause, error });
      throw new DomainError(
        "STORE_UNAVAILABLE",
        what === "change"
          ? `The change could not be saved: ${cause}. Nothing was changed; reads still work, and changes work again once the cause is fixed (details in the server log).`
          : `The store could not be read: ${cause} (details in the server log).`,
      );
    }
  };
}

class GuardedStore implements Store {
  readonly #store: Store;
  readonly #guard: Guard;
  readonly #spaces = new Map<Space, GuardedSpace>();

  constructor(store: Store, log: Logger) {
    this.#store = store;
    this.#guard = guardOf(store.kind, log);
  }

  get kind() {
    return this.#store.kind;
  }

  get historySize() {
    return this.#store.historySize;
  }

  space(namespace: string): Space {
    const inner = this.#store.space(namespace);
    let space = this.#spaces.get(inner);
    if (!space) this.#spaces.set(inner, space = new GuardedSpace(inner, this.#guard));
    return space;
  }

  listNamespaces(): Promise<string[]> {
    return this.#guard("read", () => this.#store.listNamespaces());
  }

  exportDocument(options?: NamespaceOption): Promise<StoreDocument> {
    return this.#guard("read", () => this.#store.exportDocument(options));
  }

  importState(state: StoreState, options?: NamespaceOption): Promise<void> {
    return this.#guard("change", () => this.#store.importState(state, options));
  }

  watch(onChange: () => void): () => void {
    return this.#store.watch(onChange);
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}

class GuardedSpace implements Space {
  readonly #space: Space;
  readonly #guard: Guard;

  constructor(space: Space, guard: Guard) {
    this.#space = space;
    this.#guard = guard;
  }

  get namespace() {
    return this.#space.namespace;
  }

  get kind() {
    return this.#space.kind;
  }

  get historySize() {
    return this.#space.historySize;
  }

  readTree<T>(sessionId: string, fn: (tree: TaskTree | undefined) => T): Promise<T> {
    return this.#guard("read", (own) => this.#space.readTree(sessionId, own(fn)));
  }

  updateTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryContext) => T,
    options?: TreeChangeOptions,
  ): Promise<TreeUpdate<T>> {
    return this.#guard("change", (own) => this.#space.updateTree(sessionId, own(fn), options));
  }

  readHistory(sessionId: string, limit: number): Promise<HistoryPage> {
    return this.#guard("read", () => this.#space.readHistory(sessionId, limit));
  }

  listSessions(): Promise<string[]> {
    return this.#guard("read", () => this.#space.listSessions());
  }

  readWorks<T>(fn: (entries: ReadonlyMap<string, WorkEntry>) => T): Promise<T> {
    return this.#guard("read", (own) => this.#space.readWorks(own(fn)));
  }

  updateWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Promise<T> {
    return this.#guard("change", (own) => this.#space.updateWorks(own(fn)));
  }

  readProgress(project: string): Promise<ProgressDoc | undefined> {
    return this.#guard("read", () => this.#space.readProgress(project));
  }

  updateProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Promise<ProgressDoc> {
    return this.#guard("change", (own) => this.#space.updateProgress(project, own(fn)));
  }

  listProjects(): Promise<string[]> {
    return this.#guard("read", () => this.#space.listProjects());
  }

  version(): Promise<string> {
    return this.#guard("read", () => this.#space.version());
  }
}
