/**
 * Where the work lives, read from real repositories in temporary directories (docs/teams.md "Where the
 * work lives"): a branch with an upstream (a bare repository) and commits ahead and behind, a detached
 * HEAD, changed, renamed and untracked paths (spaces, a newline), more than 20 of them, a second work
 * tree, a subdirectory, a directory that is not a repository; and git never taking the index lock nor
 * running a repository's fsmonitor hook.
 */
import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import { GitStateSchema } from "../../lib/domain/schemas.ts";
import { GitError, runGit } from "../../lib/git/run_git.ts";
import { byCodePoint, readTopLevel, readWorkTree } from "../../lib/git/work_tree.ts";
import { cloneInto, gitPlace } from "../support/git_repos.ts";

Deno.test("a branch with an upstream: the top directory, branch, HEAD, upstream, commits ahead and behind", async () => {
  await using place = await gitPlace();
  const first = await place.init("first");
  await first.write("README.md", "hello\n");
  await first.commit("init");
  const upstream = await place.bare();
  await first.git("remote", "add", "origin", upstream);
  await first.git("push", "-q", "-u", "origin", "main");
  const mine = await cloneInto(upstream, `${place.dir}/mine`);
  // The upstream gets two commits the clone has not; the clone makes one of its own.
  await first.write("a.txt", "a\n");
  await first.commit("a");
  await first.write("b.txt", "b\n");
  await first.commit("b");
  await first.git("push", "-q");
  await mine.git("fetch", "-q");
  await mine.write("c.txt", "c\n");
  const head = await mine.commit("c");
  const state = await readWorkTree(mine.dir);
  assert.deepEqual(state, {
    worktree: mine.dir,
    branch: "main",
    head,
    upstream: "origin/main",
    ahead: 1,
    behind: 2,
    dirty_count: 0,
  });
  GitStateSchema.parse(state);
});

Deno.test("a detached HEAD has no branch; changed, renamed and untracked paths are listed in path order", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("src/api.ts", "export {};\n");
  await repo.write("old name.txt", "x\n");
  await repo.write("z.txt", "z\n");
  const head = await repo.commit("init");
  await repo.git("checkout", "-q", "--detach");
  await repo.write("src/api.ts", "export const a = 1;\n");
  await repo.git("mv", "old name.txt", "new name.txt");
  await repo.write("notes/line\nbreak.md", "n\n");
  await repo.write("untracked.txt", "u\n");
  await Deno.remove(`${repo.dir}/z.txt`);
  const state = await readWorkTree(repo.dir);
  assert.deepEqual(state, {
    worktree: repo.dir,
    head,
    // The untracked directory is one entry, as git status shows it.
    dirty: ["new name.txt", "notes/", "src/api.ts", "untracked.txt", "z.txt"],
    dirty_count: 5,
  });
});

Deno.test(`more than ${LIMITS.gitDirty} dirty paths: the first ${LIMITS.gitDirty} in path order, all counted`, async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("tracked.txt", "t\n");
  await repo.commit("init");
  const names = Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`);
  for (const name of names.toReversed()) await repo.write(name, name);
  await repo.write("tracked.txt", "changed\n");
  await repo.write("\u{1F600}.txt", "past U+FFFF");
  await repo.write("\uFF21.txt", "U+FF21");
  const state = await readWorkTree(repo.dir);
  assert.equal(state.dirty_count, 33);
  assert.deepEqual(state.dirty, names.slice(0, LIMITS.gitDirty));
  // Git's order is by bytes: U+FF21 before U+1F600 (JavaScript's own sort puts them the other way).
  const all = [...names, "tracked.txt", "\uFF21.txt", "\u{1F600}.txt"];
  assert.deepEqual(all.toSorted(byCodePoint), all);
});

Deno.test("a second work tree (git worktree add) is recorded as itself, from any subdirectory", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("src/a.ts", "a\n");
  const head = await repo.commit("init");
  const second = await repo.addWorktree("second", "feature/b");
  await second.write("src/b.ts", "b\n");
  const state = await readWorkTree(`${second.dir}/src`);
  assert.deepEqual(state, {
    worktree: second.dir,
    branch: "feature/b",
    head,
    dirty: ["src/b.ts"],
    dirty_count: 1,
  });
  assert.equal((await readWorkTree(repo.dir)).branch, "main", "the first work tree is unchanged");
});

Deno.test("a repository without commits has a branch and no HEAD", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  assert.deepEqual(await readWorkTree(repo.dir), {
    worktree: repo.dir,
    branch: "main",
    dirty: ["a.txt"],
    dirty_count: 1,
  });
});

Deno.test("a directory that is not inside a work tree, or does not exist, is not-a-work-tree", async () => {
  await using place = await gitPlace();
  const plain = `${place.dir}/plain`;
  await Deno.mkdir(plain);
  for (const dir of [plain, `${place.dir}/missing`, await place.bare()]) {
    await assert.rejects(
      () => readWorkTree(dir),
      (error) => error instanceof GitError && error.reason === "not-a-work-tree",
      dir,
    );
  }
});

Deno.test("git never takes the index lock (GIT_OPTIONAL_LOCKS=0): a stale index is left as it is", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  await repo.commit("init");
  // Same content, new times: git status would refresh the index and write it back, under its lock.
  await Deno.utime(`${repo.dir}/a.txt`, new Date(2030, 0, 1), new Date(2030, 0, 1));
  const index = `${repo.dir}/.git/index`;
  const before = await Deno.readFile(index);
  await readWorkTree(repo.dir);
  assert.deepEqual(await Deno.readFile(index), before, "the index was not rewritten");
  // Whereas an ordinary status does rewrite it: the check above would catch a run that locks.
  await repo.git("status", "--porcelain");
  assert.notDeepEqual(await Deno.readFile(index), before);
});

Deno.test("a repository's core.fsmonitor hook is never run", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  await repo.commit("init");
  const marker = `${place.dir}/hook-ran`;
  const hook = `${place.dir}/fsmonitor.sh`;
  await Deno.writeTextFile(hook, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
  await Deno.chmod(hook, 0o755);
  await repo.git("config", "--local", "core.fsmonitor", hook);
  await readWorkTree(repo.dir);
  assert.equal(await exists(marker), false, "the hook did not run");
  // The hook is real: an ordinary status runs it.
  await repo.git("status", "--porcelain");
  assert.equal(await exists(marker), true);
});

Deno.test("runGit: a git that fails says why in one line", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await assert.rejects(
    () => runGit(["rev-parse", "--verify", "no-such-ref"], { cwd: repo.dir }),
    (error) =>
      error instanceof GitError && error.reason === "failed" && /^git rev-parse failed: /.test(error.message),
  );
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("a work tree whose directory name holds spaces and ends with a newline is recorded exactly", async () => {
  await using place = await gitPlace();
  const repo = await place.init("my repo\n");
  await repo.write("a.txt", "a\n");
  await repo.commit("init");
  assert.equal(await readTopLevel(`${repo.dir}`), `${place.dir}/my repo\n`);
  assert.equal((await readWorkTree(repo.dir)).worktree, `${place.dir}/my repo\n`);
});
