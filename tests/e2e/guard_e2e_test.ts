/**
 * The commit guard end to end (docs/guard.md, docs/teams.md "Worked example: three work trees and the
 * commit guard"): real repositories with linked work trees, real stdio servers (the stdio task's
 * permissions, so they record where the work lives) that plan and claim, the guard installed with
 * `deno task --config deno.json guard --install` and run by real `git commit`s, on FILE_PATH and
 * KV_PATH with the server still running, and over HTTP with AUTH_TOKEN and a namespace.
 */
import assert from "node:assert/strict";
import { ok, spawnStdio, type StdioConnection } from "../support/harness.ts";
import { type GitPlace, gitPlace, type Repo } from "../support/git_repos.ts";
import { serverEnv } from "../support/env.ts";
import { CONFIG } from "../support/paths.ts";
import { type RunOutput, spawnServer, taskPermissions } from "../support/server_process.ts";
import { sleep } from "../support/time.ts";

/** A child's environment: no server settings of the test's shell, no global git config, no INIT_CWD. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env = serverEnv({ GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C", ...extra });
  // Deno keeps an INIT_CWD it inherits (a test run by `deno task test` has one): let the task set its own.
  if (extra.INIT_CWD === undefined) delete env.INIT_CWD;
  return env;
}

async function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<RunOutput> {
  const output = await new Deno.Command(command, {
    args,
    cwd,
    env: childEnv(env),
    clearEnv: true,
    stdin: "null",
  })
    .output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** `deno task --config deno.json guard …args`, started in `cwd` (the repository is where it starts). */
function guard(cwd: string, args: string[], env: Record<string, string> = {}): Promise<RunOutput> {
  return run(Deno.execPath(), ["task", "-q", "--config", CONFIG, "guard", ...args], cwd, env);
}

/** A real `git commit -q …args` in `repo`, hooks and all. */
function commit(repo: Repo, args: string[], env: Record<string, string> = {}): Promise<RunOutput> {
  return run("git", ["commit", "-q", ...args], repo.dir, env);
}

/** The lines the guard printed on stderr. */
function lines(output: RunOutput): string[] {
  return output.stderr.split("\n").filter((line) => line !== "");
}

interface Team extends AsyncDisposable {
  repo: Repo;
  /** The backend agent's work tree; its server runs there and holds "api" (src/api/**). */
  backend: Repo;
  /** The UI agent's work tree. */
  ui: Repo;
  server: StdioConnection;
}

/**
 * A shop repository with two linked work trees, and the backend agent's stdio server (started in its
 * work tree, on `store`) that plans `api` (src/api/) and `web` (src/web/) and claims `api`.
 */
async function team(place: GitPlace, store: Record<string, string>): Promise<Team> {
  const repo = await place.init("shop");
  await repo.write("README.md", "shop\n");
  await repo.write("src/api/users.ts", "export const users = [];\n");
  await repo.write("src/web/app.ts", "export {};\n");
  await repo.commit("init");
  const backend = await repo.addWorktree("wt-backend", "backend");
  const ui = await repo.addWorktree("wt-ui", "ui");
  const server = await spawnStdio({
    env: store,
    cwd: backend.dir,
    permissions: await taskPermissions("stdio"),
  });
  await ok(server.client, "createTask", {
    sessionId: "shop",
    id: "build",
    name: "Build the shop",
    parallel: true,
    tasks: [
      { id: "api", name: "Build API", paths: ["src/api/"] },
      { id: "web", name: "Build UI", paths: ["src/web/"] },
    ],
  });
  const claimed = await ok<{ task: { id: string } }>(server.client, "claimTask", {
    sessionId: "shop",
    agent: "backend",
  });
  assert.equal(claimed.task.id, "api");
  return { repo, backend, ui, server, [Symbol.asyncDispose]: () => server.close() };
}

const REFUSED =
  /^ {2}src\/api\/users\.ts: agent "backend" reserves src\/api\/\*\* for task "Build API" \(api\), (2[0-9]|30) min left$/;

