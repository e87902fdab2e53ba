/**
 * The original Checklist MCP tools end to end through a real client, and the task tools seeing the
 * same tree they change.
 */
import assert from "node:assert/strict";
import { call, connectInMemory, fails, ok, textOf } from "../support/harness.ts";

Deno.test("update_tasks replaces a level and get_all_tasks draws the tree exactly", async (t) => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const sessionId = "draw";

  await t.step("an empty session draws as no tasks", async () => {
    const empty = await ok<{ total_tasks: number; tree: string }>(client, "get_all_tasks", { sessionId });
    assert.equal(empty.total_tasks, 0);
    assert.equal(empty.tree, "(no tasks)");
  });

  await t.step("update_tasks at / reports how many tasks it updated, then the tree", async () => {
    const result = await call(client, "update_tasks", {
      sessionId,
      tasks: [
        {
          taskId: "plan",
          description: "Plan",
          children: [
            { taskId: "p1", description: "Design" },
            { taskId: "p2", description: "Build", status: "DONE" },
          ],
        },
        { taskId: "ship", description: "Ship" },
      ],
    });
    assert.ok(!result.isError, textOf(result));
    assert.ok(textOf(result).startsWith("Successfully updated 4 tasks"), textOf(result));
    const expected = [
      "├── ○ plan: Plan",
      "│   ├── ○ p1: Design",
      "│   └── ✓ p2: Build",
      "└── ○ ship: Ship",
    ].join("\n");
    assert.deepEqual(result.structuredContent, { sessionId, updated: 4, tree: expected, revision: 1 });
    assert.ok(textOf(result).endsWith(expected));
  });

  await t.step("update_tasks at /ship/ fills one level below", async () => {
    const result = await call(client, "update_tasks", {
      sessionId,
      path: "/ship/",
      tasks: [{ taskId: "s1", description: "Tag" }, { taskId: "s2", description: "Announce" }],
    });
    assert.ok(textOf(result).startsWith("Successfully updated 2 tasks"), textOf(result));
    const all = await call(client, "get_all_tasks", { sessionId });
    const expected = [
      "├── ○ plan: Plan",
      "│   ├── ○ p1: Design",
      "│   └── ✓ p2: Build",
      "└── ○ ship: Ship",
      "    ├── ○ s1: Tag",
      "    └── ○ s2: Announce",
    ].join("\n");
    assert.equal(textOf(all), expected);
    assert.deepEqual(all.structuredContent, { sessionId, total_tasks: 6, tree: expected });
  });

  await t.step("a task in progress is drawn ◐ with its ancestors", async () => {
    await ok(client, "startTask", { sessionId, id: "p1" });
    const { tree } = await ok<{ tree: string }>(client, "get_all_tasks", { sessionId });
    assert.equal(
      tree,
      [
        "├── ◐ plan: Plan",
        "│   ├── ◐ p1: Design",
        "│   └── ✓ p2: Build",
        "└── ○ ship: Ship",
        "    ├── ○ s1: Tag",
        "    └── ○ s2: Announce",
      ].join("\n"),
    );
  });

  await t.step("update_tasks at a path that does not exist is NOT_FOUND and changes nothing", async () => {
    const before = await ok(client, "get_all_tasks", { sessionId });
    await fails(client, "update_tasks", { sessionId, path: "/nope/", tasks: [] }, "NOT_FOUND");
    await fails(client, "update_tasks", { sessionId, path: "/s1/", tasks: [] }, "NOT_FOUND");
    await fails(
      client,
      "update_tasks",
      { sessionId, tasks: [{ taskId: "x", description: "X" }, { taskId: "x", description: "again" }] },
      "DUPLICATE_ID",
    );
    await fails(client, "update_tasks", { sessionId, path: "no-slash", tasks: [] }, "INVALID_INPUT");
    await fails(client, "update_tasks", { sessionId, tasks: [{ taskId: "x" }] }, "INVALID_INPUT");
    assert.deepEqual(await ok(client, "get_all_tasks", { sessionId }), before);
  });
});

