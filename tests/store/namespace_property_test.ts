/**
 * Namespace names as data (docs/namespaces.md): `isNamespace` is exactly the rule, and in every
 * store any valid names (`__proto__` and `constructor` included) keep their data apart and survive an
 * export and an import of everything. Fixed seed, modest run counts.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { isNamespace } from "../../lib/domain/schemas.ts";
import { createTask } from "../../lib/domain/task_ops.ts";
import { parseImport } from "../../lib/store/transfer.ts";
import { STORE_KINDS } from "../support/store_places.ts";

const SEED = 20261123;
const RULE = /^[A-Za-z0-9._-]{1,64}$/;

Deno.test("isNamespace accepts exactly 1-64 characters of A-Z a-z 0-9 . _ -", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[A-Za-z0-9._\-/ é]{0,70}$/)),
      (s) => {
        assert.equal(isNamespace(s), RULE.test(s), JSON.stringify(s));
      },
    ),
    { seed: SEED, numRuns: 2000 },
  );
  for (const value of [undefined, null, 5, {}, ["a"]]) assert.equal(isNamespace(value), false);
});

const name = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "n", "nv", "v"),
  fc.stringMatching(RULE),
).filter((n) => n !== "default");

for (const kind of STORE_KINDS) {
  Deno.test(`${kind.name} store: any valid namespace names keep their data apart and survive export and import`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(name, { minLength: 1, maxLength: 4 }), async (names) => {
        const place = await kind.place();
        const copy = await kind.place();
        const store = await place.open();
        const target = await copy.open();
        try {
          for (const [i, namespace] of names.entries()) {
            await store.space(namespace).updateTree(
              "s",
              (t) => createTask(t, { id: "t", name: `N${i}` }),
            );
          }
          for (const [i, namespace] of names.entries()) {
            const space = store.space(namespace);
            assert.deepEqual(await space.listSessions(), ["s"]);
            assert.equal(await space.readTree("s", (t) => t?.get("t")?.name), `N${i}`);
          }
          assert.deepEqual(await store.listNamespaces(), [...names].sort());
          const doc = await store.exportDocument();
          assert.deepEqual(Object.keys(doc.namespaces ?? {}).sort(), [...names].sort());
          await target.importState(parseImport(JSON.stringify(doc)).state);
          assert.deepEqual(await target.exportDocument(), JSON.parse(JSON.stringify(doc)));
        } finally {
          await store.close();
          await target.close();
          await place.cleanup();
          await copy.cleanup();
        }
      }),
      { seed: SEED, numRuns: kind.name === "memory" ? 60 : 15, examples: [[["__proto__", "constructor"]]] },
    );
  });
}
