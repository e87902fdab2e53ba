/**
 * Store failures while the server runs (docs/troubleshooting.md "The store: what you see when things go wrong"): a full disk,
 * a read-only file system, a file replaced by a directory, a file that no longer parses, a Deno KV
 * on a full disk. Each is a real file-system failure under a real server and MCP client: the change
 * is `STORE_UNAVAILABLE`, no temporary file stays, reads go on, and once the cause is gone the next
 * change works without a restart.
 */
import assert from "node:assert/strict";
import { openStore } from "../../lib/store/open_store.ts";
import { call, connectInMemory, fails, ok, textOf } from "../support/harness.ts";
import { recordingLogger } from "../support/logs.ts";
import { bindSelf, fillUp, MOUNTS_UNAVAILABLE, tmpfs } from "../support/mounts.ts";

type Place = { filePath: string } | { kvPath: string };

async function serve(place: Place) {
  const { log, records } = recordingLogger();
  const store = await openStore({ filePath: undefined, kvPath: undefined, ...place }, log, {
    onDeploy: false,
  });
  const conn = await connectInMemory({ store, log });
  return Object.assign(conn, {
    records,
    [Symbol.asyncDispose]: async () => {
      await conn.close();
      await store.close();
    },
  });
}

function createPlan(name: string, id: string, description = "") {
  return { sessionId: "s", name, id, description, tasks: [{ id: `${id}-1`, name: "step" }] };
}

async function taskIds(client: Awaited<ReturnType<typeof serve>>["client"]): Promise<string[]> {
  const listed = await ok<{ tasks: { id: string }[] }>(client, "listTasks", { sessionId: "s" });
  return listed.tasks.map((t) => t.id);
}

function leftovers(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".tmp"));
}