for (const kind of ["FILE_PATH", "KV_PATH"] as const) {
  Deno.test(`a real git commit of a reserved file is refused by the installed hook, ${kind}, with the server running`, async () => {
    await using place = await gitPlace();
    const store = { [kind]: `${place.dir}/${kind === "FILE_PATH" ? "tasks.json" : "tasks.kv"}` };
    await using t = await team(place, store);
    if (kind === "KV_PATH") {
      // Hooks from elsewhere: git runs the hook from core.hooksPath, and the install put it there.
      await t.repo.git("config", "--local", "core.hooksPath", `${place.dir}/hooks`);
    }
    const installed = await guard(t.ui.dir, ["--install", "--session", "shop"], store);
    assert.equal(installed.code, 0, installed.stderr);
    const hook = kind === "KV_PATH" ? `${place.dir}/hooks/pre-commit` : `${t.repo.dir}/.git/hooks/pre-commit`;
    assert.match(installed.stdout, new RegExp(`${hook}`));
    assert.match(installed.stdout, /all 3 work trees/);
    assert.match(
      await Deno.readTextFile(hook),
      new RegExp(`--session shop --${kind === "FILE_PATH" ? "file" : "kv"} `),
    );

    await t.ui.write("src/api/users.ts", "export const users = ['ui was here'];\n");
    await t.ui.write("src/web/app.ts", "export const app = 1;\n");
    await t.ui.git("add", "-A");
    const before = kind === "FILE_PATH" ? await Deno.readFile(store[kind]!) : undefined;
    const refused = await commit(t.ui, ["-m", "touch the API"]);
    assert.equal(refused.code, 1, refused.stderr);
    const said = lines(refused);
    assert.equal(
      said[0],
      'checklist-mcp guard: 1 staged path is reserved by another agent in session "shop":',
    );
    assert.match(said[1]!, REFUSED);
    assert.match(said[2]!, /^Commit refused: wait until that task is done/);
    assert.equal(said.length, 3);
    if (before) assert.deepEqual(await Deno.readFile(store[kind]!), before, "the guard wrote nothing");

    // commit -a commits through a temporary index: the hook checks that one.
    await t.ui.git("reset", "-q");
    const all = await commit(t.ui, ["-a", "-m", "everything"]);
    assert.equal(all.code, 1, all.stderr);
    assert.match(lines(all)[1]!, REFUSED);

    // The server shares the store all along: it goes on answering and changing it.
    await ok(t.server.client, "completeTask", {
      sessionId: "shop",
      id: "api",
      agent: "backend",
      resolution: "API",
    });
    const allowed = await commit(t.ui, ["-a", "-m", "the API is done: the paths are free"]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stderr, "", "a clean check says nothing");
    assert.match(await t.ui.git("log", "-1", "--format=%s"), /the paths are free/);
  });
}

Deno.test("git commit --no-verify skips the guard; an existing hook is left, and the line it prints calls the guard", async () => {
  await using place = await gitPlace();
  const store = { FILE_PATH: `${place.dir}/tasks.json` };
  await using t = await team(place, store);
  const hook = `${t.repo.dir}/.git/hooks/pre-commit`;
  const theirs = "#!/bin/sh\necho their checks ran\n";
  await Deno.writeTextFile(hook, theirs, { mode: 0o755 });
  const left = await guard(t.ui.dir, ["--install", "--session", "shop"], store);
  assert.equal(left.code, 1, left.stderr);
  assert.equal(await Deno.readTextFile(hook), theirs, "not replaced without --force");
  const line = left.stdout.split("\n").find((l) => l.endsWith(" || exit $?"))?.trim();
  assert.ok(line, left.stdout);
  await t.ui.write("src/api/users.ts", "changed\n");
  await t.ui.git("add", "-A");
  assert.equal((await commit(t.ui, ["--no-verify", "-m", "skip"])).code, 0);
  // Their hook, with the printed line added, runs the guard.
  await Deno.writeTextFile(hook, `${theirs}${line}\n`);
  await t.ui.write("src/api/users.ts", "changed again\n");
  await t.ui.git("add", "-A");
  const refused = await commit(t.ui, ["-m", "through their hook"]);
  assert.equal(refused.code, 1, refused.stderr);
  // Git shows a hook's stdout on stderr.
  assert.equal(lines(refused)[0], "their checks ran");
  assert.match(lines(refused)[2]!, REFUSED);
  const forced = await guard(t.ui.dir, ["--install", "--force", "--session", "shop"], store);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(await Deno.readTextFile(`${hook}.orig`), `${theirs}${line}\n`);
});

