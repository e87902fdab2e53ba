/**
 * The JSON file store and files changed by others (docs/troubleshooting.md "The store: what you see when things go wrong"): an
 * edit that keeps the `rev` and the size is read again before the next change, a symbolic link stays
 * one, and a task-orchestrator file (a bare array) is kept as `<file>.orig` when first converted.
 */
import assert from "node:assert/strict";
import { createTask } from "../../lib/domain/task_ops.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { openStore } from "../../lib/store/open_store.ts";
import { recordingLogger } from "../support/logs.ts";
import { sleep } from "../support/time.ts";

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-edits-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function names(store: JsonFileStore, sessionId = "s"): Promise<string[]> {
  return store.space("default").readTree(sessionId, (tree) => tree?.roots.map((t) => t.name) ?? []);
}

function add(store: JsonFileStore, name: string, sessionId = "s") {
  return store.space("default").updateTree(sessionId, (tree) => createTask(tree, { name }));
}

Deno.test("JsonFileStore: an edit that keeps rev and size is read again before the next change", async (t) => {
  for (const how of ["in place (an editor)", "replaced by another file (another program)"]) {
    await t.step(how, async () => {
      await withDir(async (dir) => {
        const path = `${dir}/store.json`;
        const store = await JsonFileStore.open(path);
        try {
          await add(store, "Alpha");
          const text = await Deno.readTextFile(path);
          await sleep(20); // past the file system's time granularity
          const edited = text.replace('"name":"Alpha"', '"name":"Omega"');
          assert.equal(edited.length, text.length, "same size");
          assert.equal(edited.slice(0, 60), text.slice(0, 60), "same rev");
          if (how.startsWith("in place")) {
            await Deno.writeTextFile(path, edited);
          } else {
            await Deno.writeTextFile(`${path}.other`, edited);
            await Deno.rename(`${path}.other`, path);
          }
          await add(store, "Beta");
          assert.deepEqual(await names(store), ["Omega", "Beta"], "the edit is kept, not overwritten");
          const doc = JSON.parse(await Deno.readTextFile(path));
          assert.deepEqual(doc.sessions.s.map((r: { name: string }) => r.name), ["Omega", "Beta"]);
        } finally {
          await store.close();
        }
      });
    });
  }
});

Deno.test("JsonFileStore: a FILE_PATH that is a symbolic link stays one; writes go to its target", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/real`);
    const target = `${dir}/real/plan.json`;
    const link = `${dir}/plan.json`;
    await Deno.symlink("real/plan.json", link);
    const store = await JsonFileStore.open(link);
    try {
      await add(store, "Through the link");
      await add(store, "Again");
      assert.ok((await Deno.lstat(link)).isSymlink, "the link is still a link");
      assert.equal(await Deno.readLink(link), "real/plan.json");
      const doc = JSON.parse(await Deno.readTextFile(target));
      assert.deepEqual(doc.sessions.s.map((r: { name: string }) => r.name), ["Through the link", "Again"]);
      assert.deepEqual(
        [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
        ["plan.json", "real"],
        "no file written beside the link",
      );
    } finally {
      await store.close();
    }
    const reopened = await JsonFileStore.open(link);
    assert.deepEqual(await names(reopened), ["Through the link", "Again"]);
    await reopened.close();
  });
});

const ORCHESTRATOR_FILE = JSON.stringify(
  [{ id: "t1", name: "Imported", description: "from task-orchestrator", status: "todo", tasks: [] }],
  null,
  2,
);

Deno.test("a task-orchestrator file is kept as <file>.orig by the first change, which is logged", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/tasks.json`;
    await Deno.writeTextFile(path, ORCHESTRATOR_FILE);
    const { log, records } = recordingLogger();
    const store = await openStore({ filePath: path, kvPath: undefined }, log, { onDeploy: false });
    try {
      assert.deepEqual(
        await store.space("default").readTree("default", (tree) => tree?.roots.map((r) => r.name)),
        ["Imported"],
      );
      assert.equal(await Deno.readTextFile(path), ORCHESTRATOR_FILE, "reads change nothing");
      await assert.rejects(Deno.stat(`${path}.orig`), Deno.errors.NotFound);

      await store.space("default").updateTree("default", (tree) => createTask(tree, { name: "Added" }));
      assert.equal(await Deno.readTextFile(`${path}.orig`), ORCHESTRATOR_FILE, "the original is kept");
      const doc = JSON.parse(await Deno.readTextFile(path));
      assert.equal(doc.version, 1);
      assert.deepEqual(doc.sessions.default.map((r: { name: string }) => r.name), ["Imported", "Added"]);
      const said = records.find((r) => r.msg === "converted a task-orchestrator file to the store format");
      assert.ok(said, "the conversion is logged");
      assert.equal(said.original, `${path}.orig`);

      // Another bare array later: converted again, but the first original is never overwritten.
      await sleep(20);
      await Deno.writeTextFile(
        path,
        JSON.stringify([{ id: "t2", name: "Second", description: "", status: "todo", tasks: [] }]),
      );
      await store.space("default").updateTree("default", (tree) => createTask(tree, { name: "More" }));
      assert.equal(await Deno.readTextFile(`${path}.orig`), ORCHESTRATOR_FILE);
      const again = JSON.parse(await Deno.readTextFile(path));
      assert.deepEqual(again.sessions.default.map((r: { name: string }) => r.name), ["Second", "More"]);
    } finally {
      await store.close();
    }
  });
});
