/** The default store: everything in memory, no file operations (R4.2, R4.5). */
import { DEFAULTS } from "../config.ts";
import { Listeners } from "./change_feed.ts";
import { stateDocument, type StoreDocument } from "./file_format.ts";
import { type Applied, StoreState } from "./state.ts";
import { Spaces, type StateHandle, StateSpace } from "./state_space.ts";
import type { NamespaceOption, Space, Store, StoreOptions } from "./store.ts";

/** A store that lives as long as the process. */
export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  #state = new StoreState();
  #listeners = new Listeners();
  readonly historySize: number;
  readonly #spaces: Spaces<StateSpace>;

  constructor(options: StoreOptions = {}) {
    this.historySize = options.historySize ?? DEFAULTS.historySize;
    const handle: StateHandle = {
      read: <T>(fn: (state: StoreState) => T) => Promise.resolve().then(() => fn(this.#state)),
      mutate: <T>(apply: (state: StoreState) => Applied<T>) =>
        Promise.resolve().then(() => this.#changed(apply(this.#state).result)),
    };
    this.#spaces = new Spaces((namespace) =>
      new StateSpace({ namespace, kind: this.kind, historySize: this.historySize, state: handle })
    );
  }

  space(namespace: string): Space {
    return this.#spaces.get(namespace);
  }

  listNamespaces(): Promise<string[]> {
    return Promise.resolve().then(() => this.#state.namespaces());
  }

  exportDocument(options: NamespaceOption = {}): Promise<StoreDocument> {
    return Promise.resolve().then(() => structuredClone(stateDocument(this.#state, this.#checked(options))));
  }

  importState(state: StoreState, options: NamespaceOption = {}): Promise<void> {
    return Promise.resolve().then(() =>
      this.#changed(this.#state.replaceWith(state, this.#checked(options)).result)
    );
  }

  watch(onChange: () => void): () => void {
    return this.#listeners.add(onChange);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #checked(options: NamespaceOption): string | undefined {
    return options.namespace === undefined ? undefined : this.#spaces.get(options.namespace).namespace;
  }

  #changed<T>(result: T): T {
    queueMicrotask(() => this.#listeners.notify());
    return result;
  }
}
