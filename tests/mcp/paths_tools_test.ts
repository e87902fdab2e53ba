/**
 * Paths and reservations through a real SDK client (docs/teams.md "Paths and reservations"), in every
 * store and in both protocol eras: paths stored normalised and shown by getTask and listTasks, every
 * refusal (a bad pattern, too many, RESERVED) with its code and nothing changed, claimTask passing over
 * reserved leaves and listing them, and checkPaths.
 */
import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import { call, connectInMemory, fails, ok, textOf } from "../support/harness.ts";
import { STORE_KINDS } from "../support/store_places.ts";
import type { Client } from "../support/sdk_client.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** A parallel plan: `api` (src/api/, inherited by a1, a2), `users` (src/api/users.ts), `web`, `docs`. */
async function plan(client: Client): Promise<void> {
  await ok(client, "createTask", {
    id: "P",
    name: "Plan",
    parallel: true,
    tasks: [
      {
        id: "api",
        name: "API",
        parallel: true,
        paths: ["src/api/"],
        tasks: [{ id: "a1", name: "Routes" }, { id: "a2", name: "Schema" }],
      },
      { id: "users", name: "Users", paths: ["./src/api/users.ts"] },
      { id: "web", name: "Web", paths: ["src/web/**", "docs/web.md"] },
      { id: "docs", name: "Docs" },
    ],
  });
}

/** The session and its revision: what a refusal must leave as it was. */
async function state(client: Client) {
  const tree = await ok(client, "getTask", { id: "P" });
  const history = await ok(client, "task_history", {});
  return { tree: tree.task, revision: history.revision };
}

