/**
 * Teams of agents through a real SDK client (docs/teams.md): every refusal (CLAIMED from
 * every tool that changes a held leaf, the checklist tools included; blockers; cycles; unknown ids; a
 * bad agent name; a bad lease) returns its code and changes nothing, in every store; a renewal is
 * written durably without a revision; the server's default agent (`CHECKLIST_AGENT`) is used by
 * tools without `agent`, and its clock decides leases.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../lib/config.ts";
import { connectInMemory, type Connection, fails, ok } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";
import { STORE_KINDS } from "../support/store_places.ts";
import type { Store } from "../../lib/store/store.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** A clock the test moves. */
function clock() {
  let now = T0;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/** A parallel plan: P (parallel) with a, b, c, where c waits for a; then S with s1. */
async function plan(client: Client): Promise<void> {
  await ok(client, "createTask", {
    id: "P",
    name: "Build",
    parallel: true,
    tasks: [
      { id: "a", name: "API" },
      { id: "b", name: "UI" },
      { id: "c", name: "Docs", blocked_by: ["a"] },
    ],
  });
  await ok(client, "createTask", { id: "S", name: "Ship", tasks: [{ id: "s1", name: "Release" }] });
}

/** What a refusal must leave as it was: the whole session and its revision. */
async function state(client: Client) {
  const tree = await ok(client, "getTask", { id: "P" });
  const history = await ok(client, "task_history", {});
  const checklist = await ok(client, "get_all_tasks", { sessionId: "default" });
  return { tree: tree.task, revision: history.revision, checklist: checklist.tree };
}

Deno.test("every team refusal returns its code through a real client and changes nothing, in every store", async (t) => {
  for (const kind of STORE_KINDS) {
    await t.step(kind.name, async () => {
      const place = await kind.place();
      const store: Store = await place.open();
      const time = clock();
      try {
        await using x = await connectInMemory({ store, agent: "x", now: time.now });
        await using anon = await connectInMemory({ store, now: time.now });
        await plan(x.client);
        await ok(x.client, "claimTask", { agent: "x" });
        time.advance(60_000);
        const refusals: [Connection, string, Record<string, unknown>, string][] = [
          [anon, "startTask", { id: "a", agent: "y" }, "CLAIMED"],
          [anon, "startTask", { id: "a" }, "CLAIMED"],
          [anon, "completeTask", { id: "a", resolution: "r", agent: "y" }, "CLAIMED"],
          [anon, "updateTask", { id: "a", status: "todo", agent: "y" }, "CLAIMED"],
          [anon, "updateTask", { id: "a", status: "done" }, "CLAIMED"],
          [anon, "deleteTask", { id: "a" }, "CLAIMED"],
          [anon, "deleteTask", { id: "P" }, "CLAIMED"],
          [anon, "update_tasks", {
            sessionId: "default",
            path: "/P/",
            tasks: [{ taskId: "b", description: "UI" }],
          }, "CLAIMED"],
          [anon, "mark_task_as_done", { sessionId: "default", taskIds: ["a"] }, "CLAIMED"],
          [anon, "restore_tasks", { revision: 1 }, "CLAIMED"],
          [anon, "startTask", { id: "c", agent: "y" }, "EXECUTION_ORDER_VIOLATION"],
          [anon, "startTask", { id: "s1", agent: "y" }, "EXECUTION_ORDER_VIOLATION"],
          [anon, "updateTask", { id: "a", blocked_by: ["c"] }, "INVALID_INPUT"],
          [anon, "updateTask", { id: "b", blocked_by: ["b"] }, "INVALID_INPUT"],
          [anon, "updateTask", { id: "b", blocked_by: ["P"] }, "INVALID_INPUT"],
          [anon, "updateTask", { id: "P", blocked_by: ["b"] }, "INVALID_INPUT"],
          [anon, "updateTask", { id: "b", blocked_by: ["nope"] }, "NOT_FOUND"],
          [anon, "createTask", { name: "X", blocked_by: ["nope"] }, "NOT_FOUND"],
          [anon, "claimTask", { agent: "y", id: "nope" }, "NOT_FOUND"],
          [anon, "claimTask", { agent: "<img onerror=x>" }, "INVALID_INPUT"],
          [anon, "claimTask", { agent: "" }, "INVALID_INPUT"],
          [anon, "claimTask", { agent: "a".repeat(65) }, "INVALID_INPUT"],
          [anon, "claimTask", {}, "INVALID_INPUT"],
          [anon, "startTask", { id: "b", agent: "bad name" }, "INVALID_INPUT"],
          [anon, "completeTask", { id: "b", resolution: "r", agent: "x/y" }, "INVALID_INPUT"],
          [anon, "claimTask", { agent: "y", lease_seconds: 0 }, "INVALID_INPUT"],
          [anon, "claimTask", { agent: "y", lease_seconds: 86_401 }, "LIMIT_EXCEEDED"],
          [anon, "startTask", { id: "b", agent: "y", lease_seconds: 1.5 }, "INVALID_INPUT"],
        ];
        for (const [conn, tool, args, code] of refusals) {
          const before = await state(x.client);
          const message = await fails(conn.client, tool, args, code);
          if (code === "CLAIMED") {
            assert.match(message, /agent "x" holds (it|"API" \(a\) inside it) until/, `${tool}: ${message}`);
          }
          assert.doesNotMatch(message, /\.\./, `${tool}: one full stop ends each sentence: ${message}`);
          assert.deepEqual(
            await state(x.client),
            before,
            `${tool} ${JSON.stringify(args)} changed something`,
          );
        }
        // The holder may do all of it.
        await ok(x.client, "completeTask", { id: "a", resolution: "done" });
      } finally {
        await store.close();
        await place.cleanup();
      }
    });
  }
});

Deno.test("claimTask: two agents get two leaves; the holder's call renews the lease durably without a revision; nothing ready is an answer", async (t) => {
  for (const kind of STORE_KINDS) {
    await t.step(kind.name, async () => {
      const place = await kind.place();
      let store: Store = await place.open();
      const time = clock();
      try {
        {
          await using lead = await connectInMemory({ store, now: time.now });
          await plan(lead.client);
          const x = await ok(lead.client, "claimTask", { agent: "x" });
          const y = await ok(lead.client, "claimTask", { agent: "y", lease_seconds: 60 });
          assert.equal((x.task as { id: string }).id, "a");
          assert.equal((y.task as { id: string }).id, "b");
          assert.deepEqual(y.claim, {
            agent: "y",
            since: new Date(T0).toISOString(),
            expires_at: new Date(T0 + 60_000).toISOString(),
          });
          const tree =
            (await ok<{ tree: string }>(lead.client, "get_all_tasks", { sessionId: "default" })).tree;
          assert.match(tree, /◐ a: API @x/);
          assert.match(tree, /○ c: Docs \(blocked by a\)/);
          const { revision } = await ok<{ revision: number }>(lead.client, "task_history", {});
          time.advance(30_000);
          const again = await ok(lead.client, "claimTask", { agent: "y", lease_seconds: 60 });
          assert.equal(again.renewed, true);
          assert.equal(again.revision, revision, "a renewal adds no revision");
          assert.equal(
            (again.claim as { expires_at: string }).expires_at,
            new Date(T0 + 90_000).toISOString(),
          );
          assert.equal((await ok<{ revision: number }>(lead.client, "task_history", {})).revision, revision);
          const none = await ok(lead.client, "claimTask", { agent: "z" });
          assert.equal(none.task, null);
          assert.deepEqual((none.waiting_on as { id: string }[]).map((w) => w.id), ["a", "b"]);
          assert.deepEqual(none.blocked, [{ id: "c", name: "Docs", blocked_by: ["a"] }]);
        }
        if (kind.durable) {
          await store.close();
          store = await place.open();
        }
        await using later = await connectInMemory({ store, now: time.now });
        const b = await ok<{ task: { claim: { expires_at: string } } }>(later.client, "getTask", { id: "b" });
        assert.equal(b.task.claim.expires_at, new Date(T0 + 90_000).toISOString(), "the renewal was written");
        // Past y's lease, z takes b over, with a revision of its own.
        time.advance(61_000);
        const over = await ok(later.client, "claimTask", { agent: "z" });
        assert.equal((over.task as { id: string }).id, "b");
        assert.equal(over.taken_over_from, "y");
      } finally {
        await store.close();
        await place.cleanup();
      }
    });
  }
});

Deno.test("CHECKLIST_AGENT is the agent of calls without one, checklist tools included; an invalid one is refused by the config", async () => {
  assert.equal(loadConfig({ CHECKLIST_AGENT: "backend" }).agent, "backend");
  assert.equal(loadConfig({}, ["--agent", "ui.2"]).agent, "ui.2");
  assert.equal(loadConfig({}).agent, undefined);
  for (const bad of ["a b", "<img>", "x".repeat(65), "a/b"]) {
    assert.throws(() => loadConfig({ CHECKLIST_AGENT: bad }), /CHECKLIST_AGENT: an agent name is 1-64/);
  }
  const time = clock();
  await using backend = await connectInMemory({ agent: "backend", now: time.now });
  await using ui = await connectInMemory({ store: backend.store, agent: "ui", now: time.now });
  await plan(backend.client);
  const started = await ok<{ task: { claim: { agent: string } } }>(backend.client, "startTask", { id: "a" });
  assert.equal(started.task.claim.agent, "backend");
  await fails(ui.client, "mark_task_as_done", { sessionId: "default", taskIds: ["a"] }, "CLAIMED");
  await ok(ui.client, "startTask", { id: "b" });
  const table = (await ok<{ progress_summary: { table: string } }>(ui.client, "completeTask", {
    id: "b",
    resolution: "built",
  })).progress_summary.table;
  assert.match(table, /\| Status \| Agent \|/);
  assert.match(table, /\| \. API \| a \| P \| in_progress \| backend \|/);
  const listed = await ok<{ tasks: { id: string; claim?: { agent: string } }[] }>(ui.client, "listTasks", {
    parentId: "P",
  });
  assert.equal(listed.tasks.find((task) => task.id === "a")?.claim?.agent, "backend");
});

Deno.test("deleteTask frees the tasks that waited for the deleted one and says so", async () => {
  await using conn = await connectInMemory();
  await plan(conn.client);
  const deleted = await ok<{ freed: string[] }>(conn.client, "deleteTask", { id: "a" });
  assert.deepEqual(deleted.freed, ["c"]);
  const c = await ok<{ task: { blocked_by?: string[] } }>(conn.client, "getTask", { id: "c" });
  assert.equal(c.task.blocked_by, undefined);
});
