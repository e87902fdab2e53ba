/**
 * Stores written before history existed (docs/history.md): a JSON file without `history`
 * and a Deno KV database whose session metas are `{ gen, seq }` load as they are, every session at
 * revision 0 with no entries, and their next change is revision 1.
 */
import assert from "node:assert/strict";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { encodeJson } from "../../lib/store/kv/codec.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { DEFAULT_LAYOUT, SessionMetaSchema } from "../../lib/store/kv/layout.ts";
import type { Store } from "../../lib/store/store.ts";

/** Writes an old store with `write` in a new temporary directory, opens it, and checks revision 0, then 1. */
async function goesOnFromRevision0(
  name: string,
  write: (path: string) => Promise<void>,
  open: (path: string) => Promise<Store>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/${name}`;
    await write(path);
    const store = await open(path);
    try {
      const space = store.space("default");
      assert.deepEqual(await space.readHistory("s", 10), { revision: 0, oldest: undefined, entries: [] });
      assert.equal(await space.readTree("s", (t) => t?.get("a")?.name), "A");
      const next = await space.updateTree("s", (t) => startTask(t, "a"), { tool: "startTask" });
      assert.equal(next.revision, 1);
      assert.deepEqual((await space.readHistory("s", 10)).entries.map((e) => e.revision), [1]);
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a JSON file written before history loads at revision 0 and goes on from there", async () => {
  await goesOnFromRevision0(
    "tasks.json",
    (path) =>
      Deno.writeTextFile(
        path,
        JSON.stringify({
          version: 1,
          rev: "0123456789abcdef0123456789abcdef",
          sessions: { s: [{ id: "a", name: "A", description: "", status: "todo", tasks: [] }] },
          works: [],
          progress: {},
        }),
      ),
    (path) => JsonFileStore.open(path),
  );
});

Deno.test("a Deno KV database written before history loads at revision 0 and goes on from there", async () => {
  await goesOnFromRevision0("tasks.kv", async (path) => {
    const store = await KvStore.open(path);
    await store.space("default").updateTree("s", (t) => createTask(t, { id: "a", name: "A" }), {
      tool: "createTask",
    });
    await store.close();
    // What the version before history wrote: a meta of { gen, seq } and no history keys.
    const kv = await Deno.openKv(path);
    const key = DEFAULT_LAYOUT.meta("s");
    const meta = SessionMetaSchema.parse(
      JSON.parse(new TextDecoder().decode((await kv.get<Uint8Array>(key)).value!)),
    );
    await kv.set(key, encodeJson({ gen: meta.gen, seq: meta.seq }));
    for (const tag of ["h", "hd", "hb"]) {
      for await (const e of kv.list({ prefix: [tag] })) await kv.delete(e.key);
    }
    kv.close();
  }, (path) => KvStore.open(path));
});
