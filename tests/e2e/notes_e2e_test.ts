/**
 * Context that travels with the work through real clients (docs/teams.md "Context that travels with the work"): notes added with updateTask as the calling agent, shown by getTask, counted by listTasks,
 * absent from the checklist tools and the plan view; refusals that change nothing; history and
 * restore; the `context` of a start or claim (blockers, takeover, the leaf's notes) with its one line
 * of text; and all of it across restarts of stdio and HTTP servers on a FILE_PATH and a KV_PATH.
 */
import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { Note, TakeContext, TaskView } from "../../lib/domain/schemas.ts";
import { call, connectInMemory, fails, ok, spawnStdio, startHttp, textOf } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** A clock the test moves. */
function clock() {
  let now = T0;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/** The README's plan: api and web in parallel, then e2e blocked by both. */
async function shop(client: Client, sessionId = "shop"): Promise<void> {
  await ok(client, "createTask", {
    sessionId,
    id: "build",
    name: "Build the shop",
    parallel: true,
    tasks: [
      { id: "api", name: "Build API" },
      { id: "web", name: "Build UI" },
      { id: "e2e", name: "End-to-end tests", blocked_by: ["api", "web"] },
    ],
  });
}

async function notesOf(client: Client, id: string, sessionId = "shop") {
  const { task } = await ok<{ task: { notes?: Note[]; notes_dropped?: number } }>(client, "getTask", {
    sessionId,
    id,
  });
  return task;
}

Deno.test("updateTask note: appended as the calling agent, the server's agent or the anonymous one; getTask shows notes, listTasks counts them", async () => {
  const time = clock();
  await using lead = await connectInMemory({ now: time.now });
  await using backend = await connectInMemory({ store: lead.store, agent: "backend", now: time.now });
  await shop(lead.client);
  const reply = await call(backend.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "  Auth uses JWT; keys in config/jwt.ts  ",
  });
  assert.match(textOf(reply), /Added a note to "Build API" \(api\) as backend \(1 kept\)/);
  assert.equal((reply.structuredContent!.task as TaskView).notes_count, 1);
  time.advance(1000);
  await ok(backend.client, "updateTask", { sessionId: "shop", id: "api", note: "named", agent: "w2" });
  await ok(lead.client, "updateTask", { sessionId: "shop", id: "api", note: "from the lead" });
  assert.deepEqual((await notesOf(lead.client, "api")).notes, [
    { agent: "backend", at: new Date(T0).toISOString(), text: "Auth uses JWT; keys in config/jwt.ts" },
    { agent: "w2", at: new Date(T0 + 1000).toISOString(), text: "named" },
    { agent: "(anonymous)", at: new Date(T0 + 1000).toISOString(), text: "from the lead" },
  ]);
  const text = textOf(await call(lead.client, "getTask", { sessionId: "shop", id: "api" }));
  assert.match(text, /Notes:\n- 2026-01-01T00:00:00.000Z backend: Auth uses JWT; keys in config\/jwt.ts\n/);
  const listed = await call(lead.client, "listTasks", { sessionId: "shop", parentId: "build" });
  const api = (listed.structuredContent!.tasks as TaskView[]).find((t) => t.id === "api")!;
  assert.equal(api.notes_count, 3);
  assert.equal("notes" in api, false, "listTasks carries the count only");
  assert.match(textOf(listed), /api: Build API \(3 notes\)/);
  // A note appends: updateTask says it is not idempotent.
  const { tools } = await lead.client.listTools();
  assert.equal(tools.find((t) => t.name === "updateTask")!.annotations?.idempotentHint, false);
  // The checklist tools show none.
  const tree = await call(lead.client, "get_all_tasks", { sessionId: "shop" });
  assert.doesNotMatch(JSON.stringify(tree), /JWT|from the lead/);
});

