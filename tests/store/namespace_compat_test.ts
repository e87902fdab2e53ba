/**
 * Stores written before namespaces existed load unchanged into namespace `default` (docs/namespaces.md). The fixtures were written by the code of commit d85dd8a (the last one before
 * namespaces): `JsonFileStore` and `KvStore` each given the same changes (sessions "default" and
 * "other", a work entry with its snapshot, a progress document, four history entries).
 */
import assert from "node:assert/strict";
import { createTask } from "../../lib/domain/task_ops.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { StoreState } from "../../lib/store/state.ts";
import type { Store } from "../../lib/store/store.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** What the old code wrote, as every store must show it in `default`. */
async function showsTheOldData(store: Store): Promise<void> {
  assert.deepEqual(await store.listNamespaces(), ["default"]);
  const space = store.space("default");
  assert.deepEqual((await space.listSessions()).sort(), ["default", "other"]);
  assert.equal(await space.readTree("default", (t) => t!.get("build")!.resolution), "built");
  assert.equal(await space.readTree("other", (t) => t!.get("x")!.name), "X");
  assert.deepEqual(
    (await space.readHistory("default", 10)).entries.map((e) => e.tool),
    ["completeTask", "startTask", "createTask"],
  );
  assert.deepEqual(
    await space.readWorks((entries) => [...entries.values()].map((e) => [e.workId, e.work_tasks?.[0]?.id])),
    [["12345678", "ship"]],
  );
  assert.deepEqual(await space.listProjects(), ["ship"]);
  assert.deepEqual((await space.readProgress("ship"))?.content, { goal: "ship it", completed: ["build"] });
  const other = store.space("team");
  assert.deepEqual(await other.listSessions(), []);
  assert.deepEqual(await other.readWorks((entries) => entries.size), 0);
  assert.deepEqual(await other.listProjects(), []);
}

/** A namespace written beside the old data leaves it as it was. */
async function goesOnBesideIt(store: Store): Promise<void> {
  const before = await store.exportDocument({ namespace: "default" });
  await store.space("team").updateTree("default", (t) => createTask(t, { id: "ship", name: "Team ship" }));
  assert.deepEqual(await store.listNamespaces(), ["default", "team"]);
  assert.deepEqual(await store.exportDocument({ namespace: "default" }), before);
  assert.equal(await store.space("default").readTree("default", (t) => t!.get("ship")!.name), "Ship");
}

async function withCopy(name: string, body: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-compat-" });
  try {
    const path = `${dir}/${name}`;
    await Deno.copyFile(new URL(name, FIXTURES), path);
    await body(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a JSON file written before namespaces loads unchanged into namespace default", async () => {
  await withCopy("before_namespaces.json", async (path) => {
    const original = await Deno.readTextFile(path);
    let store = await JsonFileStore.open(path);
    try {
      await showsTheOldData(store);
      assert.equal(await Deno.readTextFile(path), original, "reading does not rewrite the file");
      await goesOnBesideIt(store);
      await store.close();
      const written = JSON.parse(await Deno.readTextFile(path));
      assert.deepEqual(Object.keys(written.namespaces), ["team"]);
      const old = JSON.parse(original);
      for (const key of ["sessions", "works", "progress", "history"]) {
        assert.deepEqual(written[key], old[key], `top-level ${key} is still namespace default's`);
      }
      store = await JsonFileStore.open(path);
      assert.deepEqual(await store.listNamespaces(), ["default", "team"]);
    } finally {
      await store.close();
    }
  });
});

Deno.test("a Deno KV database written before namespaces loads unchanged into namespace default", async () => {
  await withCopy("before_namespaces.kv", async (path) => {
    const kv = await Deno.openKv(path);
    const keysBefore: Deno.KvKey[] = [];
    for await (const e of kv.list({ prefix: [] })) keysBefore.push(e.key);
    kv.close();
    assert.ok(keysBefore.every((key) => key[0] !== "n"), "the fixture has no namespace keys");
    let store = await KvStore.open(path);
    try {
      await showsTheOldData(store);
      await goesOnBesideIt(store);
      await store.close();
      store = await KvStore.open(path);
      await showsTheOldData(await onlyDefault(store));
    } finally {
      await store.close();
    }
  });
});

/** The store, once namespace `team` (written by {@link goesOnBesideIt}) is emptied again. */
async function onlyDefault(store: Store): Promise<Store> {
  assert.deepEqual(await store.listNamespaces(), ["default", "team"]);
  assert.equal(await store.space("team").readTree("default", (t) => t!.get("ship")!.name), "Team ship");
  await store.importState(new StoreState(), { namespace: "team" });
  return store;
}
