/**
 * Names an older version stored with lone surrogates (issue 24; docs/troubleshooting.md "Names from older versions"):
 * written through the store API directly, as the old tool edge let them through, they still load
 * after a restart, list, export (and the export imports), and the dashboard shows them; every name
 * is read well-formed, names that meet are told apart, and the log says what became of each.
 */
import assert from "node:assert/strict";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import { createTask } from "../../lib/domain/task_ops.ts";
import { saveWork } from "../../lib/domain/work_lru.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { openStore } from "../../lib/store/open_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { exportStore, importStore } from "../../lib/store/transfer.ts";
import { recordingLogger } from "../support/logs.ts";
import { spawnServer } from "../support/server_process.ts";

/**
 * Session ids of the fixture. In a file, three names the repair makes equal; in Deno KV, whose keys
 * made them one session already when they were written (a second write then failed), two that stay apart.
 */
const SESSIONS = { file: ["q\ud800", "q\udbff", "q\ufffd"], kv: ["q\ud800", "r\udbff"] };

/** Writes what an older version accepted: lone surrogates in session ids, task ids, projects and work entries. */
async function writeOldNames(store: Store, kind: "file" | "kv"): Promise<void> {
  for (const namespace of ["default", "team"]) {
    const space = store.space(namespace);
    for (const session of SESSIONS[kind]) {
      await space.updateTree(session, (tree) =>
        createTask(tree, {
          id: "\ud801",
          name: `root of ${session}`,
          // In Deno KV the first two ids below were written to one key: one record is left of them.
          tasks: kind === "file"
            ? [{ id: "\ud802", name: "lone \udc00 child" }, { id: "\ufffd", name: "legit" }]
            : [{ id: "\ud802", name: "lone \udc00 child" }, { id: "ok", name: "legit" }],
        }));
    }
    await space.updateProgress(
      "p\ud800",
      (c) => upsertProgress(c, { project: "p\ud800", content: { goal: "g\ud800" }, now: "t" }),
    );
    const roots = await space.readTree("q\ud800", (tree) => structuredClone(tree!.roots));
    await space.updateWorks((entries) =>
      saveWork(entries, {
        work_summarize: "s",
        work_description: "d",
        sessionId: "q\ud800",
        snapshot: roots,
        now: "2025-01-01T00:00:00Z",
        randomId: () => "12345678",
        capacity: 10,
      })
    );
  }
}

/** Every task id of a session, in tree order. */
function ids(roots: { id: string; tasks: unknown[] }[]): string[] {
  return roots.flatMap((t) => [t.id, ...ids(t.tasks as typeof roots)]);
}

for (const kind of ["file", "kv"] as const) {
  Deno.test(`${kind} store: names an older version stored with lone surrogates load, list and export after a restart, repaired and logged`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-old-names-" });
    const path = `${dir}/${kind === "file" ? "store.json" : "store.sqlite"}`;
    try {
      const old = kind === "file" ? await JsonFileStore.open(path) : await KvStore.open(path);
      await writeOldNames(old, kind);
      await old.close();

      const { log, records } = recordingLogger();
      const store = await openStore(kind === "file" ? { filePath: path } : { kvPath: path }, log);
      try {
        for (const namespace of ["default", "team"]) {
          const space = store.space(namespace);
          const sessions = (await space.listSessions()).sort();
          const expected = kind === "file" ? ["q\ufffd", "q\ufffd~2", "q\ufffd~3"] : ["q\ufffd", "r\ufffd"];
          assert.deepEqual(sessions, expected);
          for (const session of sessions) {
            const roots = await space.readTree(session, (tree) => structuredClone(tree!.roots));
            const all = ids(roots);
            assert.ok(all.every((id) => id.isWellFormed()), JSON.stringify(all));
            assert.equal(new Set(all).size, all.length, "task ids stay distinct");
            assert.ok(all.includes("\ufffd"));
          }
          assert.deepEqual(await space.listProjects(), ["p\ufffd"]);
          assert.deepEqual((await space.readProgress("p\ufffd"))?.content, { goal: "g\ufffd" });
          const work = await space.readWorks((entries) => entries.get("12345678"));
          assert.equal(work?.sessionId, "q\ufffd");
          assert.ok(ids(work!.work_tasks as never).every((id) => id.isWellFormed()));
        }
        if (kind === "file") {
          const file = await store.space("default").readTree("q\ufffd~3", (tree) => tree!.roots[0]!.name);
          assert.equal(file, "root of q\ufffd", "the legitimate name was kept, the repaired ones suffixed");
        }

        const text = await exportStore(store);
        assert.ok(!/\\u[dD][89a-fA-F]/.test(text), "the export holds no lone surrogate");
        const copy = new MemoryStore();
        await importStore(copy, text);
        assert.deepEqual(
          (await copy.space("team").listSessions()).sort(),
          (await store.space("team").listSessions()).sort(),
        );

        const repairs = records.filter((r) => r.level === "warn" && /repaired/.test(r.msg));
        assert.ok(repairs.length > 0, "the log says what was repaired");
        assert.ok(JSON.stringify(repairs).includes("\\ud801") || kind === "kv", JSON.stringify(repairs));
      } finally {
        await store.close();
      }

      // The dashboard of a real server on the store shows the repaired names.
      await using server = await spawnServer({ env: { [kind === "file" ? "FILE_PATH" : "KV_PATH"]: path } });
      for (const query of ["", `?session=${encodeURIComponent("q\ufffd")}`, "?ns=team"]) {
        const response = await fetch(`${server.url}/${query}`);
        const html = await response.text();
        assert.equal(response.status, 200, `GET /${query}: ${html.slice(0, 200)}`);
        assert.ok(html.includes("q\ufffd"), `GET /${query} names the session`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