Deno.test("a note on a task another agent holds is allowed; blank, too long or ill-formed notes change nothing", async () => {
  const time = clock();
  await using x = await connectInMemory({ agent: "x", now: time.now });
  await shop(x.client);
  await ok(x.client, "claimTask", { sessionId: "shop", agent: "x" });
  await ok(x.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "held by x, noted by y",
    agent: "y",
  });
  const before = await ok(x.client, "getTask", { sessionId: "shop", id: "build" });
  const { revision } = await ok<{ revision: number }>(x.client, "task_history", { sessionId: "shop" });
  const refusals: [Record<string, unknown>, string, RegExp][] = [
    [{ note: "   " }, "INVALID_INPUT", /`note` must not be empty or blank/],
    [{ note: "x".repeat(LIMITS.noteLength + 1) }, "LIMIT_EXCEEDED", /`note`/],
    [{ note: "bad \ud800 half" }, "INVALID_INPUT", /`note`/],
    [{ note: 5 }, "INVALID_INPUT", /`note` must be a string/],
    [{ note: "with a status change", status: "todo", agent: "y" }, "CLAIMED", /agent "x" holds it/],
  ];
  for (const [args, code, message] of refusals) {
    assert.match(
      await fails(x.client, "updateTask", { sessionId: "shop", id: "api", ...args }, code),
      message,
    );
    assert.deepEqual(await ok(x.client, "getTask", { sessionId: "shop", id: "build" }), before);
  }
  assert.equal(
    (await ok<{ revision: number }>(x.client, "task_history", { sessionId: "shop" })).revision,
    revision,
  );
  await ok(x.client, "updateTask", { sessionId: "shop", id: "api", note: "y".repeat(LIMITS.noteLength) });
});

Deno.test("a note is a revision with its own history entry; restore_tasks brings the notes back as they were", async () => {
  await using conn = await connectInMemory({ agent: "w1" });
  await shop(conn.client);
  const first = await ok<{ revision: number }>(conn.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "one",
  });
  const second = await ok<{ revision: number }>(conn.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "two",
  });
  assert.equal(second.revision, first.revision + 1);
  const history = await ok<{ entries: { revision: number; summary: string }[] }>(
    conn.client,
    "task_history",
    {
      sessionId: "shop",
      limit: 2,
    },
  );
  assert.deepEqual(history.entries.map((e) => e.summary), [
    `note on "Build API" by w1`,
    `note on "Build API" by w1`,
  ]);
  await ok(conn.client, "restore_tasks", { sessionId: "shop", revision: first.revision });
  assert.deepEqual((await notesOf(conn.client, "api")).notes!.map((n) => n.text), ["one"]);
  await ok(conn.client, "restore_tasks", { sessionId: "shop", revision: second.revision });
  assert.deepEqual((await notesOf(conn.client, "api")).notes!.map((n) => n.text), ["one", "two"]);
});

Deno.test("the plan view shows no notes", async () => {
  await using conn = await connectInMemory({ agent: "w1" });
  await shop(conn.client);
  await ok(conn.client, "updateTask", { sessionId: "shop", id: "api", note: "secret-ish finding" });
  await ok(conn.client, "startTask", { sessionId: "shop", id: "api" });
  const view = await conn.client.callTool({ name: "view_session", arguments: { sessionId: "shop" } });
  assert.ok(!view.isError);
  assert.doesNotMatch(JSON.stringify(view), /secret-ish|notes/);
});

Deno.test("claimTask after the blockers hands over their resolutions and notes in `context`, named in one line of text", async () => {
  const time = clock();
  await using lead = await connectInMemory({ now: time.now });
  await shop(lead.client);
  const worker = (agent: string) => connectInMemory({ store: lead.store, agent, now: time.now });
  await using backend = await worker("backend");
  await using ui = await worker("ui");
  await using tester = await worker("tester");
  await ok(backend.client, "claimTask", { sessionId: "shop", agent: "backend" });
  await ok(ui.client, "claimTask", { sessionId: "shop", agent: "ui" });
  await ok(backend.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "POST /orders needs an idempotency key",
  });
  await ok(backend.client, "completeTask", {
    sessionId: "shop",
    id: "api",
    resolution: "REST API in src/api",
  });
  await ok(ui.client, "completeTask", { sessionId: "shop", id: "web", resolution: "UI in src/web" });
  const claimed = await call(tester.client, "claimTask", { sessionId: "shop", agent: "tester" });
  const context = claimed.structuredContent!.context as TakeContext;
  assert.deepEqual(context, {
    blockers: [
      {
        id: "api",
        name: "Build API",
        resolution: "REST API in src/api",
        last_note: {
          agent: "backend",
          at: new Date(T0).toISOString(),
          text: "POST /orders needs an idempotency key",
        },
      },
      { id: "web", name: "Build UI", resolution: "UI in src/web" },
    ],
  });
  const lines = textOf(claimed).split("\n").filter((line) => line.startsWith("Context"));
  assert.deepEqual(lines, [
    "Context (read it first): 2 finished blockers (api, web) with what their agents left.",
  ]);
  // startTask hands the same over; the renewal none.
  const renewed = await ok(tester.client, "claimTask", { sessionId: "shop", agent: "tester" });
  assert.equal(renewed.renewed, true);
  assert.equal(renewed.context, undefined);
});

