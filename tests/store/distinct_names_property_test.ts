/**
 * Names that differ are kept apart (contract "Failures, limits and hostile input"): any two distinct
 * strings the tools accept as session ids, task ids and projects never read or overwrite each other's
 * data (one holding a lone surrogate is not accepted, and nothing is stored), in the memory, JSON file and Deno KV stores, and both survive an export and an import. Names
 * are drawn from all of Unicode (astral planes, U+FFFD, combining marks, lookalikes, Object.prototype
 * keys), through a real SDK client. Fixed seed, modest run counts.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseImport } from "../../lib/store/transfer.ts";
import { connectInMemory, fails, ok } from "../support/harness.ts";
import { STORE_KINDS } from "../support/store_places.ts";

const SEED = 20261126;

/**
 * The shape of a session id, a task id and a project alike: 1–64 characters, no whitespace or `/`.
 * Whether a name is accepted beyond that is the server's to say: a lone surrogate is refused.
 */
function shaped(name: string): boolean {
  return name.length > 0 && name.length <= 64 && /^[^\s/]+$/.test(name);
}

const tricky = fc.constantFrom(
  "q\ufffd",
  "q\ud800",
  "q\udbff",
  "\udc00",
  "q\u{10ffff}",
  "q\u{1f600}",
  "\u00e9",
  "e\u0301",
  "A",
  "a",
  "\uff21",
  "__proto__",
  "constructor",
  "toString",
  "a\u0000",
  "a\u0000b",
  "\u{e0001}",
  "\ufeff",
  "1",
  "01",
);
const name = fc.oneof(
  tricky,
  fc.string({ unit: "binary", minLength: 1, maxLength: 8 }),
  fc.string({ unit: "grapheme-composite", minLength: 1, maxLength: 4 }),
  // Any UTF-16 code units: lone surrogates too.
  fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 4,
  }),
).filter(shaped);
/** Two distinct names, often one a small change of the other. */
const pair = fc.oneof(
  fc.tuple(name, name),
  fc.tuple(name, fc.string({ unit: "binary", maxLength: 2 })).map(([a, s]) => [a, a + s] as [string, string]),
  // Names Deno KV's UTF-8 keys once merged.
  fc.constantFrom<[string, string]>(["q\ud800", "q\ufffd"], ["q\ud800", "q\udbff"]),
).filter(([a, b]) => a !== b && shaped(a) && shaped(b));

for (const kind of STORE_KINDS) {
  Deno.test(`${kind.name} store: any two distinct accepted names stay apart as sessions, task ids and projects, and survive export and import`, async () => {
    await fc.assert(
      fc.asyncProperty(pair, async ([a, b]) => {
        const place = await kind.place();
        const copy = await kind.place();
        const store = await place.open();
        const target = await copy.open();
        try {
          await using conn = await connectInMemory({ store });
          const refused = [a, b].filter((n) => !n.isWellFormed());
          for (const n of refused) {
            await fails(conn.client, "createTask", { sessionId: n, id: "t", name: "T" }, "INVALID_INPUT");
            await fails(conn.client, "mem_progress", { project: n, content: "{}" }, "INVALID_INPUT");
            await fails(conn.client, "createTask", { sessionId: "s", id: n, name: "T" }, "INVALID_INPUT");
          }
          if (refused.length > 0) {
            assert.deepEqual(await store.exportDocument(), {
              version: 1,
              sessions: {},
              works: [],
              progress: {},
            });
            return;
          }
          for (const [i, n] of [a, b].entries()) {
            await ok(conn.client, "createTask", { sessionId: n, id: n, name: `N${i}` });
            await ok(conn.client, "mem_progress", { project: n, content: JSON.stringify({ goal: `G${i}` }) });
          }
          // Two task ids in one session too.
          await ok(conn.client, "createTask", { sessionId: "both", id: a, name: "TA" });
          await ok(conn.client, "createTask", { sessionId: "both", id: b, name: "TB" });
          const check = async (client: typeof conn.client) => {
            for (const [i, n] of [a, b].entries()) {
              const tasks = (await ok<{ tasks: { id: string; name: string }[] }>(client, "listTasks", {
                sessionId: n,
              })).tasks;
              assert.deepEqual(tasks.map((t) => [t.id, t.name]), [[n, `N${i}`]]);
              const doc = await ok<{ content: { goal: string } }>(client, "mem_progress", { project: n });
              assert.equal(doc.content.goal, `G${i}`);
              await fails(client, "getTask", { sessionId: n, id: [b, a][i]! }, "NOT_FOUND");
            }
            const both = (await ok<{ tasks: { id: string; name: string }[] }>(client, "listTasks", {
              sessionId: "both",
            })).tasks;
            assert.deepEqual(both.map((t) => [t.id, t.name]), [[a, "TA"], [b, "TB"]]);
          };
          await check(conn.client);
          const space = store.space("default");
          assert.deepEqual(new Set(await space.listSessions()), new Set([a, b, "both"]));
          assert.deepEqual(new Set(await space.listProjects()), new Set([a, b]));
          const doc = await store.exportDocument();
          await target.importState(parseImport(JSON.stringify(doc)).state);
          assert.deepEqual(await target.exportDocument(), JSON.parse(JSON.stringify(doc)));
          await using imported = await connectInMemory({ store: target });
          await check(imported.client);
        } finally {
          await store.close();
          await target.close();
          await place.cleanup();
          await copy.cleanup();
        }
      }),
      { seed: SEED, numRuns: kind.name === "memory" ? 100 : 40 },
    );
  });
}