Deno.test("mark_task_as_done reports which ids were marked and which failed, and why", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const sessionId = "mark";
  await ok(client, "update_tasks", {
    sessionId,
    tasks: [
      { taskId: "plan", description: "Plan", children: [{ taskId: "p1", description: "Design" }] },
      { taskId: "ship", description: "Ship" },
    ],
  });

  const result = await call(client, "mark_task_as_done", { sessionId, taskIds: ["plan", "p1", "nope"] });
  assert.ok(!result.isError, textOf(result));
  const structured = result.structuredContent as {
    marked: string[];
    failed: { taskId: string; code: string; reason: string }[];
    tree: string;
  };
  assert.deepEqual(structured.marked, ["p1"]);
  assert.deepEqual(structured.failed.map((f) => [f.taskId, f.code]), [
    ["plan", "UNFINISHED_SUBTASKS"],
    ["nope", "NOT_FOUND"],
  ]);
  assert.match(structured.failed[0]!.reason, /p1/, "the reason names the unfinished subtask");
  const text = textOf(result);
  assert.match(text, /Marked done: p1/);
  assert.match(text, /Failed plan: .*p1/);
  assert.match(text, /Failed nope: /);
  const expected = ["├── ✓ plan: Plan", "│   └── ✓ p1: Design", "└── ○ ship: Ship"].join("\n");
  assert.equal(structured.tree, expected, "plan completed itself when its last subtask was marked");
  assert.ok(text.endsWith(expected));

  const again = await ok<{ marked: string[]; failed: unknown[] }>(client, "mark_task_as_done", {
    sessionId,
    taskIds: ["plan"],
  });
  assert.deepEqual(again.marked, ["plan"], "a parent whose subtasks are done can be marked");
  assert.deepEqual(again.failed, []);

  const before = await ok(client, "get_all_tasks", { sessionId });
  const message = await fails(client, "mark_task_as_done", { sessionId, taskIds: ["nope"] }, "NOT_FOUND");
  assert.match(message, /nope/);
  await fails(client, "mark_task_as_done", { sessionId, taskIds: [] }, "INVALID_INPUT");
  assert.deepEqual(await ok(client, "get_all_tasks", { sessionId }), before);
});

Deno.test("the checklist tools and the task tools share one tree", async (t) => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const sessionId = "shared";

  await t.step("tasks created with createTask appear in get_all_tasks", async () => {
    await ok(client, "createTask", {
      sessionId,
      name: "Root",
      tasks: [
        { id: "r1", name: "First", completion_criteria: ["reviewed"] },
        { id: "r2", name: "Second" },
      ],
    });
    const roots = await ok<{ tasks: { id: string }[] }>(client, "listTasks", { sessionId });
    const rootId = roots.tasks[0]!.id;
    const { tree } = await ok<{ tree: string }>(client, "get_all_tasks", { sessionId });
    assert.equal(tree, [`└── ○ ${rootId}: Root`, "    ├── ○ r1: First", "    └── ○ r2: Second"].join("\n"));
  });

  await t.step("update_tasks keeps an existing task's other fields", async () => {
    const [root] = (await ok<{ tasks: { id: string }[] }>(client, "listTasks", { sessionId })).tasks;
    await ok(client, "updateTask", { sessionId, id: "r1", description: "the details", resolution: "n/a" });
    const result = await call(client, "update_tasks", {
      sessionId,
      path: `/${root!.id}/`,
      tasks: [
        { taskId: "r1", description: "First, renamed" },
        { taskId: "r3", description: "Third" },
      ],
    });
    assert.ok(textOf(result).startsWith("Successfully updated 2 tasks"), textOf(result));
    const { task } = await ok<{ task: Record<string, unknown> }>(client, "getTask", { sessionId, id: "r1" });
    assert.equal(task.name, "First, renamed");
    assert.equal(task.description, "the details");
    assert.equal(task.resolution, "n/a");
    assert.deepEqual(task.completion_criteria, ["reviewed"]);
    await fails(client, "getTask", { sessionId, id: "r2" }, "NOT_FOUND");
  });

  await t.step("mark_task_as_done completes what completeTask sees, and the reverse", async () => {
    const [root] = (await ok<{ tasks: { id: string }[] }>(client, "listTasks", { sessionId })).tasks;
    await ok(client, "mark_task_as_done", { sessionId, taskIds: ["r1"] });
    assert.equal(
      (await ok<{ task: { status: string } }>(client, "getTask", { sessionId, id: "r1" })).task.status,
      "done",
    );
    await ok(client, "startTask", { sessionId, id: "r3" });
    const done = await ok<{ message: string }>(client, "completeTask", {
      sessionId,
      id: "r3",
      resolution: "ok",
    });
    assert.match(done.message, /All tasks are complete/);
    const { tree } = await ok<{ tree: string }>(client, "get_all_tasks", { sessionId });
    assert.equal(
      tree,
      [`└── ✓ ${root!.id}: Root`, "    ├── ✓ r1: First, renamed", "    └── ✓ r3: Third"].join("\n"),
    );
  });
});
