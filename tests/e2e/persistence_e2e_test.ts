/**
 * Persistence end to end: real server processes over stdio with `FILE_PATH`, restarted; a bare-array
 * file (docs/requirements.md C10); corrupt files refused untouched; memory mode touching no file.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { StoreDocumentSchema } from "../../lib/store/file_format.ts";
import { fails, ok, spawnStdio } from "../support/harness.ts";
import { runMain } from "../support/server_process.ts";

type TaskNode = Task;

async function tempDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix: "checklist-e2e-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

function statuses(task: TaskNode, out: Record<string, string> = {}): Record<string, string> {
  out[task.id] = task.status;
  for (const child of task.tasks) statuses(child, out);
  return out;
}

Deno.test("a FILE_PATH server restarted finds its tree with statuses and resolutions", async () => {
  await using dir = await tempDir();
  const env = { FILE_PATH: `${dir.path}/store.json` };
  let rootId: string;
  {
    await using first = await spawnStdio({ env });
    const { task } = await ok<{ task: TaskNode }>(first.client, "createTask", {
      sessionId: "work",
      name: "Release",
      tasks: [{ id: "t1", name: "Test" }, { id: "t2", name: "Tag" }, { id: "t3", name: "Publish" }],
    });
    rootId = task.id;
    await ok(first.client, "startTask", { sessionId: "work", id: rootId });
    await ok(first.client, "completeTask", { sessionId: "work", id: "t1", resolution: "all green" });
    await ok(first.client, "startTask", { sessionId: "work", id: "t2" });
    await ok(first.client, "createTask", { name: "Elsewhere" });
  }

  const doc = StoreDocumentSchema.parse(JSON.parse(await Deno.readTextFile(env.FILE_PATH)));
  assert.deepEqual(Object.keys(doc.sessions).sort(), ["default", "work"]);

  await using second = await spawnStdio({ env });
  const { task } = await ok<{ task: TaskNode }>(second.client, "getTask", { sessionId: "work", id: rootId });
  assert.deepEqual(statuses(task), { [rootId]: "in_progress", t1: "done", t2: "in_progress", t3: "todo" });
  assert.equal(task.tasks[0]!.resolution, "all green");
  const defaults = await ok<{ tasks: { name: string }[] }>(second.client, "listTasks", {});
  assert.deepEqual(defaults.tasks.map((t) => t.name), ["Elsewhere"]);

  const done = await ok<{ next_task_id?: string }>(second.client, "completeTask", {
    sessionId: "work",
    id: "t2",
    resolution: "v1.0.0",
  });
  assert.equal(done.next_task_id, "t3", "the restarted server goes on with the same plan");
});

Deno.test("a file holding a bare array of root tasks loads as session default", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/seed.json`;
  const seed = [
    {
      id: "build",
      name: "Build",
      description: "from the seed",
      status: "in_progress",
      tasks: [
        { id: "b1", name: "Compile", description: "", status: "done", resolution: "ok", tasks: [] },
        { id: "b2", name: "Link", description: "", status: "in_progress", tasks: [] },
      ],
    },
    { id: "ship", name: "Ship", description: "", status: "todo", tasks: [] },
  ];
  await Deno.writeTextFile(path, JSON.stringify(seed, null, 2));

  await using conn = await spawnStdio({ env: { FILE_PATH: path } });
  const { task } = await ok<{ task: TaskNode }>(conn.client, "getTask", { id: "build" });
  assert.equal(task.description, "from the seed");
  assert.deepEqual(statuses(task), { build: "in_progress", b1: "done", b2: "in_progress" });
  const { tree } = await ok<{ tree: string }>(conn.client, "get_all_tasks", { sessionId: "default" });
  assert.equal(
    tree,
    ["├── ◐ build: Build", "│   ├── ✓ b1: Compile", "│   └── ◐ b2: Link", "└── ○ ship: Ship"].join("\n"),
  );
  await fails(conn.client, "getTask", { sessionId: "other", id: "build" }, "NOT_FOUND");
});

Deno.test("a corrupt FILE_PATH stops the server with a clear message and stays byte-identical", async (t) => {
  await using dir = await tempDir();
  const cases: [string, string, RegExp][] = [
    ["invalid JSON", '{"version": 1, "sessions": {', /not valid JSON/],
    [
      "JSON of the wrong shape",
      '{"sessions": 5, "hello": "world"}',
      /does not hold a task store: at (version|sessions)/,
    ],
    [
      "a bare array whose task misses its status",
      '[{"id": "a", "name": "A", "description": "", "tasks": []}]',
      /does not hold a task store: at 0\.status/,
    ],
  ];
  for (const [index, [label, content, problem]] of cases.entries()) {
    await t.step(label, async () => {
      const path = `${dir.path}/store-${index}.json`;
      await Deno.writeTextFile(path, content);
      const before = await Deno.readFile(path);
      const { code, stderr } = await runMain({ env: { FILE_PATH: path } });
      assert.notEqual(code, 0, "the server must not start on a corrupt file");
      assert.ok(stderr.includes(path), `stderr names the file: ${stderr}`);
      assert.match(stderr, problem);
      assert.deepEqual(await Deno.readFile(path), before, "the file is left untouched");
      const leftovers = [...Deno.readDirSync(dir.path)].map((e) => e.name).filter((n) => n.endsWith(".tmp"));
      assert.deepEqual(leftovers, []);
    });
  }
});

Deno.test("memory mode creates no file in the working directory", async () => {
  await using dir = await tempDir();
  {
    await using conn = await spawnStdio({ cwd: dir.path });
    await ok(conn.client, "createTask", { name: "Only in memory", tasks: [{ id: "m1", name: "Step" }] });
    await ok(conn.client, "startTask", { id: "m1" });
    await ok(conn.client, "completeTask", { id: "m1", resolution: "done" });
  }
  assert.deepEqual([...Deno.readDirSync(dir.path)], []);

  await using again = await spawnStdio({ cwd: dir.path });
  await fails(again.client, "getTask", { id: "m1" }, "NOT_FOUND");
});

Deno.test("a stdio server exits with 0 at the end of its input, in memory and with FILE_PATH", async () => {
  await using dir = await tempDir();
  const memory = await runMain({ cwd: dir.path });
  assert.equal(memory.code, 0, memory.stderr);
  const file = await runMain({ env: { FILE_PATH: `${dir.path}/store.json` } });
  assert.equal(file.code, 0, file.stderr);
  assert.deepEqual([...Deno.readDirSync(dir.path)], [], "starting and stopping writes nothing");
});
