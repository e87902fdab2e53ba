/**
 * The Deno KV store beyond the shared contract: its key layout on disk, the change log that keeps
 * other processes' caches current, generations, garbage sweeping and refusals.
 */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { completeTask, createTask, deleteTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import type { TaskTree } from "../../lib/domain/task_tree.ts";
import { saveWork } from "../../lib/domain/work_lru.ts";
import { createLogger } from "../../lib/log.ts";
import { KV_LIMITS } from "../../lib/store/kv/commit.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { openStore } from "../../lib/store/open_store.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import type { Store } from "../../lib/store/store.ts";
import { canonical } from "./fixtures/canonical.ts";

async function withKv(body: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-kv-" });
  try {
    await body(`${dir}/store.sqlite`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Every key and value in the KV, read with a separate raw connection. */
async function rawEntries(path: string): Promise<Deno.KvEntry<unknown>[]> {
  const kv = await Deno.openKv(path);
  try {
    return await Array.fromAsync(kv.list({ prefix: [] }));
  } finally {
    kv.close();
  }
}

async function sessionGen(path: string, sessionId: string): Promise<string> {
  const meta = (await rawEntries(path)).find((e) => e.key[0] === "m" && e.key[1] === sessionId)!;
  return JSON.parse(new TextDecoder().decode(meta.value as Uint8Array)).gen;
}

function leaves(id: string, n: number, description = "") {
  return {
    id,
    name: id,
    tasks: Array.from({ length: n }, (_, i) => ({ id: `${id}-${i}`, name: `leaf ${i}`, description })),
  };
}

function roots(store: Store, sessionId = "s"): Promise<string> {
  return store.space("default").readTree(sessionId, (tree) => canonical(tree?.roots ?? null));
}

Deno.test("kv store: a tree is one key per task and no value passes 64 KiB", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    await store.space("default").updateTree("s", (tree) =>
      createTask(tree, {
        id: "big",
        name: "big",
        description: "€".repeat(4000),
        completion_criteria: Array.from({ length: 20 }, () => "😀".repeat(250)),
        constraints: Array.from({ length: 20 }, () => "ü".repeat(500)),
        tasks: Array.from(
          { length: 499 },
          (_, i) => ({ id: `${"k".repeat(60)}${String(i).padStart(4, "0")}`, name: "n" }),
        ),
      }));
    await store.close();
    const entries = await rawEntries(path);
    const gen = await sessionGen(path, "s");
    const taskKeys = entries.filter((e) => e.key[0] === "t" && e.key[1] === gen);
    const ids = new Set(taskKeys.map((e) => e.key[2]));
    assert.equal(ids.size, 501); // 500 tasks and the root record
    assert.ok(
      taskKeys.some((e) => e.key[2] === "big" && e.key[3] === 1),
      "the big record has a second chunk",
    );
    for (const e of entries) {
      const size = e.value instanceof Uint8Array ? e.value.length : 8;
      assert.ok(size <= KV_LIMITS.value, `${JSON.stringify(e.key)} holds ${size} bytes`);
    }
  });
});

Deno.test("kv store: a record that shrinks loses its extra chunks", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    await store.space("default").updateTree(
      "s",
      (tree) => createTask(tree, { id: "a", name: "a", description: "€".repeat(4000) }),
    );
    await store.space("default").updateTree(
      "s",
      (tree) =>
        updateTask(tree, { id: "a", completion_criteria: Array.from({ length: 20 }, () => "€".repeat(500)) }),
    );
    await store.space("default").updateTree(
      "s",
      (tree) => updateTask(tree, { id: "a", description: "short", completion_criteria: [] }),
    );
    await store.close();
    const keys = (await rawEntries(path)).filter((e) => e.key[0] === "t" && e.key[2] === "a").map((e) =>
      e.key
    );
    assert.deepEqual(keys.map((k) => k.length), [3]);
  });
});

Deno.test("kv store: a delete bigger than one commit leaves no keys behind once swept", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    await store.space("default").updateTree("s", (tree) => createTask(tree, { id: "keep", name: "keep" }));
    await store.space("default").updateTree("s", (tree) => createTask(tree, { id: "big", name: "big" }));
    for (let i = 0; i < 5; i++) {
      await store.space("default").updateTree(
        "s",
        (tree) => createTask(tree, { ...leaves(`g${i}`, 499), parentId: "big" }),
      );
    }
    const gen = await sessionGen(path, "s");
    await store.space("default").updateTree("s", (tree) => deleteTask(tree, "big"));
    assert.equal(store.stats.flips, 0);
    await store.close();
    const left = (await rawEntries(path)).filter((e) => e.key[0] === "t");
    assert.deepEqual(left.map((e) => e.key).sort(), [["t", gen, ""], ["t", gen, "keep"]]);
  });
});

