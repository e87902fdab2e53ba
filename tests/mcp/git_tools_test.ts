/**
 * The task tools recording where the work lives (docs/teams.md "Where the work lives"), through a real
 * client, with a real recorder on a real repository: a take, a renewal (no revision), a note and a
 * completion record `git`; a claim that takes nothing, the anonymous agent, a note on another agent's
 * task and a server without a recorder record nothing; getTask shows it in a line. Real processes, HTTP
 * and the failures of git are in tests/e2e/git_record_e2e_test.ts.
 */
import assert from "node:assert/strict";
import type { GitRecord } from "../../lib/domain/schemas.ts";
import { createGitRecorder } from "../../lib/git/git_recorder.ts";
import { call, connectInMemory, ok, textOf } from "../support/harness.ts";
import { gitPlace, type Repo } from "../support/git_repos.ts";
import { quietLogger } from "../support/logs.ts";
import type { Client } from "../support/sdk_client.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

async function gitOf(client: Client, id: string): Promise<GitRecord | undefined> {
  const { task } = await ok<{ task: { git?: GitRecord } }>(client, "getTask", { id });
  return task.git;
}

/** A repository with one commit on `main`, and a server recording it, on a clock the test moves. */
async function setUp(repo: Repo) {
  await repo.write("README.md", "hello\n");
  const head = await repo.commit("init");
  let now = T0;
  const conn = await connectInMemory({
    now: () => now,
    readGit: createGitRecorder({ dir: repo.dir, log: quietLogger() }),
  });
  await ok(conn.client, "createTask", {
    id: "p",
    name: "Plan",
    parallel: true,
    tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }],
  });
  return { conn, head, advance: (ms: number) => void (now += ms) };
}

Deno.test("claim, renewal, note and completion record where the work lives; a renewal adds no revision", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const { conn, head, advance } = await setUp(repo);
  await using _conn = conn;
  const { client } = conn;
  const taken = await ok<{ revision: number }>(client, "claimTask", { agent: "w1" });
  assert.deepEqual(await gitOf(client, "a"), {
    agent: "w1",
    at: new Date(T0).toISOString(),
    worktree: repo.dir,
    branch: "main",
    head,
    dirty_count: 0,
  });
  await repo.write("src/a.ts", "a\n");
  advance(60_000);
  const renewed = await ok<{ revision: number; renewed: boolean }>(client, "claimTask", { agent: "w1" });
  assert.equal(renewed.renewed, true);
  assert.equal(renewed.revision, taken.revision, "a renewal adds no revision");
  assert.deepEqual((await gitOf(client, "a"))?.dirty, ["src/"]);
  assert.equal((await gitOf(client, "a"))?.at, new Date(T0 + 60_000).toISOString());
  await repo.write("README.md", "changed\n");
  advance(1000);
  const noted = await ok<{ revision: number }>(client, "updateTask", {
    id: "a",
    note: "halfway",
    agent: "w1",
  });
  assert.equal(noted.revision, taken.revision + 1);
  assert.deepEqual((await gitOf(client, "a"))?.dirty, ["README.md", "src/"]);
  const text = textOf(await call(client, "getTask", { id: "a" }));
  assert.match(
    text,
    new RegExp(
      `^Work: main@${
        head.slice(0, 7)
      } in ${repo.dir}, 2 dirty \\(seen by w1 at 2026-01-01T00:01:01\\.000Z\\)$`,
      "m",
    ),
  );
  const committed = await repo.commit("work");
  advance(1000);
  await ok(client, "completeTask", { id: "a", resolution: "done", agent: "w1" });
  const done = await gitOf(client, "a");
  assert.equal(done?.head, committed);
  assert.equal(done?.dirty_count, 0);
  assert.equal(done?.at, new Date(T0 + 62_000).toISOString());
  const history = await ok<{ entries: { summary: string }[] }>(client, "task_history", {
    sessionId: "default",
  });
  assert.deepEqual(history.entries.map((e) => e.summary).slice(0, 2), [
    `changed 2: "A" done, "Plan" todo`,
    `note on "A" by w1`,
  ]);
});

Deno.test("updateTask by status records the take and the completion, on the leaf a parent start reached", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const { conn } = await setUp(repo);
  await using _conn = conn;
  const { client } = conn;
  await ok(client, "updateTask", { id: "p", status: "in_progress", agent: "w1" });
  assert.equal((await gitOf(client, "a"))?.agent, "w1", "the leaf the parent's start reached");
  assert.equal(await gitOf(client, "p"), undefined);
  await ok(client, "updateTask", { id: "b", status: "done", resolution: "r", agent: "w2" });
  assert.equal((await gitOf(client, "b"))?.agent, "w2");
});

Deno.test("nothing is recorded for a claim that takes nothing, the anonymous agent, a note on another's task, or a server without a recorder", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const { conn } = await setUp(repo);
  await using _conn = conn;
  const { client } = conn;
  await ok(client, "startTask", { id: "a" });
  assert.equal(await gitOf(client, "a"), undefined, "the anonymous agent");
  await ok(client, "claimTask", { agent: "w1" });
  const before = await gitOf(client, "b");
  assert.equal(before?.agent, "w1");
  const none = await ok<{ task: null }>(client, "claimTask", { agent: "w2" });
  assert.equal(none.task, null, "nothing ready for w2");
  await ok(client, "updateTask", { id: "b", note: "looks good", agent: "lead" });
  assert.deepEqual(await gitOf(client, "b"), before, "the lead's note leaves w1's record");
  await using http = await connectInMemory({ store: conn.store });
  await ok(http.client, "completeTask", { id: "b", resolution: "r", agent: "w1" });
  assert.deepEqual(await gitOf(http.client, "b"), before, "a server without a recorder records nothing");
});
