/**
 * Where the work lives, end to end through real server processes (docs/teams.md "Where the work lives"):
 * two agents in two work trees of one repository, each with its own stdio server on one FILE_PATH
 * started with the stdio task's permissions (the second told its work tree by REPO_DIR): a claim, a
 * note and a takeover hand `previous.git` to the next agent, and a blocker's `git` to the one after.
 * Over HTTP nothing is recorded. Without permission to run git, with a git that hangs (a stand-in on
 * PATH), outside a work tree: nothing recorded, every call succeeds, one log line says why.
 */
import assert from "node:assert/strict";
import type { GitRecord, TakeContext } from "../../lib/domain/schemas.ts";
import { call, ok, spawnStdio, startHttp, textOf } from "../support/harness.ts";
import { gitPlace } from "../support/git_repos.ts";
import { ROOT } from "../support/paths.ts";
import { taskPermissions } from "../support/server_process.ts";
import type { Client } from "../support/sdk_client.ts";
import { sleep } from "../support/time.ts";

async function gitOf(client: Client, id: string, sessionId = "s"): Promise<GitRecord | undefined> {
  const { task } = await ok<{ task: { git?: GitRecord } }>(client, "getTask", { sessionId, id });
  return task.git;
}

/** The log records a server wrote on stderr that say why nothing is recorded. */
function whyNotRecorded(stderr: string): Record<string, unknown>[] {
  return stderr.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    .filter((record) => record.msg === "where work lives is not recorded");
}

Deno.test("deno task stdio, start and compile may run git and nothing else", async () => {
  for (const name of ["stdio", "start", "compile"]) {
    const flags = await taskPermissions(name);
    assert.deepEqual(flags.filter((flag) => flag.startsWith("--allow-run") || flag === "-A"), [
      "--allow-run=git",
    ], name);
  }
});

Deno.test("claim, note, takeover: the next agent gets the dead agent's branch, work tree and dirty files, over real stdio", async () => {
  await using place = await gitPlace();
  const repo = await place.init("shop");
  await repo.write("README.md", "shop\n");
  await repo.write("src/api.ts", "export {};\n");
  const head = await repo.commit("init");
  const one = await repo.addWorktree("wt-backend", "feature/api");
  const two = await repo.addWorktree("wt-next", "feature/api-2");
  const permissions = await taskPermissions("stdio");
  const env = { FILE_PATH: `${place.dir}/tasks.json` };
  // The backend's server starts in its work tree; the next agent's is told its work tree by REPO_DIR.
  await using backend = await spawnStdio({ env, cwd: one.dir, permissions });
  await using next = await spawnStdio({ env: { ...env, REPO_DIR: two.dir }, cwd: ROOT, permissions });
  await ok(backend.client, "createTask", {
    sessionId: "s",
    id: "p",
    name: "Shop",
    parallel: true,
    tasks: [{ id: "api", name: "Build API" }, { id: "e2e", name: "End-to-end tests", blocked_by: ["api"] }],
  });
  await ok(backend.client, "claimTask", { sessionId: "s", agent: "backend", lease_seconds: 1 });
  assert.deepEqual(
    { ...await gitOf(backend.client, "api"), at: "" },
    { agent: "backend", at: "", worktree: one.dir, branch: "feature/api", head, dirty_count: 0 },
  );
  // Work, then a note: the record follows.
  await one.write("src/api.ts", "export const orders = [];\n");
  await one.write("src/idempotency.ts", "export {};\n");
  await ok(backend.client, "updateTask", {
    sessionId: "s",
    id: "api",
    agent: "backend",
    note: "POST /orders needs an Idempotency-Key header",
  });
  const left = await gitOf(backend.client, "api");
  assert.deepEqual(left?.dirty, ["src/api.ts", "src/idempotency.ts"]);
  // The backend dies: its lease runs out, and the next agent takes the task over.
  await backend.close();
  await sleep(1100);
  const taken = await ok<{ taken_over_from: string; context: TakeContext }>(next.client, "claimTask", {
    sessionId: "s",
    agent: "next",
  });
  assert.equal(taken.taken_over_from, "backend");
  assert.deepEqual(taken.context.previous, {
    agent: "backend",
    notes: [{ agent: "backend", at: left!.at, text: "POST /orders needs an Idempotency-Key header" }],
    git: left,
  });
  assert.deepEqual(left, {
    agent: "backend",
    at: left!.at,
    worktree: one.dir,
    branch: "feature/api",
    head,
    dirty: ["src/api.ts", "src/idempotency.ts"],
    dirty_count: 2,
  });
  assert.match(
    textOf(await call(next.client, "getTask", { sessionId: "s", id: "api" })),
    new RegExp(`^Work: feature/api-2@${head.slice(0, 7)} in ${two.dir}, clean \\(seen by next at `, "m"),
  );
  // A renewal refreshes the record without a revision.
  const { revision } = await ok<{ revision: number }>(next.client, "task_history", { sessionId: "s" });
  await two.write("src/more.ts", "more\n");
  const renewed = await ok<{ renewed: boolean; revision: number }>(next.client, "claimTask", {
    sessionId: "s",
    agent: "next",
  });
  assert.equal(renewed.renewed, true);
  assert.equal(renewed.revision, revision);
  assert.deepEqual((await gitOf(next.client, "api"))?.dirty, ["src/more.ts"]);
  const done = await two.commit("orders API");
  await ok(next.client, "completeTask", {
    sessionId: "s",
    id: "api",
    resolution: "Orders API",
    agent: "next",
  });
  // The one after gets where the blocker's work lives.
  await using tester = await spawnStdio({ env, cwd: repo.dir, permissions });
  const e2e = await ok<{ context: TakeContext }>(tester.client, "claimTask", {
    sessionId: "s",
    agent: "tester",
  });
  assert.deepEqual(e2e.context.blockers?.[0]?.git, {
    branch: "feature/api-2",
    head: done,
    worktree: two.dir,
  });
  assert.equal((await gitOf(tester.client, "e2e"))?.branch, "main");
});

