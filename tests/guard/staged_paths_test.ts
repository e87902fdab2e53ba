/**
 * The paths a commit changes, read from real repositories (docs/guard.md "What it checks"): a rename
 * under both names, a deletion, the first commit, and a merge that counts only what it reconciled.
 */
import assert from "node:assert/strict";
import { GitError } from "../../lib/git/run_git.ts";
import { parseNameStatus, readStaged } from "../../lib/guard/staged_paths.ts";
import { gitPlace } from "../support/git_repos.ts";

Deno.test("git's -z name-status output: a status then its path; a scored rename or copy has two", () => {
  assert.deepEqual(parseNameStatus("M\0src/a.ts\0D\0old name.ts\0R100\0from.ts\0to.ts\0A\0new\nline\0"), [
    { path: "src/a.ts", status: "M" },
    { path: "old name.ts", status: "D" },
    { path: "from.ts", status: "R" },
    { path: "to.ts", status: "R" },
    { path: "new\nline", status: "A" },
  ]);
  assert.deepEqual(parseNameStatus(""), []);
});

Deno.test("the staged paths of a real repository: first commit, changes, a deletion, a rename under both names", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("src/api/users.ts", "users\n");
  await repo.write("README.md", "readme\n");
  await repo.git("add", "-A");
  assert.deepEqual((await readStaged(repo.dir)).staged, [
    { path: "README.md", status: "A" },
    { path: "src/api/users.ts", status: "A" },
  ], "before the first commit every staged path counts");
  await repo.commit("init");
  assert.deepEqual(
    await readStaged(`${repo.dir}/src/api`),
    { top: repo.dir, staged: [] },
    "from a subdirectory",
  );
  await repo.git("config", "--local", "diff.renames", "true");
  await repo.git("mv", "src/api/users.ts", "src/accounts.ts");
  await repo.git("rm", "-q", "README.md");
  await repo.write("notes.txt", "unstaged, not counted\n");
  assert.deepEqual((await readStaged(repo.dir)).staged, [
    { path: "README.md", status: "D" },
    { path: "src/accounts.ts", status: "A" },
    { path: "src/api/users.ts", status: "D" },
  ]);
});

Deno.test("concluding a merge, only paths that differ from both parents count", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("theirs.ts", "base\n");
  await repo.write("both.ts", "base\n");
  await repo.commit("base");
  await repo.git("checkout", "-q", "-b", "other");
  await repo.write("theirs.ts", "changed on other\n");
  await repo.write("both.ts", "other\n");
  await repo.commit("other");
  await repo.git("checkout", "-q", "main");
  await repo.write("both.ts", "main\n");
  await repo.commit("main");
  await assert.rejects(repo.git("merge", "-q", "other"), /failed/, "both.ts conflicts");
  await repo.write("both.ts", "resolved\n");
  await repo.git("add", "both.ts");
  const all = await repo.git("diff", "--cached", "--name-only");
  assert.deepEqual(all.trim().split("\n"), ["both.ts", "theirs.ts"], "against HEAD the merge changes both");
  assert.deepEqual((await readStaged(repo.dir)).staged, [{ path: "both.ts", status: "M" }]);
});

Deno.test("outside a work tree git gives nothing: a GitError that says so", async () => {
  await using place = await gitPlace();
  await assert.rejects(
    readStaged(place.dir),
    (error: unknown) => error instanceof GitError && error.reason === "not-a-work-tree",
  );
});
