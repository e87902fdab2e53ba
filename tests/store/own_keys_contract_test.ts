/**
 * Store contract: every accepted key round-trips (docs/troubleshooting.md "Limits"). `__proto__`, `constructor`,
 * `toString` and friends as a session id, a task id, a project, or a key anywhere inside a progress
 * document, and as a namespace, are stored and read back like any other key, in every store, after a
 * reopen, and through export and import.
 */
import assert from "node:assert/strict";
import { parseProgressContent, upsertProgress } from "../../lib/domain/progress_doc.ts";
import { createTask } from "../../lib/domain/task_ops.ts";
import { exportStore, parseImport } from "../../lib/store/transfer.ts";
import type { Space } from "../../lib/store/store.ts";
import { contract, durable, storeContract } from "../support/store_contract.ts";
import { connectInMemory, ok } from "../support/harness.ts";

const KEYS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

/** The progress content with its `__proto__` keys as own properties (an object literal cannot say it). */
function content() {
  return parseProgressContent(
    '{"goal":"keep every key","__proto__":{"polluted":true},"constructor":"c","toString":["t"],' +
      '"nested":{"__proto__":[1,{"__proto__":"deep"}],"valueOf":null}}',
  );
}

async function fill(store: Space): Promise<void> {
  for (const key of KEYS) {
    await store.updateTree(key, (tree) => createTask(tree, { id: key, name: `session ${key}` }));
    await store.updateTree("s", (tree) => createTask(tree, { id: key, name: `task ${key}` }));
    await store.updateProgress(
      key,
      (current) => upsertProgress(current, { project: key, content: content(), now: "2025-01-01T00:00:00Z" }),
    );
  }
}

async function check(store: Space, label: string): Promise<void> {
  assert.deepEqual((await store.listSessions()).sort(), [...KEYS, "s"].sort(), `${label}: sessions`);
  assert.deepEqual((await store.listProjects()).sort(), [...KEYS].sort(), `${label}: projects`);
  for (const key of KEYS) {
    assert.deepEqual(
      await store.readTree(key, (tree) => tree?.roots.map((t) => [t.id, t.name])),
      [[key, `session ${key}`]],
      `${label}: session ${key}`,
    );
    const doc = await store.readProgress(key);
    assert.equal(doc?.project, key, `${label}: project ${key}`);
    assert.equal(JSON.stringify(doc?.content), JSON.stringify(content()), `${label}: content of ${key}`);
  }
  assert.deepEqual(
    await store.readTree("s", (tree) => tree?.roots.map((t) => t.id)),
    KEYS,
    `${label}: task ids`,
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined, "no prototype was polluted");
}

contract(
  "__proto__, constructor and toString round-trip as session ids, task ids, projects and JSON keys",
  async (ctx) => {
    const store = await ctx.open();
    await fill(store);
    await check(store, "as written");
    if (durable(ctx.kind)) await check(await ctx.open(), "reopened");
  },
);

contract("__proto__, constructor and toString round-trip through export and import", async (ctx) => {
  const store = await ctx.open();
  await fill(store);
  const text = JSON.stringify(await ctx.exportDocument(store));
  assert.match(text, /"__proto__"/);
  const { state } = parseImport(text);
  await ctx.importState(store, state);
  await check(store, "imported");
  assert.equal(JSON.stringify(await ctx.exportDocument(store)), text, "a second export is the same document");
});

storeContract(
  "__proto__ and constructor round-trip as namespaces, also through export and import",
  async (ctx) => {
    const store = await ctx.open();
    const names = ["__proto__", "constructor"];
    for (const name of names) await fill(store.space(name));
    assert.deepEqual(
      (await store.listNamespaces()).filter((n) => names.includes(n)).sort(),
      [...names].sort(),
    );
    for (const name of names) await check(store.space(name), `namespace ${name}`);
    const text = await exportStore(store);
    const { state } = parseImport(text);
    await store.importState(state);
    for (const name of names) await check(store.space(name), `namespace ${name} imported`);
    assert.equal(await exportStore(store), text);
    if (durable(ctx.kind)) {
      const reopened = await ctx.open();
      for (const name of names) await check(reopened.space(name), `namespace ${name} reopened`);
    }
  },
);

Deno.test("the progress content of the key contract holds __proto__ as an own key", () => {
  assert.deepEqual(Object.keys(content()), ["goal", "__proto__", "constructor", "toString", "nested"]);
});

Deno.test("through the tools, __proto__ as a session id, project and content key comes back as sent", async () => {
  await using conn = await connectInMemory();
  await ok(conn.client, "createTask", { sessionId: "__proto__", id: "constructor", name: "toString" });
  const listed = await ok<{ tasks: { id: string; name: string }[] }>(conn.client, "listTasks", {
    sessionId: "__proto__",
  });
  assert.deepEqual(listed.tasks.map((t) => [t.id, t.name]), [["constructor", "toString"]]);
  const text = '{"goal":"g","__proto__":{"x":1},"nested":{"__proto__":"deep"}}';
  await ok(conn.client, "mem_progress", { project: "__proto__", content: text });
  const read = await ok<{ content: unknown }>(conn.client, "mem_progress", { project: "__proto__" });
  assert.equal(JSON.stringify(read.content), text);
});
