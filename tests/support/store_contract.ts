/**
 * The runner of the store contract suite (contract_test.ts, history_contract_test.ts): each behaviour
 * runs unchanged against the memory, JSON file and Deno KV stores, on a fresh place per test, once in
 * namespace `default` and once in another namespace (docs/namespaces.md), so every path of every
 * store runs under both key layouts.
 */
import assert from "node:assert/strict";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { DEFAULT_NAMESPACE } from "../../lib/domain/schemas.ts";
import type { StoreDocument } from "../../lib/store/file_format.ts";
import type { StoreState } from "../../lib/store/state.ts";
import type { Space, Store, StoreOptions } from "../../lib/store/store.ts";
import { type Place, STORE_KINDS, type StoreKind } from "./store_places.ts";
import { canonical } from "../store/fixtures/canonical.ts";

/** The namespaces every behaviour runs in: `default` and one with a prefixed key layout. */
export const CONTRACT_NAMESPACES = [DEFAULT_NAMESPACE, "team-b.1"] as const;

/** The session's tree as canonical JSON text ("" when absent); asserts its invariants. */
export function dump(space: Space, sessionId = "s"): Promise<string> {
  return space.readTree(sessionId, (tree) => {
    if (!tree) return "";
    assert.deepEqual(invariantViolations(tree), []);
    return canonical(tree.roots);
  });
}

/** Runs `body` on a fresh place of `kind`, in each of {@link CONTRACT_NAMESPACES}, closing every store it opened. */
export function contract(
  behaviour: string,
  body: (ctx: Ctx) => Promise<void>,
  only?: (k: StoreKind) => boolean,
  options?: StoreOptions,
) {
  for (const kind of STORE_KINDS) {
    if (only && !only(kind)) continue;
    for (const namespace of CONTRACT_NAMESPACES) {
      const where = namespace === DEFAULT_NAMESPACE ? "" : ` (namespace ${namespace})`;
      Deno.test(`${kind.name} store: ${behaviour}${where}`, async () => {
        const place = await kind.place(options);
        const opened: Store[] = [];
        const stores = new Map<Space, Store>();
        const storeOf = (space: Space) => {
          const store = stores.get(space);
          assert.ok(store, "a space opened by this test");
          return store;
        };
        const openStore = async () => {
          const store = await place.open();
          opened.push(store);
          return store;
        };
        const ctx: Ctx = {
          kind,
          place,
          namespace,
          openStore,
          open: async () => {
            const store = await openStore();
            const space = store.space(namespace);
            stores.set(space, store);
            return space;
          },
          close: (space) => storeOf(space).close(),
          exportDocument: (space) => storeOf(space).exportDocument(namespaceOption(namespace)),
          importState: (space, state) => storeOf(space).importState(state, namespaceOption(namespace)),
        };
        try {
          await body(ctx);
        } finally {
          for (const store of opened) await store.close();
          await place.cleanup();
        }
      });
    }
  }
}

/** What a behaviour about namespaces themselves gets: its store kind, its place, and a way to open stores on it. */
export interface StoreCtx {
  kind: StoreKind;
  place: Place;
  /** Opens a store on the place. */
  open: () => Promise<Store>;
}

/**
 * Runs `body` once per store kind on a fresh place, closing every store it opened: for behaviours
 * about namespaces themselves (tests/store/namespace_test.ts), which choose their namespaces.
 */
export function storeContract(
  behaviour: string,
  body: (ctx: StoreCtx) => Promise<void>,
  only?: (k: StoreKind) => boolean,
) {
  for (const kind of STORE_KINDS) {
    if (only && !only(kind)) continue;
    Deno.test(`${kind.name} store: ${behaviour}`, async () => {
      const place = await kind.place();
      const opened: Store[] = [];
      try {
        await body({
          kind,
          place,
          open: async () => {
            const store = await place.open();
            opened.push(store);
            return store;
          },
        });
      } finally {
        for (const store of opened) await store.close();
        await place.cleanup();
      }
    });
  }
}

/** `default` exports and imports the whole store (the format from before namespaces); the other namespace itself. */
function namespaceOption(namespace: string): { namespace?: string } {
  return namespace === DEFAULT_NAMESPACE ? {} : { namespace };
}

/** What a behaviour gets: its store kind, its place, its namespace, and ways to open stores on it. */
export interface Ctx {
  kind: StoreKind;
  place: Place;
  /** The namespace the behaviour runs in. */
  namespace: string;
  /** Opens a store on the place and gives its space of {@link namespace}. */
  open: () => Promise<Space>;
  /** Opens a store on the place. */
  openStore: () => Promise<Store>;
  /** Closes the store a space opened by {@link open} belongs to. */
  close: (space: Space) => Promise<void>;
  /** Exports the space's namespace (`default`: the whole store). */
  exportDocument: (space: Space) => Promise<StoreDocument>;
  /** Imports into the space's namespace (`default`: the whole store). */
  importState: (space: Space, state: StoreState) => Promise<void>;
}

/** Store kinds whose data outlives the store object. */
export const durable = (k: StoreKind) => k.durable;
/** Store kinds that several store objects (processes) can share. */
export const shared = (k: StoreKind) => k.shared;