Deno.test("the guard checks a rename under both names, and a deletion", async () => {
  await using place = await gitPlace();
  const store = { FILE_PATH: `${place.dir}/tasks.json` };
  await using t = await team(place, store);
  const check = () => guard(t.ui.dir, ["--session", "shop"], store);
  await t.ui.git("mv", "src/api/users.ts", "src/accounts.ts");
  const away = await check();
  assert.equal(away.code, 1);
  assert.match(lines(away)[1]!, /^ {2}src\/api\/users\.ts \(deleted\): agent "backend"/);
  assert.equal(lines(away).length, 3, "the new name is free");
  await t.ui.git("reset", "-q", "--hard");
  await t.ui.git("mv", "README.md", "src/api/README.md");
  const into = await check();
  assert.equal(into.code, 1);
  assert.match(lines(into)[1]!, /^ {2}src\/api\/README\.md: agent "backend" reserves src\/api\/\*\*/);
  await t.ui.git("reset", "-q", "--hard");
  await t.ui.git("rm", "-q", "src/api/users.ts");
  assert.match(lines(await check())[1]!, /^ {2}src\/api\/users\.ts \(deleted\):/);
  await t.ui.git("reset", "-q", "--hard");
  await t.ui.git("mv", "README.md", "docs.md");
  assert.deepEqual(await check(), { code: 0, stdout: "", stderr: "" });
});

Deno.test("the agent's own reservations don't count: --agent, CHECKLIST_AGENT, or its work tree; an expired claim reserves nothing", async () => {
  await using place = await gitPlace();
  const store = { FILE_PATH: `${place.dir}/tasks.json` };
  await using t = await team(place, store);
  for (const tree of [t.backend, t.ui]) {
    await tree.write("src/api/users.ts", "mine\n");
    await tree.git("add", "-A");
  }
  const args = ["--session", "shop"];
  const quiet = { code: 0, stdout: "", stderr: "" };
  assert.deepEqual(await guard(t.backend.dir, args, store), quiet, "the work tree the holder recorded");
  assert.equal((await guard(t.ui.dir, args, store)).code, 1, "another work tree");
  assert.deepEqual(await guard(t.ui.dir, [...args, "--agent", "backend"], store), quiet);
  assert.deepEqual(await guard(t.ui.dir, args, { ...store, CHECKLIST_AGENT: "backend" }), quiet);
  // Named, the agent is who it says: in its own work tree as someone else, backend's claim counts.
  assert.equal((await guard(t.backend.dir, [...args, "--agent", "ui"], store)).code, 1);
  assert.equal((await guard(t.backend.dir, args, { ...store, CHECKLIST_AGENT: "ui" })).code, 1);

  // A claim whose lease ran out reserves nothing.
  await ok(t.server.client, "claimTask", { sessionId: "shop", agent: "designer", lease_seconds: 1 });
  await t.ui.write("src/web/app.ts", "restyled\n");
  await t.ui.git("add", "-A");
  await sleep(1100);
  const after = await guard(t.ui.dir, args, store);
  assert.equal(after.code, 1);
  assert.deepEqual(lines(after).filter((l) => l.startsWith("  ")).map((l) => l.split(":")[0]), [
    "  src/api/users.ts",
  ], "only the live claim on api");
});

