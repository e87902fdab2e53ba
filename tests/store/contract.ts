/**
 * The runner of the store contract suite (contract_test.ts, history_contract_test.ts): each behaviour
 * runs unchanged against the memory, JSON file and Deno KV stores, on a fresh place per test.
 */
import assert from "node:assert/strict";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { Store, StoreOptions } from "../../lib/store/store.ts";
import { type Place, STORE_KINDS, type StoreKind } from "../support/store_places.ts";
import { canonical } from "./fixtures/canonical.ts";

/** The session's tree as canonical JSON text ("" when absent); asserts its invariants. */
export function dump(store: Store, sessionId = "s"): Promise<string> {
  return store.readTree(sessionId, (tree) => {
    if (!tree) return "";
    assert.deepEqual(invariantViolations(tree), []);
    return canonical(tree.roots);
  });
}

/** Runs `body` on a fresh place of `kind`, closing every store it opened. */
export function contract(
  behaviour: string,
  body: (ctx: Ctx) => Promise<void>,
  only?: (k: StoreKind) => boolean,
  options?: StoreOptions,
) {
  for (const kind of STORE_KINDS) {
    if (only && !only(kind)) continue;
    Deno.test(`${kind.name} store: ${behaviour}`, async () => {
      const place = await kind.place(options);
      const opened: Store[] = [];
      const ctx: Ctx = {
        kind,
        place,
        open: async () => {
          const store = await place.open();
          opened.push(store);
          return store;
        },
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

/** What a behaviour gets: its store kind, its place, and a way to open stores on it. */
export interface Ctx {
  kind: StoreKind;
  place: Place;
  open: () => Promise<Store>;
}

/** Store kinds whose data outlives the store object. */
export const durable = (k: StoreKind) => k.durable;
/** Store kinds that several store objects (processes) can share. */
export const shared = (k: StoreKind) => k.shared;
