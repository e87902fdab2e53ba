/**
 * Start-up checks of FILE_PATH and KV_PATH (docs/troubleshooting.md "The store: what you see when things go wrong"): a store
 * that cannot be used stops the server, over stdio and HTTP alike, with one JSON line on stderr and
 * exit code 1, and leaves the file as it was; a missing directory is created; an empty file is a new
 * empty store.
 */
import assert from "node:assert/strict";
import { call, ok, spawnStdio } from "../support/harness.ts";
import { bindSelf, MOUNTS_UNAVAILABLE } from "../support/mounts.ts";
import { freePort } from "../support/processes.ts";
import { mainArgs, runMain, type RunOutput, runToEnd } from "../support/server_process.ts";

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-start-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Starts the server over stdio and over HTTP with `env`; both must refuse to start. */
async function bothRefuse(env: Record<string, string>, names: RegExp): Promise<void> {
  const stdio = await runMain({ env });
  const http = await runToEnd(mainArgs(["--http"]), {
    env: { LOG_LEVEL: "warn", PORT: String(freePort()), HOST: "127.0.0.1", ...env },
  });
  for (const [transport, out] of [["stdio", stdio], ["http", http]] as [string, RunOutput][]) {
    assert.equal(out.code, 1, `${transport}: exit code (stderr: ${out.stderr})`);
    const lines = out.stderr.trim().split("\n");
    assert.equal(lines.length, 1, `${transport}: one line on stderr, got:\n${out.stderr}`);
    const record = JSON.parse(lines[0]!);
    assert.equal(record.level, "error");
    assert.equal(record.msg, "cannot start");
    assert.match(record.error, names, `${transport}: the line says what is wrong`);
    assert.equal(out.stdout, "", `${transport}: nothing on stdout`);
  }
}

Deno.test("start-up: a FILE_PATH whose parent is a regular file stops the server with one line", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/plain`, "x");
    await bothRefuse(
      { FILE_PATH: `${dir}/plain/store.json` },
      /directory .*plain of FILE_PATH .*plain\/store\.json: a file that is not a directory is in the way/,
    );
  });
});

Deno.test("start-up: a FILE_PATH that is a directory stops the server with one line", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/store.json`);
    await bothRefuse({ FILE_PATH: `${dir}/store.json` }, /FILE_PATH .*store\.json is not a file/);
  });
});

Deno.test("start-up: an unparseable FILE_PATH stops the server and is left untouched", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/store.json`;
    await Deno.writeTextFile(path, '{"version":1,"sessions":');
    await bothRefuse({ FILE_PATH: path }, /FILE_PATH .*store\.json is not valid JSON/);
    assert.equal(await Deno.readTextFile(path), '{"version":1,"sessions":');
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["store.json"], "nothing else created");
  });
});

Deno.test("start-up: a directory that cannot be written stops the server (FILE_PATH and KV_PATH)", {
  ignore: MOUNTS_UNAVAILABLE,
}, async () => {
  await withDir(async (dir) => {
    const data = `${dir}/data`;
    await Deno.mkdir(data);
    await Deno.writeTextFile(`${data}/store.json`, "");
    await using ro = await bindSelf(data);
    await ro.readOnly(true);
    await bothRefuse(
      { FILE_PATH: `${data}/store.json` },
      /Cannot write in the directory of FILE_PATH .*[Rr]ead-only/,
    );
    await bothRefuse({ KV_PATH: `${data}/store.sqlite` }, /KV_PATH .*[Rr]ead-only/);
  });
});

Deno.test("start-up: a KV_PATH that is no database, or under a regular file, stops the server", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/store.sqlite`;
    await Deno.writeTextFile(path, "this is not a database, and must stay as it is\n".repeat(100));
    const before = await Deno.readFile(path);
    await bothRefuse({ KV_PATH: path }, /Deno KV .*store\.sqlite.*not a database/);
    assert.deepEqual(await Deno.readFile(path), before);
    await bothRefuse(
      { KV_PATH: `${path}/inner.sqlite` },
      /KV_PATH .*inner\.sqlite: a file that is not a directory is in the way/,
    );
  });
});

Deno.test("start-up: missing directories of FILE_PATH and KV_PATH are created", async () => {
  await withDir(async (dir) => {
    const file = await runMain({ env: { FILE_PATH: `${dir}/a/b/store.json` } });
    assert.equal(file.code, 0, file.stderr);
    assert.ok((await Deno.stat(`${dir}/a/b`)).isDirectory);
    const kv = await runMain({ env: { KV_PATH: `${dir}/c/d/store.sqlite` } });
    assert.equal(kv.code, 0, kv.stderr);
    assert.ok((await Deno.stat(`${dir}/c/d/store.sqlite`)).isFile);
  });
});

Deno.test("start-up: an empty FILE_PATH is a new empty store", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/store.json`;
    await Deno.writeTextFile(path, "");
    await using conn = await spawnStdio({ env: { FILE_PATH: path } });
    const listed = await call(conn.client, "listTasks", {});
    assert.ok(!listed.isError);
    await ok(conn.client, "createTask", { name: "First" });
    const doc = JSON.parse(await Deno.readTextFile(path));
    assert.equal(doc.sessions.default[0].name, "First");
  });
});
