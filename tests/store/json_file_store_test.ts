/** The JSON file store on a real file: what it writes, what it leaves behind, what it refuses. */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { completeTask, createTask, startTask } from "../../lib/domain/task_ops.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { StoreDocumentSchema } from "../../lib/store/file_format.ts";
import { StoreOpenError } from "../../lib/store/store.ts";

async function tempDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix: "checklist-store-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

async function open(path: string): Promise<JsonFileStore & AsyncDisposable> {
  const store = await JsonFileStore.open(path);
  return Object.assign(store, { [Symbol.asyncDispose]: () => store.close() });
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

/** Creates `Plan` with subtasks s1, s2 in `sessionId`. */
function plan(store: JsonFileStore, sessionId = "s"): Promise<unknown> {
  return store.space("default").updateTree(
    sessionId,
    (tree) =>
      createTask(tree, { name: "Plan", tasks: [{ id: "s1", name: "One" }, { id: "s2", name: "Two" }] }),
  );
}

Deno.test("JsonFileStore: a change written is there when the file is opened again", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.json`;
  {
    await using store = await open(path);
    await plan(store);
    await store.space("default").updateTree("s", (tree) => startTask(tree, "s1"));
    await store.space("default").updateTree("s", (tree) => completeTask(tree, "s1", "finished"));
  }
  await using reopened = await open(path);
  assert.deepEqual(await reopened.space("default").listSessions(), ["s"]);
  const roots = await reopened.space("default").readTree("s", (tree) => structuredClone(tree?.roots));
  assert.equal(roots?.length, 1);
  assert.equal(roots![0]!.name, "Plan");
  assert.deepEqual(
    roots![0]!.tasks.map((t) => [t.id, t.status, t.resolution]),
    [["s1", "done", "finished"], ["s2", "todo", undefined]],
  );
});

Deno.test("JsonFileStore: the written file is a valid store document and no temp file is left", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.json`;
  await using store = await open(path);
  await plan(store, "alpha");
  await plan(store, "beta");
  const doc = StoreDocumentSchema.parse(JSON.parse(await Deno.readTextFile(path)));
  assert.equal(doc.version, 1);
  assert.deepEqual(Object.keys(doc.sessions).sort(), ["alpha", "beta"]);
  assert.deepEqual(doc.sessions.alpha![0]!.tasks.map((t) => t.id), ["s1", "s2"]);
  assert.deepEqual(names(dir.path).filter((n) => n !== "store.json.lock"), ["store.json"]);
});

Deno.test("JsonFileStore: opening a missing file creates nothing until the first change", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.json`;
  await using store = await open(path);
  assert.deepEqual(await store.space("default").listSessions(), []);
  assert.equal(await store.space("default").readTree("s", (tree) => tree), undefined);
  assert.deepEqual(names(dir.path), []);
  await plan(store);
  assert.ok(names(dir.path).includes("store.json"));
});

Deno.test("JsonFileStore: a refused change leaves the file byte-identical and the state unchanged", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.json`;
  await using store = await open(path);
  await plan(store);
  const before = await Deno.readFile(path);
  const stateBefore = await store.space("default").readTree("s", (tree) => structuredClone(tree?.roots));

  await assert.rejects(
    store.space("default").updateTree("s", (tree) => {
      createTask(tree, { name: "Half", tasks: [{ id: "new", name: "kept?" }] });
      return createTask(tree, { name: "Clash", tasks: [{ id: "s1", name: "duplicate" }] });
    }),
    (error: unknown) => error instanceof DomainError && error.code === "DUPLICATE_ID",
  );
  await assert.rejects(
    store.space("default").updateTree("fresh", (tree) => startTask(tree, "missing")),
    (error: unknown) => error instanceof DomainError && error.code === "NOT_FOUND",
  );

  assert.deepEqual(await Deno.readFile(path), before);
  assert.deepEqual(
    await store.space("default").readTree("s", (tree) => structuredClone(tree?.roots)),
    stateBefore,
  );
  assert.deepEqual(await store.space("default").listSessions(), ["s"], "a refused change creates no session");
  await using reopened = await open(path);
  assert.deepEqual(
    await reopened.space("default").readTree("s", (tree) => structuredClone(tree?.roots)),
    stateBefore,
  );
});

Deno.test("JsonFileStore: two stores on one file see each other's changes", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.json`;
  await using a = await open(path);
  await using b = await open(path);

  await plan(a);
  assert.deepEqual(await b.space("default").readTree("s", (tree) => tree?.roots[0]?.tasks.map((t) => t.id)), [
    "s1",
    "s2",
  ]);

  await b.space("default").updateTree("s", (tree) => startTask(tree, "s1"));
  await b.space("default").updateTree("s", (tree) => completeTask(tree, "s1", "by b"));
  await a.space("default").updateTree("s", (tree) => startTask(tree, "s2"));
  const seen = await b.space("default").readTree(
    "s",
    (tree) => tree?.roots[0]?.tasks.map((t) => [t.id, t.status]),
  );
  assert.deepEqual(seen, [["s1", "done"], ["s2", "in_progress"]], "b sees a's start, made after b's change");

  await Promise.all([
    a.space("default").updateTree(
      "other",
      (tree) => createTask(tree, { name: "From a", tasks: [{ id: "x", name: "x" }] }),
    ),
    b.space("default").updateTree(
      "other",
      (tree) => createTask(tree, { name: "From b", tasks: [{ id: "y", name: "y" }] }),
    ),
  ]);
  const both = await a.space("default").readTree("other", (tree) => tree?.roots.map((t) => t.name).sort());
  assert.deepEqual(both, ["From a", "From b"], "neither change is lost");
  const doc = StoreDocumentSchema.parse(JSON.parse(await Deno.readTextFile(path)));
  assert.equal(doc.sessions.other?.length, 2);
});

Deno.test("JsonFileStore: an empty file loads as an empty store", async (t) => {
  await using dir = await tempDir();
  const cases: [string, string][] = [["empty", ""], ["whitespace only", " \n\t\n"]];
  for (const [label, content] of cases) {
    await t.step(label, async () => {
      const path = `${dir.path}/${label.replaceAll(" ", "-")}.json`;
      await Deno.writeTextFile(path, content);
      await using store = await open(path);
      assert.deepEqual(await store.space("default").listSessions(), []);
      assert.deepEqual(await store.space("default").listProjects(), []);
      assert.equal(await store.space("default").readWorks((works) => works.size), 0);
      await plan(store);
      StoreDocumentSchema.parse(JSON.parse(await Deno.readTextFile(path)));
    });
  }
});

Deno.test("JsonFileStore: a corrupt file is refused with StoreOpenError and left as it was", async (t) => {
  await using dir = await tempDir();
  const cases: [string, string][] = [["invalid JSON", "[{"], ["wrong shape", '{"version": 2}'], [
    "a number",
    "42",
  ]];
  for (const [label, content] of cases) {
    await t.step(label, async () => {
      const path = `${dir.path}/${label.replaceAll(" ", "-")}.json`;
      await Deno.writeTextFile(path, content);
      await assert.rejects(JsonFileStore.open(path), (error: unknown) => {
        assert.ok(error instanceof StoreOpenError);
        assert.ok(error.message.includes(path), error.message);
        return true;
      });
      assert.equal(await Deno.readTextFile(path), content);
    });
  }
});