Deno.test("over HTTP nothing is recorded, whatever directory the server runs in", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  await repo.commit("init");
  await using server = await startHttp({ cwd: repo.dir, env: { REPO_DIR: repo.dir } });
  await ok(server.client, "createTask", { sessionId: "s", id: "a", name: "A" });
  await ok(server.client, "claimTask", { sessionId: "s", agent: "w1" });
  await ok(server.client, "updateTask", { sessionId: "s", id: "a", note: "n", agent: "w1" });
  assert.equal(await gitOf(server.client, "a"), undefined);
});

Deno.test("when git gives nothing, the call succeeds, nothing is recorded, and one log line says why", async (t) => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  await repo.commit("init");
  const stdio = await taskPermissions("stdio");
  /** A take and a note through a stdio server; returns what it logged about git. */
  const run = async (options: { cwd: string; env?: Record<string, string>; permissions: string[] }) => {
    const started = performance.now();
    await using conn = await spawnStdio({
      ...options,
      env: { LOG_LEVEL: "info", ...options.env },
      keepStderr: true,
    });
    await ok(conn.client, "createTask", { sessionId: "s", id: "a", name: "A" });
    await ok(conn.client, "claimTask", { sessionId: "s", agent: "w1" });
    await ok(conn.client, "updateTask", { sessionId: "s", id: "a", note: "n", agent: "w1" });
    assert.equal(await gitOf(conn.client, "a"), undefined);
    const took = performance.now() - started;
    await conn.close();
    return { lines: whyNotRecorded(conn.stderr()), took };
  };
  await t.step("no permission to run git", async () => {
    const { lines } = await run({
      cwd: repo.dir,
      permissions: stdio.filter((flag) => flag !== "--allow-run=git"),
    });
    assert.deepEqual(lines.map((l) => [l.level, l.reason]), [["info", "no-permission"]]);
    assert.match(String(lines[0]!.why), /--allow-run=git/);
  });
  await t.step("a git that hangs past 2 s", async () => {
    const bin = `${place.dir}/hung-bin`;
    await Deno.mkdir(bin);
    await Deno.writeTextFile(`${bin}/git`, "#!/bin/sh\nexec sleep 30\n");
    await Deno.chmod(`${bin}/git`, 0o755);
    const { lines, took } = await run({
      cwd: repo.dir,
      env: { PATH: `${bin}:${Deno.env.get("PATH")}` },
      permissions: stdio,
    });
    assert.deepEqual(lines.map((l) => l.reason), ["timeout"]);
    assert.match(String(lines[0]!.why), /took longer than 2 s/);
    // Two calls that read git, each stopped at 2 s.
    assert.ok(took >= 2 * 2000 && took < 2 * 2000 + 8000, `${took} ms`);
  });
  await t.step("a directory outside any work tree", async () => {
    const plain = `${place.dir}/plain`;
    await Deno.mkdir(plain);
    const { lines } = await run({ cwd: plain, permissions: stdio });
    assert.deepEqual(lines.map((l) => [l.reason, l.dir]), [["not-a-work-tree", plain]]);
  });
});
