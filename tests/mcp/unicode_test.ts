/**
 * Well-formed Unicode (contract "Failures, limits and hostile input"): a string holding a lone
 * surrogate, in any argument of any tool (nested ones, object keys and strings inside mem_progress's
 * JSON text included), is `INVALID_INPUT` naming the field, through a real SDK client, in every store,
 * and nothing is stored. `q\ufffd`, a legitimate name, stays its own session.
 */
import assert from "node:assert/strict";
import { call, connectInMemory, fails, ok, spawnStdio, startHttp } from "../support/harness.ts";
import { STORE_KINDS } from "../support/store_places.ts";

const LONE = "\ud800";

/** A tool, arguments holding one lone surrogate, and the field the refusal must name. */
interface Case {
  tool: string;
  args: Record<string, unknown>;
  field: string;
}

const CASES: Case[] = [
  { tool: "createTask", args: { sessionId: `q${LONE}`, name: "a" }, field: "`sessionId`" },
  { tool: "createTask", args: { sessionId: "q\udbff", name: "a" }, field: "`sessionId`" },
  { tool: "createTask", args: { sessionId: "s", id: "\ud801", name: "a" }, field: "`id`" },
  { tool: "createTask", args: { sessionId: "s", name: `a${LONE}` }, field: "`name`" },
  { tool: "createTask", args: { sessionId: "s", name: "a", description: "\udc00x" }, field: "`description`" },
  {
    tool: "createTask",
    args: { sessionId: "s", name: "a", completion_criteria: ["ok", `c${LONE}`] },
    field: "`completion_criteria[1]`",
  },
  {
    tool: "createTask",
    args: { sessionId: "s", name: "a", tasks: [{ name: "b", tasks: [{ name: `deep${LONE}` }] }] },
    field: "`tasks[0].tasks[0].name`",
  },
  { tool: "createTask", args: { sessionId: "s", name: "a", [`k${LONE}`]: 1 }, field: "`k\\ud800`" },
  { tool: "getTask", args: { sessionId: "s", id: `a${LONE}` }, field: "`id`" },
  { tool: "listTasks", args: { sessionId: `s${LONE}` }, field: "`sessionId`" },
  { tool: "updateTask", args: { sessionId: "s", id: "a", resolution: `r${LONE}` }, field: "`resolution`" },
  { tool: "updateTask", args: { sessionId: "s", id: "a", constraints: [LONE] }, field: "`constraints[0]`" },
  { tool: "deleteTask", args: { sessionId: "s", id: LONE }, field: "`id`" },
  { tool: "startTask", args: { sessionId: "s", id: LONE }, field: "`id`" },
  { tool: "completeTask", args: { sessionId: "s", id: "a", resolution: LONE }, field: "`resolution`" },
  {
    tool: "update_tasks",
    args: {
      sessionId: "s",
      tasks: [{ taskId: "x", description: "y", children: [{ taskId: LONE, description: "z" }] }],
    },
    field: "`tasks[0].children[0].taskId`",
  },
  { tool: "get_all_tasks", args: { sessionId: LONE }, field: "`sessionId`" },
  { tool: "mark_task_as_done", args: { sessionId: "s", taskIds: ["a", LONE] }, field: "`taskIds[1]`" },
  {
    tool: "save_current_work_info",
    args: { work_summarize: LONE, work_description: "d" },
    field: "`work_summarize`",
  },
  {
    tool: "save_current_work_info",
    args: { work_summarize: "s", work_description: "d", sessionId: `x${LONE}` },
    field: "`sessionId`",
  },
  { tool: "get_work_by_id", args: { workId: `1234567${LONE}` }, field: "`workId`" },
  { tool: "mem_progress", args: { project: `p${LONE}` }, field: "`project`" },
  { tool: "mem_progress", args: { project: "p", content: `{"goal":"${LONE}"}` }, field: "`content`" },
  {
    tool: "mem_progress",
    args: { project: "p", content: '{"goal":"g","completed":["ok","\\ud800"]}' },
    field: "`content.completed[1]`",
  },
  { tool: "mem_progress", args: { project: "p", content: '{"\\udfff":1}' }, field: "`content.\\udfff`" },
  { tool: "mem_progress", args: { project: "p", content: "{}", session_id: LONE }, field: "`session_id`" },
  { tool: "task_history", args: { sessionId: LONE }, field: "`sessionId`" },
  { tool: "restore_tasks", args: { sessionId: LONE, revision: 0 }, field: "`sessionId`" },
];

