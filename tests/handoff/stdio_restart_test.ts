/**
 * Handing over across real processes: `deno run -A main.ts --stdio` with a `FILE_PATH` in a temp
 * dir, stopped and started again (with a different `WORK_CACHE_SIZE`), finds its works and progress.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { ok, spawnStdio } from "../support/harness.ts";
import { recent, save } from "../support/handoff.ts";

Deno.test("works and progress survive a restart over stdio with FILE_PATH; a smaller capacity applies after it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "handoff-restart-" });
  const file = `${dir}/store.json`;
  try {
    let order: string[];
    let planWork: string;
    let snapshot: Task[];
    {
      await using first = await spawnStdio({ env: { FILE_PATH: file, WORK_CACHE_SIZE: "3" } });
      const { client } = first;
      assert.match(client.getInstructions() ?? "", /mem_progress/);
      const { task } = await ok<{ task: Task }>(client, "createTask", {
        sessionId: "plan",
        name: "Ship",
        tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }],
      });
      await ok(client, "startTask", { sessionId: "plan", id: task.id });
      snapshot = [(await ok<{ task: Task }>(client, "getTask", { sessionId: "plan", id: task.id })).task];
      const w1 = await save(client, "one");
      planWork = await save(client, "plan work", { sessionId: "plan", work_summarize: "A started; B next." });
      await save(client, "three");
      await save(client, "four"); // evicts "one"
      await ok(client, "get_work_by_id", { workId: planWork });
      await ok(client, "mem_progress", {
        project: "app",
        content: JSON.stringify({ goal: "Ship", completed: [], next_steps: ["A"], blockers: [] }),
        session_id: "plan",
      });
      order = (await recent(client)).map((w) => w.workId);
      assert.equal(order.length, 3);
      assert.equal(order[0], planWork);
      assert.ok(!order.includes(w1));
    }

    const onDisk = JSON.parse(await Deno.readTextFile(file));
    assert.equal(onDisk.works.length, 3, "the file holds the works");
    assert.equal(onDisk.progress.app.revision, 1, "the file holds the progress document");

    {
      await using second = await spawnStdio({ env: { FILE_PATH: file, WORK_CACHE_SIZE: "2" } });
      const { client } = second;
      assert.deepEqual(
        (await recent(client)).map((w) => w.workId),
        order.slice(0, 2),
        "at most 2 listed now",
      );
      const detail = await ok<{ work_summarize: string; work_tasks: Task[] }>(client, "get_work_by_id", {
        workId: planWork,
      });
      assert.equal(detail.work_summarize, "A started; B next.");
      assert.deepEqual(detail.work_tasks, snapshot);
      const progress = await ok<{ content: unknown; revision: number; session_id: string }>(
        client,
        "mem_progress",
        { project: "app" },
      );
      assert.deepEqual(progress.content, { goal: "Ship", completed: [], next_steps: ["A"], blockers: [] });
      assert.equal(progress.revision, 1);
      assert.equal(progress.session_id, "plan");
      const prompt = await client.getPrompt({ name: "resume", arguments: { project: "app" } });
      assert.match((prompt.messages[0]!.content as { text: string }).text, /A started; B next\./);
    }

    {
      await using third = await spawnStdio({ env: { FILE_PATH: file } });
      const works = await recent(third.client);
      assert.deepEqual(
        works.map((w) => w.workId),
        order.slice(0, 2),
        "the use at capacity 2 evicted the third",
      );
      const { resources } = await third.client.listResources();
      assert.ok(resources.some((r) => r.uri === `checklist://works/${planWork}`));
      assert.ok(resources.some((r) => r.uri === "checklist://progress/app"));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
