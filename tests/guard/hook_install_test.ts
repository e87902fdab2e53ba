/**
 * Installing the commit guard's hook in real repositories (docs/guard.md "The hook"): where git runs
 * hooks from (`core.hooksPath` honoured, a linked work tree sharing its repository's), a hook already
 * there left alone without `--force`, installing again updating our own, and the command's words.
 */
import assert from "node:assert/strict";
import { GitError } from "../../lib/git/run_git.ts";
import {
  bakedFlags,
  GUARD_PERMISSIONS,
  guardCommand,
  hookScript,
  installHook,
  isOurHook,
  shellLine,
} from "../../lib/guard/hook_install.ts";
import { guardSettings, parseGuardFlags } from "../../lib/guard/guard_args.ts";
import { gitPlace } from "../support/git_repos.ts";
import { CONFIG } from "../support/paths.ts";

const COMMAND = "'/opt/checklist mcp/checklist-mcp' guard --session shop";

async function mode(path: string): Promise<number> {
  return (await Deno.stat(path)).mode! & 0o777;
}

Deno.test("the guard task runs with the permissions a hook's deno run gets: git, files, env, net, nothing else", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(CONFIG)) as { tasks: Record<string, string> };
  const words = tasks.guard!.split(/\s+/);
  assert.deepEqual(words.filter((w) => w.startsWith("--allow") || w === "-A"), [...GUARD_PERMISSIONS]);
  assert.deepEqual(words.slice(-1), ["lib/guard/guard_main.ts"]);
});

Deno.test("a shell line quotes what needs it, and sh reads back the same words", async () => {
  const argv = [
    "/usr/bin/deno",
    "task",
    "--config",
    "/home/me/it's here/deno.json",
    "guard",
    "--url",
    "http://h:1/mcp/a b",
    "$HOME",
    "",
  ];
  const line = shellLine(argv);
  assert.equal(line.split(" ").slice(0, 3).join(" "), "/usr/bin/deno task --config");
  const { stdout } = await new Deno.Command("sh", { args: ["-c", `printf '%s\\0' ${line}`] }).output();
  assert.deepEqual(new TextDecoder().decode(stdout).split("\0").slice(0, -1), argv);
  assert.equal(
    guardCommand({ argv: ["/d/deno", "task", "guard"], initCwd: true }, ["--warn"]),
    'INIT_CWD="$PWD" /d/deno task guard --warn',
  );
});

Deno.test("the flags a hook bakes in: those given, the store as an absolute path, never a token", () => {
  const flags = parseGuardFlags(["--session", "shop", "--agent", "ui", "--strict", "--warn"]);
  const env = { FILE_PATH: "tasks.json", CHECKLIST_NAMESPACE: "team", AUTH_TOKEN: "secret" };
  assert.deepEqual(bakedFlags(flags, guardSettings(flags, env, "/repo")), [
    "--session",
    "shop",
    "--agent",
    "ui",
    "--file",
    "/repo/tasks.json",
    "--namespace",
    "team",
    "--warn",
    "--strict",
  ]);
  const url = parseGuardFlags(["--url", "https://h/mcp/team"]);
  const baked = bakedFlags(url, guardSettings(url, env, "/repo"));
  assert.deepEqual(baked, ["--url", "https://h/mcp/team"]);
  assert.ok(!baked.join(" ").includes("secret"));
  assert.deepEqual(bakedFlags(parseGuardFlags([]), guardSettings(parseGuardFlags([]), {}, "/r")), []);
});