Deno.test("a takeover hands over the stale holder's notes; startTask on a parent does too", async () => {
  const time = clock();
  await using lead = await connectInMemory({ now: time.now });
  await shop(lead.client);
  await ok(lead.client, "updateTask", { sessionId: "shop", id: "api", note: "plan: REST, not GraphQL" });
  await ok(lead.client, "claimTask", { sessionId: "shop", agent: "w1", lease_seconds: 60 });
  await ok(lead.client, "updateTask", {
    sessionId: "shop",
    id: "api",
    note: "half done: orders",
    agent: "w1",
  });
  time.advance(61_000);
  // w2 starts the parallel parent: it descends to api, whose lease expired.
  const taken = await ok<
    { task: { id: string }; taken_over_from: string; context: TakeContext; message: string }
  >(
    lead.client,
    "startTask",
    { sessionId: "shop", id: "build", agent: "w2" },
  );
  assert.equal(taken.task.id, "api");
  assert.equal(taken.taken_over_from, "w1");
  assert.deepEqual(taken.context.previous, {
    agent: "w1",
    notes: [{ agent: "w1", at: new Date(T0).toISOString(), text: "half done: orders" }],
  });
  assert.deepEqual(taken.context.notes!.map((n) => n.text), ["plan: REST, not GraphQL"]);
  assert.match(
    taken.message,
    /Context \(read it first\): 1 note by w1, who held it before; 1 note on this task\./,
  );
});

/** A place for a persistent store: its env, for spawning servers on it. */
async function withPlace(
  kind: "FILE_PATH" | "KV_PATH",
  body: (env: Record<string, string>) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "checklist-notes-" });
  try {
    await body({ [kind]: `${dir}/${kind === "FILE_PATH" ? "store.json" : "store.sqlite"}` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const kind of ["FILE_PATH", "KV_PATH"] as const) {
  Deno.test(`notes and the context they make survive restarts of stdio and HTTP servers on one ${kind}`, async () => {
    await withPlace(kind, async (env) => {
      {
        await using lead = await spawnStdio({ env: { ...env, CHECKLIST_AGENT: "lead" } });
        await shop(lead.client);
        for (let i = 0; i < LIMITS.notesKept + 2; i++) {
          await ok(lead.client, "updateTask", { sessionId: "shop", id: "api", note: `finding ${i}` });
        }
        await ok(lead.client, "completeTask", { sessionId: "shop", id: "api", resolution: "API done" });
        await ok(lead.client, "completeTask", { sessionId: "shop", id: "web", resolution: "UI done" });
      }
      {
        await using http = await startHttp({ env });
        const api = await notesOf(http.client, "api");
        assert.equal(api.notes!.length, LIMITS.notesKept);
        assert.equal(api.notes_dropped, 2);
        assert.equal(api.notes![0]!.text, "finding 2");
        assert.equal(api.notes![0]!.agent, "lead");
        const claimed = await ok<{ context: TakeContext }>(http.client, "claimTask", {
          sessionId: "shop",
          agent: "tester",
        });
        assert.deepEqual(claimed.context.blockers!.map((b) => [b.id, b.resolution, b.last_note?.text]), [
          ["api", "API done", "finding 21"],
          ["web", "UI done", undefined],
        ]);
        await ok(http.client, "updateTask", {
          sessionId: "shop",
          id: "e2e",
          note: "flaky: checkout",
          agent: "tester",
        });
      }
      await using again = await spawnStdio({ env });
      assert.deepEqual((await notesOf(again.client, "e2e")).notes!.map((n) => [n.agent, n.text]), [
        ["tester", "flaky: checkout"],
      ]);
    });
  });
}