Deno.test("kv store: a change too big for one commit moves the session to a new generation", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    const other = await KvStore.open(path);
    for (let i = 0; i < 3; i++) {
      await store.space("default").updateTree("s", (tree) => createTask(tree, leaves(`p${i}`, 400)));
    }
    await other.space("default").readTree("s", () => {});
    const before = await sessionGen(path, "s");
    await store.space("default").updateTree("s", (tree) => {
      for (const { task } of tree.walk()) tree.setField(task, "description", "d".repeat(700));
    });
    assert.equal(store.stats.flips, 1);
    const after = await sessionGen(path, "s");
    assert.notEqual(after, before);
    assert.equal(await roots(other), await roots(store));
    await store.close();
    await other.close();
    const entries = await rawEntries(path);
    assert.equal(
      entries.filter((e) => e.key[0] === "t" && e.key[1] === before).length,
      0,
      "old generation swept",
    );
    assert.equal(entries.filter((e) => e.key[0] === "gc").length, 0, "no markers left");
    assert.equal(entries.filter((e) => e.key[0] === "t" && e.key[1] === after).length, 1204);
  });
});

Deno.test("kv store: another store's cache follows random changes through the change log", async () => {
  await withKv(async (path) => {
    const a = await KvStore.open(path);
    const b = await KvStore.open(path);
    const model = new MemoryStore();
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(random() * items.length)];
    let next = 0;
    const ops: ((tree: TaskTree) => unknown)[] = [
      (tree) => {
        const parent = pick([undefined, ...[...tree.walk()].map((w) => w.task)]);
        return createTask(tree, {
          id: `t${next++}`,
          name: "n",
          parentId: parent?.id,
          insertIndex: parent ? Math.floor(random() * (parent.tasks.length + 1)) : undefined,
          tasks: random() < 0.3 ? [{ id: `t${next++}`, name: "child" }] : undefined,
        });
      },
      (tree) => deleteTask(tree, pick([...tree.walk()])?.task.id ?? "none"),
      (tree) =>
        updateTask(tree, { id: pick([...tree.walk()])?.task.id ?? "none", description: `d${next++}` }),
      (tree) => startTask(tree, pick(tree.roots)?.id ?? "none"),
      (tree) => completeTask(tree, tree.activeLeaves()[0]?.id ?? "none", "done"),
      (tree) => {
        // A move or reorder, as update_tasks makes them: the task keeps its id and subtree.
        const task = pick(
          [...tree.walk()].map((w) => w.task).filter((t) =>
            t.status === "todo" && (tree.parentOf(t)?.tasks.length ?? 2) > 1
          ),
        );
        if (!task) return;
        const from = tree.parentOf(task);
        tree.remove(task);
        const to = pick([
          undefined,
          ...[...tree.walk()].map((w) => w.task).filter((t) => t.tasks.length > 0),
        ]);
        tree.insert(to, Math.floor(random() * ((to?.tasks ?? tree.roots).length + 1)), task);
        tree.settleFrom(from);
        tree.settleFrom(to);
      },
    ];
    const apply = async (store: Store, op: (tree: TaskTree) => unknown) => {
      try {
        await store.space("default").updateTree("s", op);
        return true;
      } catch (error) {
        if (error instanceof DomainError) return false;
        throw error;
      }
    };
    for (let step = 0; step < 300; step++) {
      const op = step < 20 ? ops[0]! : pick(ops)!;
      const store = random() < 0.5 ? a : b;
      // Same random draws for the model: replay the op with the same seed.
      const saved = seed;
      const savedNext = next;
      const done = await apply(store, op);
      seed = saved;
      next = savedNext;
      assert.equal(await apply(model, op), done, `step ${step}: same outcome`);
      const expected = await roots(model);
      assert.equal(await roots(a), expected, `step ${step}: a`);
      assert.equal(await roots(b), expected, `step ${step}: b`);
      await a.space("default").readTree("s", (tree) => assert.deepEqual(invariantViolations(tree!), []));
    }
    assert.ok(a.stats.catchUps > 50 && b.stats.catchUps > 50, JSON.stringify([a.stats, b.stats]));
    assert.equal(
      a.stats.fullLoads + b.stats.fullLoads,
      1,
      "only the store that did not create the session read it whole",
    );
    const c = await KvStore.open(path);
    assert.equal(await roots(c), await roots(model));
    for (const s of [a, b, c]) await s.close();
  });
});