Deno.test("paths, RESERVED, claimTask's reserved list and checkPaths through a real client, in every store and both eras", async (t) => {
  for (const kind of STORE_KINDS) {
    for (const era of ["legacy", "modern"] as const) {
      await t.step(`${kind.name}, ${era === "legacy" ? "handshake era" : "2026-07-28"}`, async () => {
        const place = await kind.place();
        const store = await place.open();
        const now = () => T0;
        try {
          await using lead = await connectInMemory({ store, era, now });
          await using x = await connectInMemory({ store, era, now, agent: "x" });
          await plan(lead.client);
          const api = await ok<{ task: { paths: string[]; tasks: { paths?: string[] }[] } }>(
            lead.client,
            "getTask",
            { id: "api" },
          );
          assert.deepEqual(api.task.paths, ["src/api/**"], "stored normalised");
          const level = await call(lead.client, "listTasks", { parentId: "P" });
          const users = (level.structuredContent!.tasks as { id: string; paths?: string[] }[])
            .find((task) => task.id === "users");
          assert.deepEqual(users?.paths, ["src/api/users.ts"]);
          assert.match(textOf(level), /users: Users \(paths: src\/api\/users\.ts\)/);

          // x (the server's default agent on its connection) claims a1, reserving src/api/**.
          const claimed = await ok<{ task: { id: string }; message: string }>(x.client, "claimTask", {
            agent: "x",
          });
          assert.equal(claimed.task.id, "a1");
          assert.match(claimed.message, /Reserved for agent "x" while the lease is live: src\/api\/\*\*/);

          const refusals: [string, Record<string, unknown>, string, RegExp?][] = [
            [
              "startTask",
              { id: "users", agent: "y" },
              "RESERVED",
              /agent "x" reserves src\/api\/\*\* \(task "Routes" \(a1\), until 2026-01-01T00:30:00\.000Z\): overlaps src\/api\/users\.ts/,
            ],
            ["startTask", { id: "a2" }, "RESERVED"],
            ["updateTask", { id: "users", status: "in_progress", agent: "y" }, "RESERVED"],
            ["createTask", { name: "Bad", paths: ["src//x"] }, "INVALID_INPUT", /"src\/\/x"/],
            [
              "createTask",
              { name: "Bad", tasks: [{ name: "Nested", paths: ["../up"] }] },
              "INVALID_INPUT",
              /"\.\.\/up"/,
            ],
            ["updateTask", { id: "docs", paths: ["C:\\docs"] }, "INVALID_INPUT"],
            ["updateTask", {
              id: "docs",
              paths: Array.from({ length: LIMITS.pathsPerTask + 1 }, (_, i) => `f${i}`),
            }, "LIMIT_EXCEEDED"],
            ["updateTask", { id: "docs", paths: ["a".repeat(LIMITS.patternLength + 1)] }, "LIMIT_EXCEEDED"],
            ["updateTask", { id: "docs", paths: [""] }, "INVALID_INPUT"],
            ["updateTask", { id: "docs", paths: "src/" }, "INVALID_INPUT"],
          ];
          for (const [tool, args, code, message] of refusals) {
            const before = await state(lead.client);
            const text = await fails(lead.client, tool, args, code);
            if (message) assert.match(text, message, `${tool}: ${text}`);
            assert.deepEqual(
              await state(lead.client),
              before,
              `${tool} ${JSON.stringify(args)} changed something`,
            );
          }

          // y passes over a2 and users (both under src/api/) to web; z to docs; w finds nothing ready.
          assert.equal(
            (await ok<{ task: { id: string } }>(lead.client, "claimTask", { agent: "y" })).task.id,
            "web",
          );
          assert.equal(
            (await ok<{ task: { id: string } }>(lead.client, "claimTask", { agent: "z" })).task.id,
            "docs",
          );
          const waiting = await call(lead.client, "claimTask", { agent: "w" });
          const reply = waiting.structuredContent as {
            task: null;
            reserved: {
              id: string;
              conflicts: { id: string; agent: string; expires_at: string; pairs: string[][] }[];
            }[];
          };
          assert.equal(reply.task, null);
          assert.deepEqual(reply.reserved.map((r) => r.id), ["a2", "users"]);
          assert.deepEqual(reply.reserved[1]!.conflicts, [{
            id: "a1",
            agent: "x",
            expires_at: "2026-01-01T00:30:00.000Z",
            pairs: [["src/api/users.ts", "src/api/**"]],
          }]);
          assert.match(textOf(waiting), /users "Users": paths reserved by x/);

          // updateTask paths on a held leaf that would overlap another's reservation.
          await fails(lead.client, "updateTask", { id: "web", paths: ["src/"] }, "RESERVED");
          await ok(lead.client, "updateTask", { id: "web", paths: ["src/web/", "docs/web/"] });

          // checkPaths: all agents by default; `agent` leaves its own out; x's connection defaults to x.
          const asked = { paths: ["src/api/users.ts", "docs/web/index.md", "README.md"] };
          const all = await ok<
            { conflicts: { path: string; agent: string; task_id: string; pattern: string }[] }
          >(
            lead.client,
            "checkPaths",
            asked,
          );
          assert.deepEqual(all.conflicts.map((c) => [c.path, c.agent, c.task_id, c.pattern]), [
            ["src/api/users.ts", "x", "a1", "src/api/**"],
            ["docs/web/index.md", "y", "web", "docs/web/**"],
          ]);
          const notY = await ok<{ conflicts: { agent: string }[] }>(lead.client, "checkPaths", {
            ...asked,
            agent: "y",
          });
          assert.deepEqual(notY.conflicts.map((c) => c.agent), ["x"]);
          const fromX = await call(x.client, "checkPaths", asked);
          assert.deepEqual((fromX.structuredContent!.conflicts as { agent: string }[]).map((c) => c.agent), [
            "y",
          ]);
          assert.match(
            textOf(fromX),
            /docs\/web\/index\.md: agent "y" reserves docs\/web\/\*\* \(task "Web" \(web\)/,
          );
          const none = await call(lead.client, "checkPaths", { paths: ["README.md"], sessionId: "nobody" });
          assert.equal(textOf(none), "No live claim of another agent reserves this path.");
          await fails(lead.client, "checkPaths", { paths: [] }, "INVALID_INPUT");
          await fails(lead.client, "checkPaths", { paths: ["/etc/passwd"] }, "INVALID_INPUT");
          await fails(
            lead.client,
            "checkPaths",
            { paths: Array(LIMITS.pathsPerCheck + 1).fill("a") },
            "LIMIT_EXCEEDED",
          );

          // Completing x's leaf ends its reservation: the next claim takes a2.
          await ok(x.client, "completeTask", { id: "a1", resolution: "done" });
          assert.equal(
            (await ok<{ task: { id: string } }>(lead.client, "claimTask", { agent: "w" })).task.id,
            "a2",
          );
        } finally {
          await store.close();
          await place.cleanup();
        }
      });
    }
  }
});

Deno.test("checkPaths is read-only, idempotent and in group tasks", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const tool = tools.find((t) => t.name === "checkPaths")!;
  assert.deepEqual(
    { ...tool.annotations },
    { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  );
  await using checklistOnly = await connectInMemory({ groups: ["checklist"] });
  const names = (await checklistOnly.client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes("checkPaths"));
});
