/**
 * Teams of agents through real stdio processes (docs/teams.md): a lead and two workers,
 * each its own server process with its own `CHECKLIST_AGENT`, on one FILE_PATH. The workers claim
 * different leaves of a parallel parent, cannot touch each other's, and the lead sees who holds what.
 * An invalid `CHECKLIST_AGENT` stops the server at start with one line.
 */
import assert from "node:assert/strict";
import { fails, ok, spawnStdio, startHttp } from "../support/harness.ts";
import { runMain } from "../support/server_process.ts";

Deno.test("two agents on one session over stdio, one file store: each claims a different leaf of a parallel parent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-team-" });
  try {
    const env = { FILE_PATH: `${dir}/store.json` };
    await using lead = await spawnStdio({ env });
    await using backend = await spawnStdio({ env: { ...env, CHECKLIST_AGENT: "backend" } });
    await using ui = await spawnStdio({ env, args: ["--agent", "ui"] });
    await ok(lead.client, "createTask", {
      sessionId: "app",
      id: "build",
      name: "Build the app",
      parallel: true,
      tasks: [
        { id: "api", name: "Build API" },
        { id: "web", name: "Build UI" },
        { id: "e2e", name: "End-to-end test", blocked_by: ["api", "web"] },
      ],
    });
    const [b, u] = await Promise.all([
      ok<{ task: { id: string }; claim: { agent: string } }>(backend.client, "claimTask", {
        sessionId: "app",
        agent: "backend",
      }),
      ok<{ task: { id: string }; claim: { agent: string } }>(ui.client, "claimTask", {
        sessionId: "app",
        agent: "ui",
      }),
    ]);
    assert.notEqual(b.task.id, u.task.id, "two calls never take the same leaf");
    assert.deepEqual([b.task.id, u.task.id].sort(), ["api", "web"]);
    assert.equal(b.claim.agent, "backend");
    assert.equal(u.claim.agent, "ui");
    // Neither may finish the other's leaf; each finishes its own (agent from CHECKLIST_AGENT / --agent).
    await fails(ui.client, "completeTask", { sessionId: "app", id: b.task.id, resolution: "x" }, "CLAIMED");
    const tree = (await ok<{ tree: string }>(lead.client, "get_all_tasks", { sessionId: "app" })).tree;
    assert.match(tree, new RegExp(`◐ ${b.task.id}: .* @backend`));
    assert.match(tree, new RegExp(`◐ ${u.task.id}: .* @ui`));
    assert.match(tree, /○ e2e: End-to-end test \(blocked by api, web\)/);
    await ok(backend.client, "completeTask", { sessionId: "app", id: b.task.id, resolution: "done" });
    const last = await ok<{ next_task_id?: string }>(ui.client, "completeTask", {
      sessionId: "app",
      id: u.task.id,
      resolution: "done",
    });
    assert.equal(last.next_task_id, "e2e", "both blockers done: e2e is ready");
    const e2e = await ok<{ task: { id: string } }>(backend.client, "claimTask", {
      sessionId: "app",
      agent: "backend",
    });
    assert.equal(e2e.task.id, "e2e");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an invalid CHECKLIST_AGENT or --agent stops the stdio server at start with one clear line, exit code 1", async (t) => {
  for (
    const [label, options] of [
      ["CHECKLIST_AGENT with markup", { env: { CHECKLIST_AGENT: "<img onerror=x>" } }],
      ["--agent with a space", { args: ["--agent", "a b"] }],
    ] as [string, { env?: Record<string, string>; args?: string[] }][]
  ) {
    await t.step(label, async () => {
      const { code, stdout, stderr } = await runMain(options);
      assert.equal(code, 1);
      assert.equal(stdout, "");
      const lines = stderr.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(lines.length, 1, stderr);
      assert.match(String(lines[0]!.error), /CHECKLIST_AGENT: an agent name is 1-64 characters/);
    });
  }
});

Deno.test("the HTTP server acts as CHECKLIST_AGENT for calls without an agent", async () => {
  await using server = await startHttp({ env: { CHECKLIST_AGENT: "web" } });
  await ok(server.client, "createTask", {
    id: "P",
    name: "Plan",
    parallel: true,
    tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }],
  });
  const started = await ok<{ task: { claim: { agent: string } } }>(server.client, "startTask", { id: "b" });
  assert.equal(started.task.claim.agent, "web");
  const other = await ok<{ task: { id: string } }>(server.client, "claimTask", { agent: "api" });
  assert.equal(other.task.id, "a");
});
