/**
 * Namespaces in every store (docs/namespaces.md): two namespaces never see each other's sessions,
 * histories, work entries or progress documents, whatever ids they use; each has its own work-info
 * LRU; `listNamespaces` names those that hold anything; export and import cover every namespace or
 * one of them.
 */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { byRecency, saveWork, type WorkEntry } from "../../lib/domain/work_lru.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { stateFromFile } from "../../lib/store/file_format.ts";
import { StoreState } from "../../lib/store/state.ts";
import type { Space } from "../../lib/store/store.ts";
import { parseImport } from "../../lib/store/transfer.ts";
import { storeContract } from "../support/store_contract.ts";

function save(entries: Map<string, WorkEntry>, id: string, summary: string) {
  return saveWork(entries, {
    work_summarize: summary,
    work_description: summary,
    now: `2025-01-01T00:00:${id.slice(-2)}Z`,
    randomId: () => id,
    capacity: 3,
  });
}

/** Writes the same ids into `space`, with contents that name the space. */
async function fill(space: Space, label: string): Promise<void> {
  await space.updateTree("s", (t) => createTask(t, { id: "a", name: `A of ${label}` }), {
    tool: "createTask",
  });
  await space.updateWorks((entries) => save(entries, "10000001", `work of ${label}`));
  await space.updateProgress(
    "p",
    (c) => upsertProgress(c, { project: "p", content: { goal: label }, now: "t" }),
  );
}

/** What `space` holds, by the ids both spaces use. */
async function seen(space: Space) {
  return {
    sessions: await space.listSessions(),
    name: await space.readTree("s", (t) => t?.get("a")?.name),
    revision: (await space.readHistory("s", 10)).revision,
    works: await space.readWorks((entries) => [...entries.values()].map((e) => e.work_summarize)),
    projects: await space.listProjects(),
    goal: (await space.readProgress("p"))?.content["goal"],
  };
}

storeContract(
  "the same ids in two namespaces never see each other, also through another store and on reopen",
  async ({ kind, open }) => {
    const store = await open();
    const a = store.space("team-a");
    const b = store.space("team-b");
    assert.equal(store.space("team-a"), a, "one space object per namespace");
    await fill(a, "a");
    assert.deepEqual(await seen(b), {
      sessions: [],
      name: undefined,
      revision: 0,
      works: [],
      projects: [],
      goal: undefined,
    });
    assert.deepEqual(await seen(store.space("default")), await seen(b));
    await fill(b, "b");
    await b.updateTree("s", (t) => startTask(t, "a"), { tool: "startTask" });
    const expectA = {
      sessions: ["s"],
      name: "A of a",
      revision: 1,
      works: ["work of a"],
      projects: ["p"],
      goal: "a",
    };
    const expectB = {
      sessions: ["s"],
      name: "A of b",
      revision: 2,
      works: ["work of b"],
      projects: ["p"],
      goal: "b",
    };
    assert.deepEqual(await seen(a), expectA);
    assert.deepEqual(await seen(b), expectB);
    if (kind.shared) {
      const other = await open();
      assert.deepEqual(await seen(other.space("team-a")), expectA);
      assert.deepEqual(await seen(other.space("team-b")), expectB);
      assert.deepEqual((await seen(other.space("default"))).sessions, []);
    }
    if (kind.durable) {
      await store.close();
      const reopened = await open();
      assert.deepEqual(await seen(reopened.space("team-a")), expectA);
      assert.deepEqual(await seen(reopened.space("team-b")), expectB);
    }
  },
);

storeContract("each namespace has its own work-info LRU and capacity", async ({ open }) => {
  const store = await open();
  const a = store.space("a");
  const b = store.space("b");
  for (const n of [1, 2, 3]) await a.updateWorks((entries) => save(entries, `1000000${n}`, `a${n}`));
  for (const n of [4, 5, 6]) {
    const { evicted } = await b.updateWorks((entries) => save(entries, `1000000${n}`, `b${n}`));
    assert.deepEqual(evicted, [], "saving in b evicts nothing from a");
  }
  const { evicted } = await a.updateWorks((entries) => save(entries, "10000007", "a7"));
  assert.deepEqual(evicted.map((e) => e.workId), ["10000001"]);
  const order = (space: Space) =>
    space.readWorks((entries) => byRecency(entries.values()).map((e) => e.workId));
  assert.deepEqual(await order(a), ["10000007", "10000003", "10000002"]);
  assert.deepEqual(await order(b), ["10000006", "10000005", "10000004"]);
});

storeContract(
  "listNamespaces names the namespaces that hold anything, default first",
  async ({ open }) => {
    const store = await open();
    assert.deepEqual(await store.listNamespaces(), []);
    await store.space("zeta").updateProgress(
      "p",
      (c) => upsertProgress(c, { project: "p", content: { goal: "g" }, now: "t" }),
    );
    await store.space("alpha").updateWorks((entries) => save(entries, "10000001", "w"));
    await store.space("unused").listSessions();
    assert.deepEqual(await store.listNamespaces(), ["alpha", "zeta"]);
    await store.space("default").updateTree("s", (t) => createTask(t, { id: "a", name: "A" }));
    assert.deepEqual(await store.listNamespaces(), ["default", "alpha", "zeta"]);
    // A namespace emptied by an import is no longer listed.
    await store.importState(new StoreState(), { namespace: "zeta" });
    assert.deepEqual(await store.listNamespaces(), ["default", "alpha"]);
  },
);