for (const kind of STORE_KINDS) {
  Deno.test(`${kind.name} store: a lone surrogate in any argument of any tool is INVALID_INPUT naming the field, and nothing is stored`, async (t) => {
    const place = await kind.place();
    const store = await place.open();
    try {
      await using conn = await connectInMemory({ store });
      await ok(conn.client, "createTask", { sessionId: "s", id: "a", name: "A" });
      await ok(conn.client, "mem_progress", { project: "p", content: '{"goal":"g"}' });
      const before = await store.exportDocument();
      for (const c of CASES) {
        await t.step(`${c.tool} ${c.field}`, async () => {
          const message = await fails(conn.client, c.tool, c.args, "INVALID_INPUT");
          assert.ok(message.includes(c.field), `${message} should name ${c.field}`);
          assert.match(message, /lone surrogate \(U\+D[89A-F][0-9A-F]{2}\)/);
          assert.ok(message.isWellFormed(), "the message itself is well-formed");
        });
      }
      assert.deepEqual(await store.exportDocument(), before);
    } finally {
      await store.close();
      await place.cleanup();
    }
  });

  Deno.test(`${kind.name} store: sessions q\\ud800 and q\\udbff are refused, q\\ufffd is its own, and project p\\ud800 cannot read p\\udbff`, async () => {
    const place = await kind.place();
    const store = await place.open();
    try {
      await using conn = await connectInMemory({ store });
      await ok(conn.client, "createTask", { sessionId: "q\ufffd", id: "mine", name: "Mine" });
      await fails(conn.client, "createTask", { sessionId: "q\ud800", id: "x", name: "X" }, "INVALID_INPUT");
      await fails(conn.client, "listTasks", { sessionId: "q\udbff" }, "INVALID_INPUT");
      await fails(
        conn.client,
        "mem_progress",
        { project: "p\udbff", content: '{"goal":"secret"}' },
        "INVALID_INPUT",
      );
      await fails(conn.client, "mem_progress", { project: "p\ud800" }, "INVALID_INPUT");
      assert.deepEqual(await store.space("default").listSessions(), ["q\ufffd"]);
      assert.deepEqual(await store.space("default").listProjects(), []);
      const listed = await ok<{ tasks: { id: string }[] }>(conn.client, "listTasks", {
        sessionId: "q\ufffd",
      });
      assert.deepEqual(listed.tasks.map((task) => task.id), ["mine"]);
      // A paired surrogate (an emoji) is well-formed and accepted.
      await ok(conn.client, "createTask", { sessionId: "q\ud83d\ude00", id: "e", name: "\ud83d\ude00" });
      const result = await call(conn.client, "getTask", { sessionId: "q\ud83d\ude00", id: "e" });
      assert.equal(result.isError, undefined);
    } finally {
      await store.close();
      await place.cleanup();
    }
  });
}

Deno.test("the resume prompt refuses a sessionId or project holding a lone surrogate", async () => {
  await using conn = await connectInMemory();
  for (const args of [{ sessionId: "q\ud800" }, { project: "p\udbff" }] as Record<string, string>[]) {
    await assert.rejects(conn.client.getPrompt({ name: "resume", arguments: args }), /lone surrogate/);
  }
  const prompt = await conn.client.getPrompt({ name: "resume", arguments: { sessionId: "q\ufffd" } });
  assert.ok(prompt.messages.length > 0);
});

Deno.test("over stdio (KV) and HTTP (JSON file), a lone surrogate sent as a JSON escape is refused the same way", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-unicode-" });
  try {
    const transports = [
      ["stdio, KV", () => spawnStdio({ env: { KV_PATH: `${dir}/store.sqlite` } })],
      ["HTTP, JSON file", () => startHttp({ env: { FILE_PATH: `${dir}/store.json` } })],
    ] as const;
    for (const [name, connect] of transports) {
      await t.step(name, async () => {
        await using conn = await connect();
        const message = await fails(
          conn.client,
          "createTask",
          { sessionId: "q\ud800", name: "X" },
          "INVALID_INPUT",
        );
        assert.match(message, /`sessionId` holds a lone surrogate \(U\+D800\)/);
        await fails(
          conn.client,
          "mem_progress",
          { project: "p", content: '{"goal":"\\udbff"}' },
          "INVALID_INPUT",
        );
        await ok(conn.client, "createTask", { sessionId: "q\ufffd", id: "mine", name: "Mine" });
        const other = await call(conn.client, "listTasks", { sessionId: "q\udbff" });
        assert.equal(other.isError, true);
        const mine = await ok<{ tasks: { id: string }[] }>(conn.client, "listTasks", {
          sessionId: "q\ufffd",
        });
        assert.deepEqual(mine.tasks.map((task) => task.id), ["mine"]);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
