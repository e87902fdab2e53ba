/**
 * The work-info LRU as a pure module: ids, eviction order, touch on get, overwrite by session,
 * frozen snapshots, and a capacity that changes between restarts (entries reloaded from JSON).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { DomainError } from "../../lib/domain/errors.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import {
  byRecency,
  evict,
  randomWorkId,
  recentWorks,
  saveWork,
  type SaveWorkInput,
  snapshotTasks,
  touchWork,
  type WorkEntry,
  WorkEntrySchema,
  workInfo,
} from "../../lib/domain/work_lru.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

/** Ids 10000001, 10000002, … in order: deterministic input, not a stand-in for our code. */
function counterIds(start = 10_000_001): () => string {
  let next = start;
  return () => String(next++);
}

function input(description: string, more: Partial<SaveWorkInput> = {}): SaveWorkInput {
  return {
    work_summarize: `summary of ${description}`,
    work_description: description,
    now: "2025-01-02T03:04:05.000Z",
    randomId: randomWorkId,
    capacity: 10,
    ...more,
  };
}

function descriptions(entries: Map<string, WorkEntry>, capacity = 1000): string[] {
  return recentWorks(entries.values(), capacity).map((e) => e.work_description);
}

function task(id: string, status: Task["status"] = "todo", ...tasks: Task[]): Task {
  return { id, name: `Task ${id}`, description: "", status, tasks };
}

function isCode(code: string) {
  return (e: unknown) => e instanceof DomainError && e.code === code;
}

Deno.test("randomWorkId draws 8-digit ids", () => {
  for (let i = 0; i < 2000; i++) assert.match(randomWorkId(), /^[1-9]\d{7}$/);
});

Deno.test("saveWork gives a new entry an unused 8-digit id, the time given, and makes it most recent", () => {
  const entries = new Map<string, WorkEntry>();
  const first = saveWork(entries, input("a", { randomId: counterIds() })).entry;
  assert.equal(first.workId, "10000001");
  assert.equal(first.work_timestamp, "2025-01-02T03:04:05.000Z");
  // The generator repeats the taken id first: the save draws again instead of overwriting.
  const draws = ["10000001", "10000001", "20000000"];
  const second = saveWork(entries, input("b", { randomId: () => draws.shift()! })).entry;
  assert.equal(second.workId, "20000000");
  assert.equal(entries.size, 2);
  assert.deepEqual(descriptions(entries), ["b", "a"]);
});

Deno.test("saveWork refuses a generator that does not give 8 digits", () => {
  assert.throws(() => saveWork(new Map(), input("a", { randomId: () => "123" })), /randomId/);
});

Deno.test("past the capacity the least recently used entries are evicted, in order", () => {
  const entries = new Map<string, WorkEntry>();
  const ids = counterIds();
  const evicted: string[] = [];
  for (const d of ["a", "b", "c", "d", "e"]) {
    const result = saveWork(entries, input(d, { randomId: ids, capacity: 3 }));
    evicted.push(...result.evicted.map((e) => e.work_description));
  }
  assert.deepEqual(evicted, ["a", "b"]);
  assert.deepEqual(descriptions(entries), ["e", "d", "c"]);
});

Deno.test("touchWork makes an entry most recent, so another one is evicted next", () => {
  const entries = new Map<string, WorkEntry>();
  const ids = counterIds();
  const a = saveWork(entries, input("a", { randomId: ids, capacity: 3 })).entry;
  saveWork(entries, input("b", { randomId: ids, capacity: 3 }));
  saveWork(entries, input("c", { randomId: ids, capacity: 3 }));
  const touched = touchWork(entries, a.workId, 3);
  assert.equal(touched.entry.work_description, "a");
  assert.deepEqual(touched.evicted, []);
  assert.deepEqual(descriptions(entries), ["a", "c", "b"]);
  const { evicted } = saveWork(entries, input("d", { randomId: ids, capacity: 3 }));
  assert.deepEqual(evicted.map((e) => e.work_description), ["b"]);
  assert.deepEqual(descriptions(entries), ["d", "a", "c"]);
});

Deno.test("touchWork of an unknown id is NOT_FOUND and changes nothing", () => {
  const entries = new Map<string, WorkEntry>();
  saveWork(entries, input("a", { randomId: counterIds() }));
  const before = structuredClone([...entries]);
  assert.throws(() => touchWork(entries, "99999999", 10), isCode("NOT_FOUND"));
  assert.deepEqual([...entries], before);
});

Deno.test("saving for a session that has an entry overwrites it, keeps its id and makes it most recent", () => {
  const entries = new Map<string, WorkEntry>();
  const ids = counterIds();
  const snapshot = snapshotTasks([task("t1")], "s1");
  const first = saveWork(entries, input("first", { randomId: ids, sessionId: "s1", snapshot })).entry;
  saveWork(entries, input("other", { randomId: ids }));
  saveWork(entries, input("other session", { randomId: ids, sessionId: "s2" }));
  const again = saveWork(
    entries,
    input("second", { randomId: ids, sessionId: "s1", now: "2025-02-02T00:00:00.000Z" }),
  );
  assert.equal(again.overwritten, true);
  assert.equal(again.entry.workId, first.workId);
  assert.equal(entries.size, 3);
  assert.deepEqual(descriptions(entries), ["second", "other session", "other"]);
  const stored = entries.get(first.workId)!;
  assert.equal(stored.work_summarize, "summary of second");
  assert.equal(stored.work_timestamp, "2025-02-02T00:00:00.000Z");
  assert.equal(stored.work_tasks, undefined, "a save without snapshot drops the old one");
  assert.equal(stored.sessionId, "s1");
});