storeContract("an invalid namespace name is refused", async ({ open }) => {
  const store = await open();
  for (const name of ["", "a/b", "a b", "x".repeat(65), "ü", "__proto__?"]) {
    assert.throws(() => store.space(name), DomainError, JSON.stringify(name));
  }
  assert.equal(store.space("x".repeat(64)).namespace, "x".repeat(64));
  await assert.rejects(store.exportDocument({ namespace: "a/b" }), DomainError);
  await assert.rejects(store.importState(new StoreState(), { namespace: "a b" }), DomainError);
});

storeContract(
  "export covers every namespace; an import of everything reproduces them elsewhere",
  async ({ kind, open }) => {
    const store = await open();
    await fill(store.space("default"), "d");
    await fill(store.space("team-a"), "a");
    await fill(store.space("team-b"), "b");
    const doc = await store.exportDocument();
    assert.deepEqual(Object.keys(doc.sessions), ["s"]);
    assert.deepEqual(Object.keys(doc.namespaces ?? {}).sort(), ["team-a", "team-b"]);
    assert.equal(doc.namespaces!["team-a"]!.sessions["s"]![0]!.name, "A of a");
    assert.equal("history" in doc.namespaces!["team-a"]!, false);

    const elsewhere = await kind.place();
    try {
      const target = await elsewhere.open();
      await fill(target.space("stale"), "gone");
      const parsed = parseImport(JSON.stringify(doc));
      assert.deepEqual(parsed.namespaces, ["default", "team-a", "team-b"]);
      assert.deepEqual(parsed.counts, { sessions: 3, tasks: 3, works: 3, progress: 3 });
      await target.importState(parsed.state);
      assert.deepEqual(await target.exportDocument(), JSON.parse(JSON.stringify(doc)));
      assert.deepEqual(await target.listNamespaces(), ["default", "team-a", "team-b"]);
      assert.deepEqual((await seen(target.space("team-b"))).goal, "b");
      await target.close();
      if (kind.durable) {
        const reopened = await elsewhere.open();
        assert.deepEqual(await reopened.exportDocument(), JSON.parse(JSON.stringify(doc)));
        await reopened.close();
      }
    } finally {
      await elsewhere.cleanup();
    }
  },
);

storeContract(
  "a namespace exported alone imports into another namespace and replaces only that one",
  async ({ open }) => {
    const store = await open();
    await fill(store.space("default"), "d");
    await fill(store.space("team-a"), "a");
    await fill(store.space("team-c"), "old c");
    const one = await store.exportDocument({ namespace: "team-a" });
    assert.equal("namespaces" in one, false);
    assert.equal(one.sessions["s"]![0]!.name, "A of a");
    const { state } = stateFromFile(JSON.parse(JSON.stringify(one)));
    await store.importState(state, { namespace: "team-c" });
    assert.equal((await seen(store.space("team-c"))).name, "A of a");
    assert.equal((await seen(store.space("team-c"))).revision, 0, "an import starts history again");
    assert.deepEqual(await seen(store.space("default")), {
      sessions: ["s"],
      name: "A of d",
      revision: 1,
      works: ["work of d"],
      projects: ["p"],
      goal: "d",
    });
    assert.equal((await seen(store.space("team-a"))).revision, 1);
    assert.deepEqual(await store.exportDocument({ namespace: "team-c" }), one);
    assert.deepEqual(await store.listNamespaces(), ["default", "team-a", "team-c"]);
  },
);

storeContract("watch reports a change in any namespace", async ({ open }) => {
  const store = await open();
  let changes = 0;
  const stop = store.watch(() => changes++);
  try {
    await new Promise((r) => setTimeout(r, 50));
    await store.space("team-a").updateTree("s", (t) => createTask(t, { id: "a", name: "A" }));
    const until = Date.now() + 3000;
    while (changes === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.ok(changes > 0, "a change in namespace team-a was reported");
  } finally {
    stop();
  }
});

Deno.test('kv store: foreign keys under ["n"] that name no namespace are skipped when listing namespaces', async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-ns-foreign-" });
  try {
    const path = `${dir}/store.kv`;
    const kv = await Deno.openKv(path);
    for (
      const key of [["n", 5, "x"], ["n", new Uint8Array([1]), "x"], ["n", "a/b", "m", "s"], ["n"], ["n", "c"]]
    ) {
      await kv.set(key, 1);
    }
    kv.close();
    const store = await KvStore.open(path);
    try {
      await store.space("team").updateTree("s", (t) => createTask(t, { id: "a", name: "A" }));
      assert.deepEqual(await store.listNamespaces(), ["team"]);
      assert.deepEqual(Object.keys((await store.exportDocument()).namespaces ?? {}), ["team"]);
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
