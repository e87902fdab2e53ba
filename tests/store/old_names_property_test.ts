/**
 * The repair of names older versions stored with lone surrogates (lib/store/old_names.ts), as
 * properties: whatever the names, the repaired ones are well-formed and distinct, none is dropped,
 * and a name that was well-formed keeps its own. Fixed seed, modest run counts.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { repairOldNames, wellFormedTaskIds, wellFormedValue } from "../../lib/store/old_names.ts";

const SEED = 20261126;

/** Short strings over a few letters, U+FFFD, `~2` and lone surrogates, so that repaired names meet often. */
const name = fc.array(fc.constantFrom("a", "~", "2", "\ufffd", "\ud800", "\udbff", "\udc00"), {
  minLength: 1,
  maxLength: 4,
}).map((parts) => parts.join(""));

Deno.test("repaired object keys are well-formed and distinct; none is dropped; well-formed ones keep their name", () => {
  fc.assert(
    fc.property(fc.uniqueArray(name, { maxLength: 12 }), (keys) => {
      const value = Object.fromEntries(keys.map((key, i) => [key, i]));
      const repaired = wellFormedValue(value, () => {}) as Record<string, number>;
      const out = Object.keys(repaired);
      assert.equal(out.length, keys.length);
      assert.ok(out.every((key) => key.isWellFormed()));
      assert.deepEqual(Object.values(repaired).sort((a, b) => a - b), keys.map((_, i) => i));
      for (const [i, key] of keys.entries()) if (key.isWellFormed()) assert.equal(repaired[key], i);
    }),
    { seed: SEED, numRuns: 300 },
  );
});

Deno.test("repaired task ids of a tree are well-formed and distinct; every task stays", () => {
  type Node = { id: string; tasks: Node[] };
  const level = (below: fc.Arbitrary<Node[]>) => fc.record({ id: name, tasks: below });
  const leaf = level(fc.constant([]));
  const tree: fc.Arbitrary<Node[]> = fc.array(
    level(fc.array(level(fc.array(leaf, { maxLength: 3 })), { maxLength: 3 })),
    {
      maxLength: 4,
    },
  );
  const ids = (roots: Node[]): string[] => roots.flatMap((t) => [t.id, ...ids(t.tasks)]);
  fc.assert(
    fc.property(tree, (roots) => {
      // Ids distinct before (as a store holds them), lone surrogates and all.
      const before = ids(roots);
      fc.pre(new Set(before).size === before.length);
      const reports: string[] = [];
      wellFormedTaskIds(roots, "session", (message) => reports.push(message));
      const after = ids(roots);
      assert.equal(after.length, before.length);
      assert.equal(new Set(after).size, after.length);
      assert.ok(after.every((id) => id.isWellFormed()));
      assert.equal(reports.length, before.filter((id) => !id.isWellFormed()).length);
      before.forEach((id, i) => id.isWellFormed() && assert.equal(after[i], id));
    }),
    { seed: SEED, numRuns: 300 },
  );
});

Deno.test("a repaired document holds no lone surrogate, in any namespace", () => {
  const doc = {
    version: 1,
    sessions: { "s\ud800": [{ id: "\ud801", name: "n\udc00", tasks: [] }] },
    works: [{
      workId: "12345678",
      sessionId: "s\ud800",
      work_tasks: [{ id: "\ud801", name: "x", tasks: [] }],
    }],
    progress: { "p\ud800": { project: "p\ud800", content: { "k\ud800": "v\ud800" } } },
    namespaces: { team: { sessions: { "\udbff": [] }, works: [], progress: {} } },
  };
  const text = JSON.stringify(repairOldNames(doc, () => {}));
  assert.ok(!/\\u[dD][89a-fA-F]/.test(text), text);
  assert.match(text, /"team":\{"sessions":\{"\ufffd":\[\]\}/);
});
