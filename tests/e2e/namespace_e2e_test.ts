/**
 * Namespaces through real stdio processes (docs/namespaces.md): two servers on one FILE_PATH, and
 * two on one KV_PATH, one started with `CHECKLIST_NAMESPACE`, the other with `--namespace`, use the
 * same session id, task ids, project and work ids and never see each other's sessions, works,
 * progress, history, resources or `resume` prompt. An invalid name stops the server at start.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { type Connection, fails, ok, spawnStdio, startHttp } from "../support/harness.ts";
import type { Client } from "../support/sdk_client.ts";
import { runMain } from "../support/server_process.ts";

/** The same writes in any namespace; names and texts carry `label`. Returns the saved work's id. */
async function fill(client: Client, label: string): Promise<string> {
  await ok(client, "createTask", {
    sessionId: "plan",
    id: "ship",
    name: `Ship ${label}`,
    tasks: [{ id: "build", name: `Build ${label}` }, { id: "test", name: "Test" }],
  });
  await ok(client, "startTask", { sessionId: "plan", id: "ship" });
  await ok(client, "mem_progress", {
    project: "app",
    content: JSON.stringify({ goal: `goal of ${label}`, completed: [], next_steps: [], blockers: [] }),
    session_id: "plan",
  });
  const { workId } = await ok<{ workId: string }>(client, "save_current_work_info", {
    work_summarize: `summary of ${label}`,
    work_description: `work of ${label}`,
    sessionId: "plan",
  });
  return workId;
}

/** Everything a client can find out about the store, as text to search for another namespace's words. */
async function everythingSeen(client: Client): Promise<string> {
  const parts: unknown[] = [];
  parts.push(await client.callTool({ name: "listTasks", arguments: { sessionId: "plan" } }));
  parts.push(await client.callTool({ name: "get_all_tasks", arguments: { sessionId: "plan" } }));
  parts.push(await client.callTool({ name: "get_recent_works_info", arguments: {} }));
  parts.push(await client.callTool({ name: "task_history", arguments: { sessionId: "plan" } }));
  const { resources } = await client.listResources();
  parts.push(resources);
  for (const resource of resources) parts.push(await client.readResource({ uri: resource.uri }));
  parts.push(await client.getPrompt({ name: "resume", arguments: {} }));
  parts.push(await client.getPrompt({ name: "resume", arguments: { project: "app", sessionId: "plan" } }));
  return JSON.stringify(parts);
}

async function twoNamespacesOn(env: Record<string, string>): Promise<void> {
  let a: Connection | undefined;
  let b: Connection | undefined;
  try {
    a = await spawnStdio({ env: { ...env, CHECKLIST_NAMESPACE: "team-a" } });
    b = await spawnStdio({ env, args: ["--namespace", "team-b"] });
    const workA = await fill(a.client, "alpha");
    // Before b writes anything, it sees nothing of a.
    assert.doesNotMatch(await everythingSeen(b.client), /alpha/);
    await fails(b.client, "get_work_by_id", { workId: workA }, "NOT_FOUND");
    await fails(b.client, "getTask", { sessionId: "plan", id: "ship" }, "NOT_FOUND");
    // Only the plan view's document, which holds no data: no work or progress resource of a.
    assert.deepEqual((await b.client.listResources()).resources.map((r) => r.uri), [
      "ui://checklist/plan.html",
    ]);

    const workB = await fill(b.client, "bravo");
    await ok(b.client, "completeTask", { sessionId: "plan", id: "build", resolution: "built by bravo" });
    const seenA = await everythingSeen(a.client);
    const seenB = await everythingSeen(b.client);
    assert.match(seenA, /alpha/);
    assert.doesNotMatch(seenA, /bravo/);
    assert.match(seenB, /bravo/);
    assert.doesNotMatch(seenB, /alpha/);
    if (workA !== workB) {
      await fails(a.client, "get_work_by_id", { workId: workB }, "NOT_FOUND");
      await fails(b.client, "get_work_by_id", { workId: workA }, "NOT_FOUND");
    }
    // Same ids, own trees and own histories.
    const shipA = await ok<{ task: Task }>(a.client, "getTask", { sessionId: "plan", id: "build" });
    assert.equal(shipA.task.status, "in_progress");
    const historyA = await ok<{ revision: number }>(a.client, "task_history", { sessionId: "plan" });
    const historyB = await ok<{ revision: number }>(b.client, "task_history", { sessionId: "plan" });
    assert.deepEqual([historyA.revision, historyB.revision], [2, 3]);

    // A server in namespace default on the same store sees neither.
    await using plain = await spawnStdio({ env });
    const seenDefault = await everythingSeen(plain.client);
    assert.doesNotMatch(seenDefault, /alpha|bravo/);
  } finally {
    await a?.close();
    await b?.close();
  }
}

Deno.test("two stdio servers in different namespaces on one FILE_PATH never see each other's data", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-ns-file-" });
  try {
    await twoNamespacesOn({ FILE_PATH: `${dir}/store.json` });
    const written = JSON.parse(await Deno.readTextFile(`${dir}/store.json`));
    assert.deepEqual(Object.keys(written.sessions), [], "nothing was written in default");
    assert.deepEqual(Object.keys(written.namespaces).sort(), ["team-a", "team-b"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two stdio servers in different namespaces on one KV_PATH never see each other's data", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-ns-kv-" });
  try {
    await twoNamespacesOn({ KV_PATH: `${dir}/store.kv` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an invalid namespace stops the stdio server at start with one clear line, exit code 1", async (t) => {
  for (
    const [label, options] of [
      ["CHECKLIST_NAMESPACE with a slash", { env: { CHECKLIST_NAMESPACE: "team/a" } }],
      ["--namespace too long", { args: ["--namespace", "x".repeat(65)] }],
      ["--namespace with a space", { args: ["--namespace=a b"] }],
    ] as [string, { env?: Record<string, string>; args?: string[] }][]
  ) {
    await t.step(label, async () => {
      const { code, stdout, stderr } = await runMain(options);
      assert.equal(code, 1);
      assert.equal(stdout, "", "stdout carries protocol only");
      const lines = stderr.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(lines.length, 1, stderr);
      assert.equal(lines[0]!.level, "error");
      assert.match(String(lines[0]!.error), /CHECKLIST_NAMESPACE: a namespace name is 1-64 characters/);
    });
  }
});

Deno.test("HTTP /mcp works in namespace default: a stdio server in default sees its plan, one in another namespace does not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-ns-http-" });
  try {
    const env = { FILE_PATH: `${dir}/store.json` };
    {
      await using http = await startHttp({ env });
      await fill(http.client, "over-http");
    }
    await using plain = await spawnStdio({ env });
    await using team = await spawnStdio({ env: { ...env, CHECKLIST_NAMESPACE: "team-a" } });
    assert.match(await everythingSeen(plain.client), /over-http/);
    assert.doesNotMatch(await everythingSeen(team.client), /over-http/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
