/**
 * The `works` group end to end through a real SDK client (docs/requirements.md W1–W6): ids, timestamps, LRU order
 * with save and get-by-id as use, capacity and logged evictions, overwrite by session, the frozen
 * task snapshot, the unknown-session warning, refusals that change nothing, and a shared store.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { call, connectInMemory, fails, ok, textOf } from "../support/harness.ts";
import { recordingLogger } from "../support/logs.ts";
import { isIsoTimestamp, recent, recentDescriptions, save } from "../support/handoff.ts";

interface WorkDetail {
  workId: string;
  work_timestamp: string;
  work_description: string;
  work_summarize: string;
  sessionId?: string;
  work_tasks?: Task[];
}

Deno.test("save_current_work_info returns an 8-digit workId, an ISO timestamp and a message", async () => {
  await using conn = await connectInMemory();
  const before = Date.now();
  const result = await call(conn.client, "save_current_work_info", {
    work_summarize: "Implemented the parser; tests pass.",
    work_description: "Parser",
  });
  assert.equal(result.isError, undefined);
  const out = result.structuredContent as { workId: string; timestamp: string; message: string };
  assert.match(out.workId, /^\d{8}$/);
  assert.ok(isIsoTimestamp(out.timestamp), out.timestamp);
  assert.ok(Date.parse(out.timestamp) >= before - 1000);
  assert.ok(out.message.includes(out.workId));
  assert.ok(textOf(result).includes(out.workId));
  assert.equal("warning" in out, false);
});

Deno.test("workIds are unique across many saves", async () => {
  await using conn = await connectInMemory({ workCacheSize: 200 });
  const ids = new Set<string>();
  for (let i = 0; i < 120; i++) ids.add(await save(conn.client, `work ${i}`));
  assert.equal(ids.size, 120);
  assert.equal((await recent(conn.client)).length, 120);
});

Deno.test("get_recent_works_info is an empty list when nothing was saved", async () => {
  await using conn = await connectInMemory();
  const result = await call(conn.client, "get_recent_works_info");
  assert.deepEqual(result.structuredContent, { works: [] });
  assert.match(textOf(result), /No saved work/);
});

Deno.test("get_recent_works_info lists workId, work_timestamp and work_description, most recently used first", async () => {
  await using conn = await connectInMemory();
  const a = await save(conn.client, "a");
  const b = await save(conn.client, "b");
  const works = await recent(conn.client);
  assert.deepEqual(works.map((w) => w.workId), [b, a]);
  for (const w of works) {
    assert.deepEqual(Object.keys(w).sort(), ["work_description", "work_timestamp", "workId"].sort());
    assert.ok(isIsoTimestamp(w.work_timestamp));
  }
  const text = textOf(await call(conn.client, "get_recent_works_info"));
  assert.ok(text.indexOf(b) < text.indexOf(a), "the text lists the most recent first too");
});

Deno.test("get_work_by_id returns the whole entry and makes it the most recently used", async () => {
  await using conn = await connectInMemory();
  const a = await save(conn.client, "a", { work_summarize: "Did A. Next: B." });
  await save(conn.client, "b");
  await save(conn.client, "c");
  assert.deepEqual(await recentDescriptions(conn.client), ["c", "b", "a"]);
  const result = await call(conn.client, "get_work_by_id", { workId: a });
  const detail = result.structuredContent as unknown as WorkDetail;
  assert.equal(detail.workId, a);
  assert.equal(detail.work_description, "a");
  assert.equal(detail.work_summarize, "Did A. Next: B.");
  assert.ok(isIsoTimestamp(detail.work_timestamp));
  assert.equal("sessionId" in detail, false);
  assert.equal("work_tasks" in detail, false, "no session given: work_tasks omitted");
  assert.ok(textOf(result).includes("Did A. Next: B."));
  assert.deepEqual(await recentDescriptions(conn.client), ["a", "c", "b"]);
});

Deno.test("past the default capacity of 10 the least recently used entry is evicted and the eviction logged", async () => {
  const { log, records } = recordingLogger();
  await using conn = await connectInMemory({ log });
  const ids: string[] = [];
  for (let i = 1; i <= 10; i++) ids.push(await save(conn.client, `w${i}`));
  assert.equal((await recent(conn.client)).length, 10);
  assert.equal(records.filter((r) => r.msg === "work evicted").length, 0);
  await ok(conn.client, "get_work_by_id", { workId: ids[0] }); // w1 is used again: w2 is now the oldest
  const saved = await ok<{ message: string }>(conn.client, "save_current_work_info", {
    work_summarize: "eleventh",
    work_description: "w11",
  });
  assert.ok(saved.message.includes(ids[1]!), "the reply names the evicted id");
  const works = await recentDescriptions(conn.client);
  assert.equal(works.length, 10);
  assert.deepEqual(works, ["w11", "w1", "w10", "w9", "w8", "w7", "w6", "w5", "w4", "w3"]);
  await fails(conn.client, "get_work_by_id", { workId: ids[1] }, "NOT_FOUND");
  const evictions = records.filter((r) => r.msg === "work evicted");
  assert.deepEqual(evictions.map((r) => r.workId), [ids[1]]);
  assert.equal(evictions[0]!.level, "info");
  assert.equal(evictions[0]!.work_description, "w2");
});

Deno.test("WORK_CACHE_SIZE sets the capacity; every eviction is logged", async () => {
  const { log, records } = recordingLogger();
  await using conn = await connectInMemory({ log, workCacheSize: 3 });
  const ids: string[] = [];
  for (const d of ["a", "b", "c", "d", "e"]) ids.push(await save(conn.client, d));
  assert.deepEqual(await recentDescriptions(conn.client), ["e", "d", "c"]);
  assert.deepEqual(records.filter((r) => r.msg === "work evicted").map((r) => r.workId), [ids[0], ids[1]]);
  assert.equal(
    await conn.store.space("default").readWorks((e) => e.size),
    3,
    "evicted entries are gone from the store",
  );
});

Deno.test("saving again for a session overwrites its entry, keeps its workId and makes it most recent", async () => {
  await using conn = await connectInMemory();
  await ok(conn.client, "createTask", { sessionId: "s1", name: "Plan" });
  const first = await save(conn.client, "first", { sessionId: "s1", work_summarize: "old summary" });
  await save(conn.client, "unrelated");
  await save(conn.client, "other session", { sessionId: "s2" });
  const second = await save(conn.client, "second", { sessionId: "s1", work_summarize: "new summary" });
  assert.equal(second, first);
  assert.deepEqual(await recentDescriptions(conn.client), ["second", "other session", "unrelated"]);
  const detail = await ok<WorkDetail>(conn.client, "get_work_by_id", { workId: first });
  assert.equal(detail.work_summarize, "new summary");
  assert.equal(detail.sessionId, "s1");
});

Deno.test("the task snapshot is taken at save time and returned unchanged after the tasks change", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const { task: created } = await ok<{ task: Task }>(client, "createTask", {
    sessionId: "plan",
    name: "Ship",
    tasks: [{ id: "a", name: "A", completion_criteria: ["tests pass"] }, { id: "b", name: "B" }],
  });
  const root = created.id;
  await ok(client, "startTask", { sessionId: "plan", id: root });
  // Copied: the in-memory transport hands over the server's objects without serializing them.
  const atSave = structuredClone(
    (await ok<{ task: Task }>(client, "getTask", { sessionId: "plan", id: root })).task,
  );
  const workId = await save(client, "halfway", { sessionId: "plan" });

  await ok(client, "completeTask", { sessionId: "plan", id: "a", resolution: "done" });
  await ok(client, "createTask", { sessionId: "plan", parentId: root, name: "C" });
  await ok(client, "deleteTask", { sessionId: "plan", id: "b" });

  const result = await call(client, "get_work_by_id", { workId });
  const detail = result.structuredContent as unknown as WorkDetail;
  assert.equal(detail.sessionId, "plan");
  assert.deepEqual(detail.work_tasks, [atSave]);
  assert.equal(detail.work_tasks![0]!.tasks[0]!.status, "in_progress");
  assert.match(textOf(result), /◐ a: A/);
  assert.doesNotMatch(textOf(result), /: C$/m);
  const now = (await ok<{ task: Task }>(client, "getTask", { sessionId: "plan", id: root })).task;
  assert.notDeepEqual(now, atSave, "the live tree did change");
});

Deno.test("a session that exists with no tasks is snapshotted as an empty list", async () => {
  await using conn = await connectInMemory();
  const { task } = await ok<{ task: Task }>(conn.client, "createTask", { sessionId: "empty", name: "X" });
  await ok(conn.client, "deleteTask", { sessionId: "empty", id: task.id });
  assert.equal(
    await conn.store.space("default").readTree("empty", (tree) => tree?.size),
    0,
    "the session exists, empty",
  );
  const saved = await ok<{ workId: string }>(conn.client, "save_current_work_info", {
    work_summarize: "s",
    work_description: "nothing left",
    sessionId: "empty",
  });
  assert.equal("warning" in saved, false);
  const detail = await ok<WorkDetail>(conn.client, "get_work_by_id", { workId: saved.workId });
  assert.deepEqual(detail.work_tasks, []);
});

Deno.test("an unknown sessionId still saves, with a warning in the reply and the log", async () => {
  const { log, records } = recordingLogger();
  await using conn = await connectInMemory({ log });
  const result = await call(conn.client, "save_current_work_info", {
    work_summarize: "s",
    work_description: "d",
    sessionId: "nope",
  });
  assert.equal(result.isError, undefined);
  const out = result.structuredContent as { workId: string; warning?: string };
  assert.match(out.warning ?? "", /"nope" does not exist/);
  assert.match(textOf(result), /Warning: .*"nope"/);
  const warnings = records.filter((r) => r.level === "warn");
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.sessionId, "nope");
  assert.equal(warnings[0]!.workId, out.workId);
  const detail = await ok<WorkDetail>(conn.client, "get_work_by_id", { workId: out.workId });
  assert.equal(detail.sessionId, "nope");
  assert.equal("work_tasks" in detail, false, "unknown session: work_tasks omitted");
  assert.equal(
    await conn.store.space("default").readTree("nope", (t) => t),
    undefined,
    "saving did not create the session",
  );
});

Deno.test("a malformed workId is INVALID_INPUT, an unknown one NOT_FOUND, and neither changes the order", async () => {
  await using conn = await connectInMemory();
  await save(conn.client, "a");
  await save(conn.client, "b");
  const order = await recent(conn.client);
  for (const workId of ["1234567", "123456789", "abcdefgh", "1234 678", "", 12345678, null]) {
    await fails(conn.client, "get_work_by_id", { workId }, "INVALID_INPUT");
  }
  await fails(conn.client, "get_work_by_id", {}, "INVALID_INPUT");
  const known = new Set(order.map((w) => w.workId));
  const unknown = ["10000000", "99999999", "55555555"].find((id) => !known.has(id))!;
  const message = await fails(conn.client, "get_work_by_id", { workId: unknown }, "NOT_FOUND");
  assert.match(message, /get_recent_works_info/);
  assert.deepEqual(await recent(conn.client), order);
});

Deno.test("bad input to save_current_work_info is refused and saves nothing", async (t) => {
  await using conn = await connectInMemory({ workCacheSize: 2 });
  await ok(conn.client, "createTask", { sessionId: "s", name: "T" });
  const kept = await save(conn.client, "kept", { sessionId: "s", work_summarize: "original" });
  const other = await save(conn.client, "other");
  const before = await recent(conn.client);
  const big = Array.from(
    { length: 15 },
    (_, i) => ({ id: `big${i}`, name: `Big ${i}`, description: "x".repeat(4000) }),
  );
  await ok(conn.client, "createTask", { sessionId: "huge", name: "Huge", tasks: big });
  const cases: [string, Record<string, unknown>, string][] = [
    ["missing summary", { work_description: "d" }, "INVALID_INPUT"],
    ["missing description", { work_summarize: "s" }, "INVALID_INPUT"],
    ["blank summary", { work_summarize: "   ", work_description: "d" }, "INVALID_INPUT"],
    ["blank description", { work_summarize: "s", work_description: "" }, "INVALID_INPUT"],
    [
      "description of 201 characters",
      { work_summarize: "s", work_description: "d".repeat(201) },
      "LIMIT_EXCEEDED",
    ],
    [
      "summary of 20,001 characters",
      { work_summarize: "s".repeat(20_001), work_description: "d" },
      "LIMIT_EXCEEDED",
    ],
    ["empty sessionId", { work_summarize: "s", work_description: "d", sessionId: "" }, "INVALID_INPUT"],
    ["sessionId of 101 characters", {
      work_summarize: "s",
      work_description: "d",
      sessionId: "s".repeat(101),
    }, "LIMIT_EXCEEDED"],
    ["summary not a string", { work_summarize: 5, work_description: "d" }, "INVALID_INPUT"],
    [
      "a session too large to snapshot",
      { work_summarize: "s", work_description: "d", sessionId: "huge" },
      "LIMIT_EXCEEDED",
    ],
    ["an overwrite of a kept entry with a blank summary", {
      work_summarize: "",
      work_description: "d",
      sessionId: "s",
    }, "INVALID_INPUT"],
  ];
  for (const [name, args, code] of cases) {
    await t.step(name, async () => {
      await fails(conn.client, "save_current_work_info", args, code);
      assert.deepEqual(await recent(conn.client), before);
    });
  }
  const detail = await ok<WorkDetail>(conn.client, "get_work_by_id", { workId: kept });
  assert.equal(detail.work_summarize, "original");
  await ok(conn.client, "get_work_by_id", { workId: other });
});

Deno.test("the limits themselves are accepted: 200-character description, 20,000-character summary", async () => {
  await using conn = await connectInMemory();
  const workId = await save(conn.client, "d".repeat(200), { work_summarize: "s".repeat(20_000) });
  const detail = await ok<WorkDetail>(conn.client, "get_work_by_id", { workId });
  assert.equal(detail.work_summarize.length, 20_000);
});

Deno.test("two servers over one store share the works and their order", async () => {
  const store = new MemoryStore();
  await using a = await connectInMemory({ store });
  await using b = await connectInMemory({ store });
  const first = await save(a.client, "from A");
  await save(b.client, "from B");
  assert.deepEqual(await recentDescriptions(a.client), ["from B", "from A"]);
  await ok(b.client, "get_work_by_id", { workId: first });
  assert.deepEqual(await recentDescriptions(a.client), ["from A", "from B"]);
});

Deno.test("servers on one FILE_PATH share the works: save in one, read and use in the other", async () => {
  const dir = await Deno.makeTempDir({ prefix: "handoff-works-" });
  try {
    const path = `${dir}/store.json`;
    const storeA = await JsonFileStore.open(path);
    const storeB = await JsonFileStore.open(path);
    await using a = await connectInMemory({ store: storeA, workCacheSize: 2 });
    await using b = await connectInMemory({ store: storeB, workCacheSize: 2 });
    const first = await save(a.client, "one");
    await save(b.client, "two");
    await ok(a.client, "get_work_by_id", { workId: first });
    await save(b.client, "three"); // evicts "two", the least recently used across both servers
    assert.deepEqual(await recentDescriptions(a.client), ["three", "one"]);
    assert.deepEqual(await recentDescriptions(b.client), ["three", "one"]);
    await storeA.close();
    await storeB.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