Deno.test("a store it cannot reach, or no repository: one line and exit 0; --strict exits 2", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  await repo.git("add", "-A");
  const one = (output: RunOutput, code: number, reason: RegExp) => {
    assert.equal(output.code, code, output.stderr);
    assert.equal(output.stdout, "");
    const said = lines(output);
    assert.equal(said.length, 1, output.stderr);
    assert.match(said[0]!, /^checklist-mcp guard: cannot check \(/);
    assert.match(said[0]!, reason);
  };
  const missing = { FILE_PATH: `${place.dir}/missing/tasks.json` };
  one(
    await guard(repo.dir, [], missing),
    0,
    /FILE_PATH .*missing\/tasks\.json does not exist\); nothing was checked\.$/,
  );
  one(await guard(repo.dir, ["--strict"], missing), 2, /refusing, as --strict asks\.$/);
  await assert.rejects(Deno.stat(`${place.dir}/missing`), Deno.errors.NotFound, "the guard creates no store");
  one(await guard(repo.dir, [], { KV_PATH: `${place.dir}/tasks.kv` }), 0, /KV_PATH .* does not exist/);
  await assert.rejects(Deno.stat(`${place.dir}/tasks.kv`), Deno.errors.NotFound);
  await Deno.writeTextFile(`${place.dir}/broken.json`, "{ not json");
  one(await guard(repo.dir, [], { FILE_PATH: `${place.dir}/broken.json` }), 0, /is not valid JSON/);
  one(await guard(repo.dir, [], {}), 0, /no store: set FILE_PATH or KV_PATH, or pass --url/);
  one(await guard(repo.dir, ["--url", "http://127.0.0.1:9/mcp"], {}), 0, /did not answer/);
  const outside = `${place.dir}/not-a-repo`;
  await Deno.mkdir(outside);
  one(await guard(outside, [], missing), 0, /not-a-repo is not in a git work tree/);
  one(await guard(outside, ["--strict"], missing), 2, /not in a git work tree\); refusing/);
  const bad = await guard(repo.dir, ["--sesion", "x"], missing);
  assert.equal(bad.code, 2);
  assert.deepEqual(lines(bad).map((l) => l.slice(0, 30)), [
    "checklist-mcp guard: unknown f",
    "usage: checklist-mcp guard [--",
  ]);
});

Deno.test("--url asks a running server over HTTP with AUTH_TOKEN, in the namespace the URL names", async () => {
  await using place = await gitPlace();
  const file = `${place.dir}/tasks.json`;
  // The backend's stdio server plans and claims in namespace "team"; an HTTP server shares the file.
  await using t = await team(place, { FILE_PATH: file, CHECKLIST_NAMESPACE: "team" });
  await using http = await spawnServer({ env: { FILE_PATH: file, AUTH_TOKEN: "s3cret", LOG_LEVEL: "warn" } });
  for (const tree of [t.backend, t.ui]) {
    await tree.write("src/api/users.ts", "mine\n");
    await tree.git("add", "-A");
  }
  const url = ["--session", "shop", "--url", `${http.url}/mcp/team`];
  const token = { AUTH_TOKEN: "s3cret" };
  const refused = await guard(t.ui.dir, url, token);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(lines(refused)[1]!, REFUSED);
  assert.deepEqual(
    await guard(t.backend.dir, url, token),
    { code: 0, stdout: "", stderr: "" },
    "its work tree",
  );
  assert.equal((await guard(t.ui.dir, [...url, "--agent", "backend"], token)).code, 0);
  const other = ["--session", "shop", "--url", `${http.url}/mcp/other`];
  assert.deepEqual(
    await guard(t.ui.dir, other, token),
    { code: 0, stdout: "", stderr: "" },
    "another namespace",
  );
  const anonymous = await guard(t.ui.dir, url, {});
  assert.equal(anonymous.code, 0);
  assert.match(anonymous.stderr, /^checklist-mcp guard: cannot check \(.*did not answer/);
  assert.equal((await guard(t.ui.dir, [...url, "--strict"], { AUTH_TOKEN: "wrong" })).code, 2);

  // Installed with --url, the hook holds the URL and reads the token at commit time.
  assert.equal((await guard(t.ui.dir, ["--install", ...url], token)).code, 0);
  const hook = await Deno.readTextFile(`${t.repo.dir}/.git/hooks/pre-commit`);
  assert.ok(hook.includes(`${http.url}/mcp/team`) && !hook.includes("s3cret"), hook);
  assert.equal((await commit(t.ui, ["-m", "over HTTP"], token)).code, 1);
});