Deno.test("install writes an executable pre-commit hook; a hook already there is left unless --force", async (t) => {
  await using place = await gitPlace();
  const repo = await place.init();
  const hook = `${repo.dir}/.git/hooks/pre-commit`;
  await t.step("a fresh repository: the hook is written, executable, and is ours", async () => {
    const result = await installHook({ dir: `${repo.dir}`, command: COMMAND, force: false });
    assert.deepEqual(result, { kind: "installed", hook, replaced: "none", sharedBy: 1 });
    assert.equal(await Deno.readTextFile(hook), hookScript(COMMAND));
    assert.equal(await mode(hook), 0o755);
    assert.ok(isOurHook(hookScript(COMMAND)));
  });
  await t.step("installing again updates our own hook", async () => {
    const result = await installHook({ dir: repo.dir, command: `${COMMAND} --warn`, force: false });
    assert.equal(result.kind === "installed" && result.replaced, "ours");
    assert.equal(await Deno.readTextFile(hook), hookScript(`${COMMAND} --warn`));
  });
  await t.step("our hook with a line added is someone's hook now", () => {
    const edited = hookScript(COMMAND).replace("#!/bin/sh\n", "#!/bin/sh\nnpm test || exit 1\n");
    assert.equal(isOurHook(edited), false);
  });
  const theirs = "#!/bin/sh\nnpm test\n";
  await t.step("another hook is left as it is without --force", async () => {
    await Deno.writeTextFile(hook, theirs);
    const result = await installHook({ dir: repo.dir, command: COMMAND, force: false });
    assert.deepEqual(result, { kind: "left", hook });
    assert.equal(await Deno.readTextFile(hook), theirs);
  });
  await t.step("--force replaces it and keeps the old one beside it", async () => {
    const result = await installHook({ dir: repo.dir, command: COMMAND, force: true });
    assert.equal(result.kind === "installed" && result.replaced, "other");
    assert.equal(await Deno.readTextFile(hook), hookScript(COMMAND));
    assert.equal(await Deno.readTextFile(`${hook}.orig`), theirs);
  });
});

Deno.test("install honours core.hooksPath, relative or absolute, and creates the directory", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await Deno.mkdir(`${repo.dir}/src`);
  await repo.git("config", "--local", "core.hooksPath", ".githooks");
  const relative = await installHook({ dir: `${repo.dir}/src`, command: COMMAND, force: false });
  assert.equal(relative.hook, `${repo.dir}/.githooks/pre-commit`);
  assert.equal(await Deno.readTextFile(relative.hook), hookScript(COMMAND));
  await assert.rejects(Deno.stat(`${repo.dir}/.git/hooks/pre-commit`), Deno.errors.NotFound);
  await repo.git("config", "--local", "core.hooksPath", `${place.dir}/shared hooks`);
  const absolute = await installHook({ dir: repo.dir, command: COMMAND, force: false });
  assert.equal(absolute.hook, `${place.dir}/shared hooks/pre-commit`);
  assert.equal(await mode(absolute.hook), 0o755);
});

Deno.test("in a linked work tree the hook goes to the repository's hooks, shared by every work tree", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.commit("init");
  const linked = await repo.addWorktree("wt-ui", "ui");
  await repo.addWorktree("wt-api", "api");
  const result = await installHook({ dir: linked.dir, command: COMMAND, force: false });
  assert.deepEqual(result, {
    kind: "installed",
    hook: `${repo.dir}/.git/hooks/pre-commit`,
    replaced: "none",
    sharedBy: 3,
  });
  // A relative core.hooksPath is a directory of each work tree: this one only.
  await repo.git("config", "--local", "core.hooksPath", ".githooks");
  const own = await installHook({ dir: linked.dir, command: COMMAND, force: false });
  assert.equal(own.hook, `${linked.dir}/.githooks/pre-commit`);
  assert.equal(own.kind === "installed" && own.sharedBy, 1);
});

Deno.test("install outside a work tree is a GitError that says so, and writes nothing", async () => {
  await using place = await gitPlace();
  await assert.rejects(
    installHook({ dir: place.dir, command: COMMAND, force: false }),
    (error: unknown) => error instanceof GitError && error.reason === "not-a-work-tree",
  );
  assert.deepEqual([...Deno.readDirSync(place.dir)], []);
});