Deno.test("kv store: replaced and evicted snapshots are swept", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    const snapshot: Task[] = [{
      id: "x",
      name: "x",
      description: "é".repeat(3000),
      status: "todo",
      tasks: [],
    }];
    const big = Array.from({ length: 300 }, (_, i) => ({ ...snapshot[0]!, id: `x${i}` }));
    const save = (n: number, tasks: Task[]) =>
      store.space("default").updateWorks((entries) =>
        saveWork(entries, {
          work_summarize: "s",
          work_description: "d",
          sessionId: `s${n % 3}`,
          snapshot: tasks,
          now: "t",
          randomId: () => String(10_000_000 + n),
          capacity: 2,
        })
      );
    for (let n = 0; n < 8; n++) await save(n, n % 2 ? big : snapshot);
    await store.close();
    const entries = await rawEntries(path);
    const blobs = new Set(entries.filter((e) => e.key[0] === "b").map((e) => e.key[1]));
    const works = entries.filter((e) => e.key[0] === "w" && e.key.length === 2);
    assert.equal(works.length, 2);
    assert.equal(blobs.size, 2, "only the live entries' snapshots remain");
    assert.equal(entries.filter((e) => e.key[0] === "gc").length, 0);
  });
});

Deno.test("kv store: data a dead writer staged long ago is swept at open, recent staging is kept", async () => {
  await withKv(async (path) => {
    const kv = await Deno.openKv(path);
    const marker = (at: number) => new TextEncoder().encode(JSON.stringify({ at, staged: true }));
    await kv.set(["gc", "g", "old"], marker(Date.now() - 2 * 60 * 60 * 1000));
    await kv.set(["t", "old", "x"], new Uint8Array(8));
    await kv.set(["gc", "g", "new"], marker(Date.now()));
    await kv.set(["t", "new", "x"], new Uint8Array(8));
    kv.close();
    const store = await KvStore.open(path);
    await store.space("default").listSessions();
    await store.close();
    const keys = (await rawEntries(path)).map((e) => JSON.stringify(e.key));
    assert.deepEqual(keys.sort(), ['["gc","g","new"]', '["t","new","x"]']);
  });
});

Deno.test("kv store: an import too big for one commit is refused and changes nothing", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    await store.space("default").updateTree("s", (tree) => createTask(tree, leaves("a", 3)));
    const before = await store.exportDocument();
    const progress: Record<string, unknown> = {};
    for (let i = 0; i < 1200; i++) {
      progress[`p${i}`] = upsertProgress(undefined, { project: `p${i}`, content: { i }, now: "t" });
    }
    const { state } = stateFromFile({ version: 1, sessions: { t: [] }, works: [], progress } as never);
    await assert.rejects(
      store.importState(state),
      (e) => e instanceof DomainError && e.code === "LIMIT_EXCEEDED",
    );
    assert.deepEqual(await store.exportDocument(), before);
    await store.close();
    const keys = (await rawEntries(path)).map((e) => e.key);
    assert.ok(!keys.some((k) => k[0] === "gc" || k[0] === "p"), "nothing staged or written");
  });
});

Deno.test("kv store: a damaged record is reported with its session, not skipped", async () => {
  await withKv(async (path) => {
    const store = await KvStore.open(path);
    await store.space("default").updateTree("s", (tree) => createTask(tree, leaves("a", 2)));
    await store.close();
    const gen = await sessionGen(path, "s");
    const kv = await Deno.openKv(path);
    await kv.delete(["t", gen, "a-1"]);
    kv.close();
    const reopened = await KvStore.open(path);
    await assert.rejects(
      reopened.space("default").readTree("s", () => {}),
      /session "s" is inconsistent: task "a" lists a missing task "a-1"/,
    );
    await reopened.close();
  });
});

Deno.test("openStore uses Deno KV for KV_PATH, and the default KV on Deno Deploy", async () => {
  const log = createLogger({ write: () => {} });
  const atPath = await openStore({ kvPath: ":memory:" }, log, { onDeploy: false });
  assert.equal(atPath.kind, "kv");
  await atPath.close();
  const onDeploy = await openStore({}, log, { onDeploy: true });
  assert.equal(onDeploy.kind, "kv");
  await onDeploy.close();
  const local = await openStore({}, log, { onDeploy: false });
  assert.equal(local.kind, "memory");
});
