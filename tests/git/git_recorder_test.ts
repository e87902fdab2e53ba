/**
 * The git recorder: where the work lives when git answers; otherwise undefined (never a throw) and one
 * `info` line in its life saying why: not a work tree, git missing from PATH, git hanging past its time
 * (a stand-in `git` on PATH that sleeps, killed on time). No permission to run git is checked through a
 * real server process started without it (tests/e2e/git_record_e2e_test.ts).
 */
import assert from "node:assert/strict";
import { createGitRecorder } from "../../lib/git/git_recorder.ts";
import { gitPlace } from "../support/git_repos.ts";
import { recordingLogger } from "../support/logs.ts";

Deno.test("the recorder reads the work tree it was given", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  const head = await repo.commit("init");
  const { log, records } = recordingLogger();
  const read = createGitRecorder({ dir: repo.dir, log });
  assert.deepEqual(await read(), { worktree: repo.dir, branch: "main", head, dirty_count: 0 });
  assert.deepEqual(records, []);
});

Deno.test("outside a work tree: nothing, and one info line for the recorder's life saying why", async () => {
  await using place = await gitPlace();
  const { log, records } = recordingLogger();
  const read = createGitRecorder({ dir: place.dir, log });
  assert.equal(await read(), undefined);
  assert.equal(await read(), undefined);
  assert.equal(records.length, 1, JSON.stringify(records));
  assert.equal(records[0]!.level, "info");
  assert.equal(records[0]!.msg, "where work lives is not recorded");
  assert.equal(records[0]!.reason, "not-a-work-tree");
  assert.equal(records[0]!.dir, place.dir);
});

/** Runs `body` with PATH set to `path` alone, restoring it after. */
async function withPath<T>(path: string, body: () => Promise<T>): Promise<T> {
  const before = Deno.env.get("PATH");
  Deno.env.set("PATH", path);
  try {
    return await body();
  } finally {
    if (before === undefined) Deno.env.delete("PATH");
    else Deno.env.set("PATH", before);
  }
}

Deno.test("git missing from PATH: nothing, one line (reason missing)", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const empty = `${place.dir}/empty-bin`;
  await Deno.mkdir(empty);
  const { log, records } = recordingLogger();
  const read = createGitRecorder({ dir: repo.dir, log });
  assert.equal(await withPath(empty, read), undefined);
  assert.deepEqual(records.map((r) => r.reason), ["missing"]);
});

Deno.test("a git that hangs is killed on time: nothing, one line (reason timeout)", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const bin = `${place.dir}/hung-bin`;
  await Deno.mkdir(bin);
  await Deno.writeTextFile(`${bin}/git`, "#!/bin/sh\nexec sleep 30\n");
  await Deno.chmod(`${bin}/git`, 0o755);
  const { log, records } = recordingLogger();
  const read = createGitRecorder({ dir: repo.dir, log, timeoutMs: 300 });
  const started = performance.now();
  assert.equal(await withPath(`${bin}:/usr/bin:/bin`, read), undefined);
  const took = performance.now() - started;
  assert.ok(took >= 300 && took < 2000, `stopped after ${took} ms`);
  assert.deepEqual(records.map((r) => r.reason), ["timeout"]);
  assert.match(String(records[0]!.why), /took longer than 0\.3 s/);
});
