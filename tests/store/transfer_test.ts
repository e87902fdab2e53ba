/**
 * Export and import: validation before any change, refusal of a non-empty target, and the CLI
 * (`deno task export` / `deno task import`) moving a plan from a JSON file into Deno KV and back.
 */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { saveWork } from "../../lib/domain/work_lru.ts";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { exportStore, importStore, parseImport } from "../../lib/store/transfer.ts";
import { runToEnd } from "../support/server_process.ts";

function task(id: string, tasks: unknown[] = [], status = "todo") {
  return { id, name: id, description: "", status, tasks };
}

function refusal(code: string, pattern: RegExp) {
  return (error: unknown) =>
    error instanceof DomainError && error.code === code && pattern.test(error.message);
}

Deno.test("parseImport refuses broken JSON, a foreign shape, duplicate ids and oversized trees", () => {
  assert.throws(() => parseImport("{"), refusal("INVALID_INPUT", /not valid JSON/));
  assert.throws(
    () => parseImport(JSON.stringify({ version: 1, sessions: { s: [{ ...task("a"), status: "maybe" }] } })),
    refusal("INVALID_INPUT", /at sessions\.s\.0\.status/),
  );
  assert.throws(
    () => parseImport(JSON.stringify([task("a", [task("b")]), task("b")])),
    refusal("DUPLICATE_ID", /"b"/),
  );
  const wide = task("w", Array.from({ length: 1001 }, (_, i) => task(`c${i}`)));
  assert.throws(
    () => parseImport(JSON.stringify([wide])),
    refusal("LIMIT_EXCEEDED", /task "w" has 1001 subtasks/),
  );
  let deep = task("d13");
  for (let i = 12; i >= 1; i--) deep = task(`d${i}`, [deep]);
  assert.throws(() => parseImport(JSON.stringify([deep])), refusal("LIMIT_EXCEEDED", /nested 13 deep/));
});

Deno.test("parseImport takes a bare array as the default session and repairs parent statuses", () => {
  const { state, repairs, counts } = parseImport(JSON.stringify([task("p", [task("c", [], "done")])]));
  assert.deepEqual([...state.space("default").sessions.keys()], ["default"]);
  assert.equal(state.space("default").sessions.get("default")!.get("p")!.status, "done");
  assert.equal(repairs.length, 1);
  assert.deepEqual(counts, { sessions: 1, tasks: 2, works: 0, progress: 0 });
});

