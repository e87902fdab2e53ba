/** Well-formed Unicode (lib/domain/unicode.ts): finding a lone surrogate anywhere in a value, and naming it. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { escapeLone, fieldPath, findIllFormed } from "../../lib/domain/unicode.ts";

const codeUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });

Deno.test("findIllFormed finds a lone surrogate in any string or key of a JSON value, and nothing else", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), codeUnits, fc.boolean(), (value, text, asKey) => {
      assert.equal(findIllFormed(value), undefined, "a JSON value from well-formed text has none");
      const holder = asKey ? { [text]: 1 } : { inner: [text] };
      const found = findIllFormed({ a: value, b: holder });
      assert.equal(found === undefined, text.isWellFormed());
      if (found) {
        assert.deepEqual(found.path, asKey ? ["b", text] : ["b", "inner", 0]);
        assert.equal(found.inKey, asKey);
        assert.match(found.unit, /^U\+D[89A-F][0-9A-F]{2}$/);
      }
    }),
    { seed: 20261126, numRuns: 500 },
  );
});

Deno.test("escapeLone writes only lone surrogates as \\uXXXX, so a message naming a field is well-formed", () => {
  assert.equal(escapeLone("q\ud800"), "q\\ud800");
  assert.equal(escapeLone("\udc00\ud83d\ude00\ud800"), "\\udc00\ud83d\ude00\\ud800");
  fc.assert(fc.property(codeUnits, (text) => assert.ok(escapeLone(text).isWellFormed())), { seed: 20261126 });
  assert.equal(fieldPath(["tasks", 0, "k\udbff"]), "tasks[0].k\\udbff");
});