Deno.test("saves without a session never overwrite each other", () => {
  const entries = new Map<string, WorkEntry>();
  for (let i = 0; i < 5; i++) saveWork(entries, input("same"));
  assert.equal(entries.size, 5);
});

Deno.test("snapshotTasks copies deeply and freezes: later changes to the tree do not reach it", () => {
  const roots = [task("a", "in_progress", task("a1", "in_progress"), task("a2"))];
  const snap = snapshotTasks(roots, "s");
  roots[0]!.status = "done";
  roots[0]!.tasks[0]!.status = "done";
  roots[0]!.tasks.push(task("a3"));
  assert.equal(snap[0]!.status, "in_progress");
  assert.equal(snap[0]!.tasks[0]!.status, "in_progress");
  assert.equal(snap[0]!.tasks.length, 2);
  assert.ok(Object.isFrozen(snap) && Object.isFrozen(snap[0]) && Object.isFrozen(snap[0]!.tasks[1]));
  assert.throws(() => {
    (snap[0] as Task).status = "done";
  }, TypeError);
});

Deno.test("snapshotTasks refuses a tree above the limit with LIMIT_EXCEEDED", () => {
  const big = Array.from({ length: 20 }, (_, i) => ({ ...task(`t${i}`), description: "x".repeat(4000) }));
  assert.ok(JSON.stringify(big).length > LIMITS.workSnapshotLength);
  assert.throws(() => snapshotTasks(big, "big"), isCode("LIMIT_EXCEEDED"));
});

Deno.test("workInfo leaves out the use counter", () => {
  const entries = new Map<string, WorkEntry>();
  const { entry } = saveWork(entries, input("a"));
  const info = workInfo(entry);
  assert.equal("used" in info, false);
  assert.equal(info.workId, entry.workId);
});

Deno.test("a smaller capacity after a restart lists fewer entries and evicts on the next use", async (t) => {
  // Before the restart: capacity 5, five entries, the oldest one read again.
  const entries = new Map<string, WorkEntry>();
  const ids = counterIds();
  for (const d of ["a", "b", "c", "d", "e"]) saveWork(entries, input(d, { randomId: ids, capacity: 5 }));
  touchWork(entries, "10000001", 5);
  assert.deepEqual(descriptions(entries), ["a", "e", "d", "c", "b"]);

  const reload = () =>
    new Map(
      (JSON.parse(JSON.stringify([...entries.values()])) as unknown[])
        .map((raw) => WorkEntrySchema.parse(raw))
        .map((e) => [e.workId, e] as const),
    );

  await t.step("listing shows only the capacity, most recent first", () => {
    const reloaded = reload();
    assert.deepEqual(recentWorks(reloaded.values(), 3).map((e) => e.work_description), ["a", "e", "d"]);
    assert.equal(reloaded.size, 5, "a listing evicts nothing");
  });

  await t.step("the next save evicts down to the new capacity, least recent first", () => {
    const reloaded = reload();
    const { evicted } = saveWork(reloaded, input("f", { randomId: ids, capacity: 3 }));
    assert.deepEqual(evicted.map((e) => e.work_description), ["d", "c", "b"]);
    assert.deepEqual(descriptions(reloaded), ["f", "a", "e"]);
  });

  await t.step("a touch evicts down to the new capacity too", () => {
    const reloaded = reload();
    const { evicted } = touchWork(reloaded, "10000003", 2); // "c"
    assert.deepEqual(evicted.map((e) => e.work_description), ["e", "d", "b"]);
    assert.deepEqual(descriptions(reloaded), ["c", "a"]);
  });

  await t.step("a larger capacity keeps everything", () => {
    const reloaded = reload();
    assert.deepEqual(evict(reloaded, 50), []);
    assert.equal(recentWorks(reloaded.values(), 50).length, 5);
  });
});

/** One operation of the model-based property test. */
type Op = { kind: "save"; session: string | undefined } | { kind: "touch"; pick: number };

Deno.test("saveWork and touchWork agree with a list-based LRU on any sequence of operations", () => {
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant("save" as const),
      session: fc.option(fc.constantFrom("s1", "s2", "s3"), { nil: undefined }),
    }),
    fc.record({ kind: fc.constant("touch" as const), pick: fc.nat(20) }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 40 }), (capacity, ops) => {
      const entries = new Map<string, WorkEntry>();
      // The model: ids in recency order, most recent first, with the session of each.
      let model: { workId: string; session: string | undefined }[] = [];
      const ids = counterIds();
      for (const o of ops) {
        if (o.kind === "save") {
          const { entry, evicted } = saveWork(
            entries,
            input("w", { randomId: ids, capacity, sessionId: o.session }),
          );
          const same = o.session === undefined ? -1 : model.findIndex((m) => m.session === o.session);
          if (same >= 0) assert.equal(entry.workId, model[same]!.workId);
          model = [{ workId: entry.workId, session: o.session }, ...model.filter((_, i) => i !== same)];
          assert.deepEqual(evicted.map((e) => e.workId), model.slice(capacity).map((m) => m.workId));
          model = model.slice(0, capacity);
        } else if (model.length > 0) {
          const target = model[o.pick % model.length]!;
          touchWork(entries, target.workId, capacity);
          model = [target, ...model.filter((m) => m !== target)];
        }
        assert.ok(entries.size <= capacity);
        assert.deepEqual(byRecency(entries.values()).map((e) => e.workId), model.map((m) => m.workId));
      }
    }),
    { seed: FUZZ_SEED, numRuns: fuzzRuns(100) },
  );
});
