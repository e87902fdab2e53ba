/**
 * `resources/list` is paged (contract "Failures, limits and hostile input"): at most 100 resources a
 * page with the protocol's `nextCursor`, every resource exactly once, the same pages when nothing
 * changed, nothing repeated when names come and go between pages, and an invalid cursor is a
 * JSON-RPC -32602. A stored name from before the Unicode rule (a lone surrogate, which has no URI)
 * never breaks the listing: it is left out and logged once. All through a real SDK client.
 */
import assert from "node:assert/strict";
import { createTask, deleteTask } from "../../lib/domain/task_ops.ts";
import { upsertProgress } from "../../lib/domain/progress_doc.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { connectInMemory } from "../support/harness.ts";
import { recordingLogger } from "../support/logs.ts";
import type { Client } from "../support/sdk_client.ts";
import { STORE_KINDS } from "../support/store_places.ts";

const PLAN = "ui://checklist/plan.html";

/**
 * One page of `resources/list`: after `cursor`, or the first. The SDK v2 client's `listResources()`
 * without a cursor walks every page itself; the first page alone is a plain request.
 */
function pageOf(client: Client, cursor?: string) {
  return cursor === undefined
    ? client.request({ method: "resources/list", params: {} })
    : client.listResources({ cursor });
}

/** Every page of `resources/list`, from the first. */
async function pages(client: Client): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await pageOf(client, cursor);
    out.push(page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.length < 1000);
  return out;
}

async function addSessions(store: Store, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    await store.space("default").updateTree(id, (t) => createTask(t, { id: "t", name: id }));
  }
}

for (const kind of STORE_KINDS) {
  Deno.test(`${kind.name} store: resources/list pages hold at most 100, together every resource once, the same each time`, async () => {
    const place = await kind.place();
    const store = await place.open();
    try {
      const ids = Array.from({ length: 250 }, (_, i) => `s${String(i).padStart(3, "0")}`);
      await addSessions(store, ids);
      await store.space("default").updateProgress(
        "app",
        (c) =>
          upsertProgress(c, {
            project: "app",
            content: {},
            session_id: undefined,
            now: "2026-01-01T00:00:00Z",
          }),
      );
      await using conn = await connectInMemory({ store });
      const first = await pages(conn.client);
      assert.ok(first.length >= 3, `${first.length} pages`);
      for (const page of first) assert.ok(page.length <= 100 && page.length > 0, `a page of ${page.length}`);
      const all = first.flat();
      assert.equal(new Set(all).size, all.length, "no resource twice");
      assert.deepEqual(
        [...all].sort(),
        [PLAN, "checklist://progress/app", ...ids.map((id) => `checklist://sessions/${id}`)].sort(),
      );
      assert.deepEqual(await pages(conn.client), first, "the same pages when nothing changed");
    } finally {
      await store.close();
      await place.cleanup();
    }
  });
}

Deno.test("names that come and go between pages: nothing repeats and every name that stayed is listed", async () => {
  await using conn = await connectInMemory();
  const ids = Array.from({ length: 150 }, (_, i) => `s${String(i).padStart(3, "0")}`);
  await addSessions(conn.store, ids);
  const first = await pageOf(conn.client);
  assert.ok(first.nextCursor);
  // Before the cursor: one removed, one added; after it: one added.
  await conn.store.space("default").updateTree("s010", (t) => deleteTask(t, "t"));
  await addSessions(conn.store, ["a-early", "s120x"]);
  const rest: string[] = [];
  let cursor: string | undefined = first.nextCursor;
  while (cursor !== undefined) {
    const page = await conn.client.listResources({ cursor });
    rest.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  }
  const all = [...first.resources.map((r) => r.uri), ...rest];
  assert.equal(new Set(all).size, all.length, "no resource twice");
  for (const id of ids.filter((id) => id !== "s010")) {
    assert.ok(all.includes(`checklist://sessions/${id}`), `${id} listed`);
  }
  assert.ok(rest.includes("checklist://sessions/s120x"), "a name added after the cursor is listed");
});

Deno.test("an invalid cursor is a JSON-RPC -32602 invalid params error", async () => {
  await using conn = await connectInMemory();
  await addSessions(conn.store, Array.from({ length: 120 }, (_, i) => `s${i}`));
  const good = (await pageOf(conn.client)).nextCursor!;
  for (const cursor of ["garbage!", "", btoa('[9,"x"]'), btoa("{}"), good.slice(0, -3), "%%%"]) {
    await assert.rejects(
      conn.client.listResources({ cursor }),
      (error: { code?: number; message?: string }) => {
        assert.equal(error.code, -32602, `${JSON.stringify(cursor)}: ${error.message}`);
        assert.match(error.message ?? "", /Invalid cursor/);
        return true;
      },
    );
  }
});

Deno.test("a stored session and project with a lone surrogate (written past the tool edge) never break resources/list: left out, logged once", async () => {
  // The memory store keeps names as the store API was given them; a file or Deno KV store repairs such
  // names at load instead (tests/store/old_names_test.ts), so only this path can still meet them.
  const store = new MemoryStore();
  await addSessions(store, ["good", "q\ud800"]);
  await store.space("default").updateProgress(
    "p\udbff",
    (c) =>
      upsertProgress(c, {
        project: "p\udbff",
        content: {},
        session_id: undefined,
        now: "2026-01-01T00:00:00Z",
      }),
  );
  assert.deepEqual((await store.space("default").listSessions()).sort(), ["good", "q\ud800"]);
  const { log, records } = recordingLogger();
  await using conn = await connectInMemory({ store, log });
  for (let i = 0; i < 2; i++) {
    const uris = (await pages(conn.client)).flat();
    assert.deepEqual(uris, [PLAN, "checklist://sessions/good"]);
  }
  const warnings = records.filter((r) => /not well-formed Unicode/.test(r.msg));
  assert.deepEqual(warnings.map((r) => [r.session ?? r.project]), [['"q\\ud800"'], ['"p\\udbff"']]);
});