Deno.test("importStore refuses a store that holds data unless told to replace it", async () => {
  const store = new MemoryStore();
  await store.space("default").updateTree("mine", (tree) => createTask(tree, { id: "keep", name: "keep" }));
  const text = JSON.stringify({ version: 1, sessions: { other: [task("x")] } });
  await assert.rejects(importStore(store, text), refusal("INVALID_INPUT", /not empty \(1 sessions/));
  assert.deepEqual(await store.space("default").listSessions(), ["mine"]);
  await importStore(store, text, { replace: true });
  assert.deepEqual(await store.space("default").listSessions(), ["other"]);
});

Deno.test("an invalid import changes nothing in a file or KV store", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-transfer-" });
  try {
    for (const open of [() => JsonFileStore.open(`${dir}/s.json`), () => KvStore.open(`${dir}/s.sqlite`)]) {
      const store = await open();
      await store.space("default").updateTree(
        "s",
        (tree) => createTask(tree, { id: "a", name: "a", tasks: [{ id: "b", name: "b" }] }),
      );
      const before = await exportStore(store);
      const bad = JSON.stringify({ version: 1, sessions: { s: [task("a"), task("a")] } });
      await assert.rejects(importStore(store, bad, { replace: true }), DomainError);
      assert.equal(await exportStore(store), before);
      await store.close();
      const reopened = await open();
      assert.equal(await exportStore(reopened), before);
      await reopened.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function cli(args: string[], env: Record<string, string>) {
  return runToEnd(["run", "-A", "scripts/transfer.ts", ...args], { env });
}

Deno.test("deno task import refuses a document whose names hold lone surrogates, says where, and changes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-transfer-" });
  try {
    const cases: [string, RegExp][] = [
      [
        `{"version":1,"sessions":{"q\\ud800":[${JSON.stringify(task("a"))}]}}`,
        /sessions\.q\\ud800 has a key that holds a lone surrogate \(U\+D800\)/,
      ],
      [
        `{"version":1,"sessions":{"s":[${JSON.stringify(task("\udbff"))}]}}`,
        /sessions\.s\[0\]\.id holds a lone surrogate \(U\+DBFF\)/,
      ],
      [
        `{"version":1,"sessions":{},"progress":{"p\\udc00":{"project":"p\\udc00","content":{},"revision":1,"updated_at":"t"}}}`,
        /progress\.p\\udc00 has a key/,
      ],
    ];
    for (const [i, [text, message]] of cases.entries()) {
      assert.throws(() => parseImport(text), refusal("INVALID_INPUT", message));
      for (
        const [name, env] of [["file", { FILE_PATH: `${dir}/s${i}.json` }], ["kv", {
          KV_PATH: `${dir}/s${i}.sqlite`,
        }]] as const
      ) {
        const store = name === "file"
          ? await JsonFileStore.open(env.FILE_PATH!)
          : await KvStore.open(env.KV_PATH!);
        await store.space("default").updateTree("keep", (tree) => createTask(tree, { id: "k", name: "k" }));
        const before = await exportStore(store);
        await store.close();
        await Deno.writeTextFile(`${dir}/doc${i}.json`, text);
        const run = await cli(["import", `${dir}/doc${i}.json`, "--replace"], env);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /not well-formed Unicode/);
        assert.match(run.stderr, message);
        const after = name === "file"
          ? await JsonFileStore.open(env.FILE_PATH!)
          : await KvStore.open(env.KV_PATH!);
        assert.equal(await exportStore(after), before, `${name}: nothing changed`);
        await after.close();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the export and import commands move a plan from a JSON file into KV and back", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-transfer-" });
  try {
    const file = await JsonFileStore.open(`${dir}/plan.json`);
    await file.space("default").updateTree(
      "default",
      (tree) =>
        createTask(tree, {
          id: "ship",
          name: "Ship",
          tasks: [{ id: "build", name: "Build" }, { id: "test", name: "Test" }],
        }),
    );
    await file.space("default").updateTree("default", (tree) => startTask(tree, "ship"));
    const roots = await file.space("default").readTree("default", (tree) => structuredClone(tree!.roots));
    await file.space("default").updateWorks((entries) =>
      saveWork(entries, {
        work_summarize: "built it",
        work_description: "build",
        sessionId: "default",
        snapshot: roots,
        now: "2025-01-01T00:00:00Z",
        randomId: () => "12345678",
        capacity: 10,
      })
    );
    await file.space("default").updateProgress(
      "ship",
      (c) => upsertProgress(c, { project: "ship", content: { goal: "ship" }, now: "t" }),
    );
    await file.close();

    const exported = await cli(["export"], { FILE_PATH: `${dir}/plan.json` });
    assert.equal(exported.code, 0, exported.stderr);
    await Deno.writeTextFile(`${dir}/backup.json`, exported.stdout);

    const kvPath = `${dir}/plan.sqlite`;
    const imported = await cli(["import", `${dir}/backup.json`], { KV_PATH: kvPath });
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(
      imported.stderr,
      /Imported 1 sessions \(3 tasks\), 1 work entries and 1 progress documents into the kv store/,
    );
    const again = await cli(["import", `${dir}/backup.json`], { KV_PATH: kvPath });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /refused: The target store is not empty/);

    const kv = await KvStore.open(kvPath);
    assert.equal(
      await kv.space("default").readTree("default", (tree) => tree!.get("build")!.status),
      "in_progress",
    );
    await kv.close();

    const back = await cli(["export", "--out", `${dir}/back.json`], { KV_PATH: kvPath });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/back.json`)), JSON.parse(exported.stdout));

    await Deno.writeTextFile(`${dir}/broken.json`, exported.stdout.slice(0, -20));
    const broken = await cli(["import", `${dir}/broken.json`, "--replace"], { KV_PATH: kvPath });
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /not valid JSON/);
    const unchanged = await cli(["export"], { KV_PATH: kvPath });
    assert.deepEqual(JSON.parse(unchanged.stdout), JSON.parse(exported.stdout));

    const none = await cli(["export"], {});
    assert.equal(none.code, 1);
    assert.match(none.stderr, /Set FILE_PATH or KV_PATH/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("export and import --namespace move one namespace into another and leave the rest alone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-transfer-ns-" });
  try {
    const file = await JsonFileStore.open(`${dir}/plan.json`);
    for (const [namespace, name] of [["default", "Home"], ["team-a", "Alpha"], ["team-b", "Bravo"]]) {
      const space = file.space(namespace!);
      await space.updateTree("plan", (tree) => createTask(tree, { id: "ship", name: name! }));
      await space.updateProgress(
        "app",
        (c) => upsertProgress(c, { project: "app", content: { goal: name! }, now: "t" }),
      );
    }
    await file.close();
    const FILE_PATH = `${dir}/plan.json`;

    const one = await cli(["export", "--namespace", "team-a"], { FILE_PATH });
    assert.equal(one.code, 0, one.stderr);
    const doc = JSON.parse(one.stdout);
    assert.equal("namespaces" in doc, false, "one namespace exports as a plain document");
    assert.equal(doc.sessions.plan[0].name, "Alpha");
    await Deno.writeTextFile(`${dir}/alpha.json`, one.stdout);

    const KV_PATH = `${dir}/plan.sqlite`;
    const all = await cli(["export", "--out", `${dir}/all.json`], { FILE_PATH });
    assert.equal(all.code, 0, all.stderr);
    const whole = await cli(["import", `${dir}/all.json`], { KV_PATH });
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(
      whole.stderr,
      /Imported 3 sessions \(3 tasks\), 0 work entries and 3 progress documents in 3 namespaces/,
    );

    const into = await cli(["import", `${dir}/alpha.json`, "--namespace", "team-c"], { KV_PATH });
    assert.equal(into.code, 0, into.stderr);
    assert.match(into.stderr, /into the namespace "team-c" of kv store/);
    const again = await cli(["import", `${dir}/alpha.json`, "--namespace", "team-b"], { KV_PATH });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /refused: The target namespace "team-b" is not empty/);
    const several = await cli(["import", `${dir}/all.json`, "--namespace", "team-d", "--replace"], {
      KV_PATH,
    });
    assert.equal(several.code, 1);
    assert.match(
      several.stderr,
      /refused: The document holds several namespaces \(default, team-a, team-b\)/,
    );
    const badName = await cli(["export", "--namespace", "a/b"], { KV_PATH });
    assert.equal(badName.code, 1);
    assert.match(badName.stderr, /a namespace name is 1-64 characters/);

    const after = JSON.parse((await cli(["export"], { KV_PATH })).stdout);
    const before = JSON.parse(await Deno.readTextFile(`${dir}/all.json`));
    assert.deepEqual(after.sessions, before.sessions, "default unchanged");
    assert.deepEqual(Object.keys(after.namespaces).sort(), ["team-a", "team-b", "team-c"]);
    assert.deepEqual(after.namespaces["team-a"], before.namespaces["team-a"]);
    assert.deepEqual(after.namespaces["team-b"], before.namespaces["team-b"]);
    assert.deepEqual({ version: 1, ...after.namespaces["team-c"] }, doc);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
