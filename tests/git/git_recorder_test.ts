/**
 * The git recorder: where the work lives when git answers; otherwise undefined (never a throw) and one
 * `info` line in its life saying why: not a work tree, git missing from PATH, git hanging past its time
 * (a stand-in `git` on PATH that sleeps, killed on time); those two read in a child process
 * (fixtures/record_once.ts), as PATH is the whole test process's. No permission to run git is checked
 * through a real server process started without it (tests/e2e/git_record_e2e_test.ts).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createGitRecorder, sharedAfter } from "../../lib/git/git_recorder.ts";
import { gitPlace } from "../support/git_repos.ts";
import { type LogRecord, recordingLogger } from "../support/logs.ts";
import { serverEnv } from "../support/env.ts";
import { CONFIG } from "../support/paths.ts";

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

Deno.test("outside a work tree git is not asked again for a while; once the rest is over, a new work tree is recorded", async () => {
  await using place = await gitPlace();
  const dir = `${place.dir}/later`;
  await Deno.mkdir(dir);
  const resting = createGitRecorder({ dir, log: recordingLogger().log });
  const eager = createGitRecorder({ dir, log: recordingLogger().log, retryMs: 0 });
  assert.equal(await resting(), undefined);
  assert.equal(await eager(), undefined);
  const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir, stdout: "null" }).output();
  await git("init", "-q", "-b", "main");
  await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
  assert.equal(await resting(), undefined, "resting: git is not run");
  assert.deepEqual((await eager())?.dirty, ["a.txt"]);
});

const RECORD_ONCE = fileURLToPath(new URL("./fixtures/record_once.ts", import.meta.url));

/** What one record in a process of its own gave (fixtures/record_once.ts). */
interface RecordOnce {
  result?: unknown;
  records: LogRecord[];
  took: number;
}

/**
 * Reads `dir` once through a recorder in a child process whose PATH is `path` alone; the test process's
 * PATH is never changed, as the test files running beside this one spawn git through it.
 */
async function recordWithPath(path: string, dir: string, timeoutMs?: number): Promise<RecordOnce> {
  const args = ["run", "-A", "--config", CONFIG, RECORD_ONCE, dir];
  if (timeoutMs !== undefined) args.push(String(timeoutMs));
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    env: serverEnv({ PATH: path }),
    clearEnv: true,
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, decoder.decode(output.stderr));
  return JSON.parse(decoder.decode(output.stdout));
}

Deno.test("git missing from PATH: nothing, one line (reason missing)", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const empty = `${place.dir}/empty-bin`;
  await Deno.mkdir(empty);
  const { result, records } = await recordWithPath(empty, repo.dir);
  assert.equal(result, undefined);
  assert.deepEqual(records.map((r) => r.reason), ["missing"]);
});

Deno.test("a git that hangs is killed on time: nothing, one line (reason timeout)", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  const bin = `${place.dir}/hung-bin`;
  await Deno.mkdir(bin);
  await Deno.writeTextFile(`${bin}/git`, "#!/bin/sh\nexec sleep 30\n");
  await Deno.chmod(`${bin}/git`, 0o755);
  const { result, records, took } = await recordWithPath(`${bin}:/usr/bin:/bin`, repo.dir, 300);
  assert.equal(result, undefined);
  assert.ok(took >= 300 && took < 2000, `stopped after ${took} ms`);
  assert.deepEqual(records.map((r) => r.reason), ["timeout"]);
  assert.match(String(records[0]!.why), /took longer than 0\.3 s/);
});

Deno.test("records made at once each see the work tree as it was after they asked, and a change made between reads is seen", async () => {
  await using place = await gitPlace();
  const repo = await place.init();
  await repo.write("a.txt", "a\n");
  await repo.commit("init");
  const read = createGitRecorder({ dir: repo.dir, log: recordingLogger().log });
  const first = await Promise.all([read(), read(), read()]);
  assert.deepEqual(first.map((s) => s?.dirty_count), [0, 0, 0]);
  await repo.write("b.txt", "b\n");
  const during = read();
  await repo.write("c.txt", "c\n"); // written while the read above may run: a call after it sees it
  const after = await read();
  assert.ok((await during)!.dirty_count! >= 1);
  assert.deepEqual(after?.dirty, ["b.txt", "c.txt"]);
});

/** A read whose end the test decides: each call is counted and waits for `finish(i)`. */
function controlledReads() {
  const ends: ((value: number) => void)[] = [];
  const read = () => new Promise<number>((resolve) => ends.push(resolve));
  return { read, started: () => ends.length, finish: (i: number) => ends[i]!(i) };
}

Deno.test("sharedAfter: calls during a read share the one read that starts after it, never the running one", async () => {
  const { read, started, finish } = controlledReads();
  const shared = sharedAfter(read);
  const a = shared();
  assert.equal(started(), 1);
  const [b, c, d] = [shared(), shared(), shared()];
  assert.equal(started(), 1, "the later calls wait for the running read to end");
  finish(0);
  assert.equal(await a, 0);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(started(), 2, "one more read for the three calls");
  const e = shared(); // the second read runs: e waits for a third
  finish(1);
  assert.deepEqual(await Promise.all([b, c, d]), [1, 1, 1]);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(started(), 3);
  finish(2);
  assert.equal(await e, 2);
  const f = shared();
  assert.equal(started(), 4, "with no read running a call starts one at once");
  finish(3);
  assert.equal(await f, 3);
});

Deno.test("sharedAfter: a failed read fails its callers, and the calls waiting on it still get a read of their own", async () => {
  let n = 0;
  let fail: (error: Error) => void = () => {};
  const shared = sharedAfter(() =>
    n++ === 0 ? new Promise<number>((_, reject) => (fail = reject)) : Promise.resolve(n)
  );
  const a = shared();
  const b = shared();
  fail(new Error("git failed"));
  await assert.rejects(a, /git failed/);
  assert.equal(await b, 2);
});