Deno.test(
  "a full disk: STORE_UNAVAILABLE, no temporary file, reads go on, writes resume once space is freed",
  { ignore: MOUNTS_UNAVAILABLE },
  async () => {
    await using mount = await tmpfs(256);
    const filePath = `${mount.path}/store.json`;
    await using server = await serve({ filePath });
    await ok(server.client, "createTask", createPlan("Before", "a"));
    const before = await Deno.readFile(filePath);

    const filler = await fillUp(mount.path);
    const message = await fails(
      server.client,
      "createTask",
      createPlan("Big", "b", "x".repeat(4000)),
      "STORE_UNAVAILABLE",
    );
    assert.match(message, /disk is full/);
    assert.doesNotMatch(message, /os error|\/tmp\//, "the reply names the cause, not the exception");
    assert.deepEqual(leftovers(mount.path), [], "no temporary file is left on the full disk");
    assert.deepEqual(await Deno.readFile(filePath), before, "the file is as it was");
    assert.deepEqual(await taskIds(server.client), ["a"], "reads go on, without the refused change");
    assert.ok(server.records.some((r) => r.msg === "store unavailable" && r.cause === "the disk is full"));

    await Deno.remove(filler);
    await ok(server.client, "createTask", createPlan("After", "c"));
    assert.deepEqual(await taskIds(server.client), ["a", "c"]);
    const doc = JSON.parse(await Deno.readTextFile(filePath));
    assert.deepEqual(doc.sessions.s.map((t: { id: string }) => t.id), ["a", "c"]);
  },
);

Deno.test(
  "a read-only file system: STORE_UNAVAILABLE, reads go on, writes resume when it is writable again",
  { ignore: MOUNTS_UNAVAILABLE },
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-ro-" });
    try {
      await using ro = await bindSelf(dir);
      const filePath = `${dir}/store.json`;
      await using server = await serve({ filePath });
      await ok(server.client, "createTask", createPlan("Before", "a"));

      await ro.readOnly(true);
      const message = await fails(
        server.client,
        "createTask",
        createPlan("Refused", "b"),
        "STORE_UNAVAILABLE",
      );
      assert.match(message, /read-only/);
      assert.deepEqual(await taskIds(server.client), ["a"]);
      await fails(server.client, "startTask", { sessionId: "s", id: "a-1" }, "STORE_UNAVAILABLE");
      assert.equal(
        (await ok<{ task: { status: string } }>(server.client, "getTask", { sessionId: "s", id: "a-1" })).task
          .status,
        "todo",
        "the refused start changed nothing",
      );

      await ro.readOnly(false);
      await ok(server.client, "createTask", createPlan("After", "c"));
      assert.deepEqual(await taskIds(server.client), ["a", "c"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("a file replaced by a directory: changes are STORE_UNAVAILABLE, reads go on, writes resume once it is gone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-store-" });
  try {
    const filePath = `${dir}/store.json`;
    await using server = await serve({ filePath });
    await ok(server.client, "createTask", createPlan("Before", "a"));
    await Deno.remove(filePath);
    await Deno.mkdir(filePath);

    await fails(server.client, "createTask", createPlan("Refused", "b"), "STORE_UNAVAILABLE");
    assert.ok((await Deno.stat(filePath)).isDirectory, "the directory is left alone");
    assert.deepEqual(await taskIds(server.client), ["a"], "reads answer from the last state read");
    assert.deepEqual(leftovers(dir), []);

    await Deno.remove(filePath);
    await ok(server.client, "createTask", createPlan("After", "c"));
    assert.deepEqual(await taskIds(server.client), ["a", "c"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file that stops parsing is never written over: changes are STORE_UNAVAILABLE until it is repaired", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-store-" });
  try {
    const filePath = `${dir}/store.json`;
    await using server = await serve({ filePath });
    await ok(server.client, "createTask", createPlan("Before", "a"));
    const good = await Deno.readTextFile(filePath);
    const broken = good.slice(0, good.length - 5);
    await Deno.writeTextFile(filePath, broken);

    const result = await call(server.client, "createTask", createPlan("Refused", "b"));
    assert.equal(result.isError, true);
    assert.match(textOf(result), /STORE_UNAVAILABLE/);
    assert.match(textOf(result), /can no longer be read or parsed/);
    await fails(
      server.client,
      "mem_progress",
      { project: "p", content: '{"goal":"g"}' },
      "STORE_UNAVAILABLE",
    );
    await fails(
      server.client,
      "save_current_work_info",
      { work_summarize: "w", work_description: "d" },
      "STORE_UNAVAILABLE",
    );
    assert.equal(await Deno.readTextFile(filePath), broken, "the unparseable file is left as it was");
    assert.deepEqual(await taskIds(server.client), ["a"], "reads go on with the last state read");

    await Deno.writeTextFile(filePath, good);
    await ok(server.client, "createTask", createPlan("After", "c"));
    assert.deepEqual(await taskIds(server.client), ["a", "c"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Deno KV on a full disk: STORE_UNAVAILABLE, reads go on, writes resume once space is freed", {
  ignore: MOUNTS_UNAVAILABLE,
}, async () => {
  await using mount = await tmpfs(2048);
  await using server = await serve({ kvPath: `${mount.path}/store.sqlite` });
  await ok(server.client, "createTask", createPlan("Before", "a"));

  const filler = await fillUp(mount.path);
  let refused = 0;
  // SQLite may still find room in pages it holds: change until the disk refuses.
  for (let i = 0; i < 50 && refused === 0; i++) {
    const result = await call(server.client, "createTask", createPlan("Big", `b${i}`, "y".repeat(4000)));
    if (result.isError) {
      const error = (result.structuredContent as { error: { code: string; message: string } }).error;
      assert.equal(error.code, "STORE_UNAVAILABLE", error.message);
      assert.match(error.message, /disk is full/);
      refused++;
    }
  }
  assert.equal(refused, 1, "the full disk refused a change");
  const kept = await taskIds(server.client);
  assert.equal(kept[0], "a", "reads go on");

  await Deno.remove(filler);
  await ok(server.client, "createTask", createPlan("After", "c"));
  assert.deepEqual(await taskIds(server.client), [...kept, "c"]);
});

/** Random text (stored values are compressed: repeated text would make a small change). */
function noise(length: number): string {
  const bytes = new Uint8Array(length / 2);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Task keys of generations no session meta names, and garbage markers, in the KV at `path`. */
async function kvGarbage(path: string): Promise<{ orphanTasks: number; markers: number }> {
  const kv = await Deno.openKv(path);
  try {
    const gens = new Set<string>();
    for await (const e of kv.list<Uint8Array>({ prefix: ["m"] })) {
      gens.add(JSON.parse(new TextDecoder().decode(e.value)).gen);
    }
    let orphanTasks = 0;
    for await (const e of kv.list({ prefix: ["t"] })) if (!gens.has(e.key[1] as string)) orphanTasks++;
    const markers = (await Array.fromAsync(kv.list({ prefix: ["gc"] }))).length;
    return { orphanTasks, markers };
  } finally {
    kv.close();
  }
}

Deno.test(
  "Deno KV: a big change cut short by a full disk leaves nothing staged once a change succeeds again",
  { ignore: MOUNTS_UNAVAILABLE },
  async () => {
    await using mount = await tmpfs(6144);
    const kvPath = `${mount.path}/store.sqlite`;
    {
      await using server = await serve({ kvPath });
      await ok(server.client, "createTask", createPlan("Before", "a"));
      // Leave about 1.5 MB: enough to stage part of a 2 MB change, not all of it.
      const filler = await fillUp(mount.path);
      const file = await Deno.open(filler, { write: true });
      await file.truncate((await file.stat()).size - 1_500_000);
      file.close();

      const big = {
        sessionId: "s",
        name: "Big",
        id: "big",
        tasks: Array.from(
          { length: 490 },
          (_, i) => ({ id: `big-${i}`, name: `leaf ${i}`, description: noise(4000) }),
        ),
      };
      await fails(server.client, "createTask", big, "STORE_UNAVAILABLE");
      const cut = await kvGarbage(kvPath);
      assert.ok(cut.orphanTasks > 0, "the failed change had staged part of a generation");

      await Deno.remove(filler);
      await ok(server.client, "createTask", createPlan("After", "c"));
      assert.deepEqual(await taskIds(server.client), ["a", "c"]); // queued after the sweep
      assert.deepEqual(await kvGarbage(kvPath), { orphanTasks: 0, markers: 0 }, "swept without a restart");
    }
  },
);
