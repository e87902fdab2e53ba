/**
 * Deno KV: what interrupted writes leave behind is reclaimed at the next start (docs/troubleshooting.md "Limits"),
 * and only that: a live writer's staging is kept. The crash tests kill writers of big changes with
 * SIGKILL in the middle of them, several times, then start a store and measure what is stored against
 * what is live: real servers started as `deno task stdio` starts them (issue 22's scenario), and a
 * writer of big changes in a loop (fixtures/big_writer.ts).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { LEASE_MS } from "../../lib/store/kv/liveness.ts";
import { openStore } from "../../lib/store/open_store.ts";
import { exportStore, importStore } from "../../lib/store/transfer.ts";
import { serverEnv } from "../support/env.ts";
import { recordingLogger } from "../support/logs.ts";
import { CONFIG, MAIN, ROOT } from "../support/paths.ts";
import { Client, StdioClientTransport } from "../support/sdk_client.ts";
import { lines } from "../support/streams.ts";

/** The permissions `deno task stdio` gives the server (deno.json): no `--allow-all`, so no `/proc`. */
const STDIO_TASK = [
  "run",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--config",
  CONFIG,
  MAIN,
  "--stdio",
];

/** Random text (400 tasks of it make a change of about 850 KB, more than one Deno KV commit). */
function noise(length: number): string {
  const bytes = new Uint8Array(length / 2);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Sum of the key and value bytes of every entry (keys as their JSON text). */
async function storedBytes(path: string): Promise<number> {
  const kv = await Deno.openKv(path);
  try {
    let bytes = 0;
    for await (const e of kv.list<unknown>({ prefix: [] })) {
      bytes += JSON.stringify(e.key).length + (e.value instanceof Uint8Array ? e.value.byteLength : 8);
    }
    return bytes;
  } finally {
    kv.close();
  }
}

/** The generations staged and not yet published that already hold task records. */
async function stagedGenerations(kv: Deno.Kv): Promise<Set<string>> {
  const gens = new Set<string>();
  for await (const e of kv.list<Uint8Array>({ prefix: ["gc", "g"] })) {
    if (!JSON.parse(new TextDecoder().decode(e.value)).staged) continue;
    for await (const _ of kv.list({ prefix: ["t", e.key[2]!] }, { limit: 1 })) gens.add(String(e.key[2]));
  }
  return gens;
}

/**
 * Starts a server as `deno task stdio` does on KV_PATH `path` and sends a createTask of a new session
 * (400 tasks, 2,000-character descriptions). `kill`: SIGKILL it as soon as the change's staged records
 * begin to land (at 55-90% of its run); else wait for the reply and stop it cleanly. Returns whether the kill left staged records behind.
 */
async function bigCreate(path: string, session: string, kill: boolean): Promise<boolean> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: STDIO_TASK,
    env: serverEnv({ KV_PATH: path, HISTORY_SIZE: "0", LOG_LEVEL: "error" }),
    cwd: ROOT,
    stderr: "ignore",
  });
  const client = new Client({ name: "kv-reclaim-test", version: "0.0.0" });
  await client.connect(transport);
  const tasks = Array.from(
    { length: 400 },
    (_, i) => ({ id: `${session}.${i}`, name: `task ${i}`, description: noise(2000) }),
  );
  const reply = client.callTool({
    name: "createTask",
    arguments: { sessionId: session, name: session, tasks },
  });
  if (!kill) {
    const result = await reply;
    assert.ok(!result.isError, JSON.stringify(result.content));
    await client.close();
    return false;
  }
  const kv = await Deno.openKv(path);
  try {
    const before = await stagedGenerations(kv);
    const ours = async () => [...await stagedGenerations(kv)].find((gen) => !before.has(gen));
    let answered = false;
    // Settled either way (the connection closes under it once killed).
    reply.then(() => (answered = true), () => (answered = true));
    let gen: string | undefined;
    while (!answered && !(gen = await ours())) await new Promise((resolve) => setTimeout(resolve, 1));
    const ended = new Promise<void>((resolve) => (client.onclose = resolve));
    Deno.kill(transport.pid!, "SIGKILL");
    await ended;
    return gen !== undefined && (await stagedGenerations(kv)).has(gen);
  } finally {
    kv.close();
    await client.close().catch(() => {});
  }
}

Deno.test("Deno KV: after servers started as by deno task stdio were killed during big createTasks, one clean start brings keys and values within 1.25x of the live data (the file within 2.5x)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-kv-reclaim-" });
  const path = `${dir}/store.sqlite`;
  const fresh = `${dir}/fresh.sqlite`;
  try {
    await bigCreate(path, "s0", false);
    // Kills until six of them left a staged change behind, the last one among them (so the clean start
    // has something to reclaim); a kill may come too late, after the change was published.
    let runs = 0;
    let hits = 0;
    let last = false;
    while ((hits < 6 || !last) && runs < 16) {
      last = await bigCreate(path, `s${++runs}`, true);
      if (last) hits++;
    }
    assert.ok(
      last && hits >= 4,
      `${hits} of ${runs} kills left a staged change behind: this run proves little`,
    );

    // One clean start, 3 s, a clean stop (its input closes).
    const server = new Deno.Command(Deno.execPath(), {
      args: STDIO_TASK,
      env: serverEnv({ KV_PATH: path, HISTORY_SIZE: "0" }),
      cwd: ROOT,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const log = new Response(server.stderr).text();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await server.stdin.close();
    assert.equal((await server.status).code, 0);
    assert.match(await log, /reclaimed what interrupted writes left/, "the start says what it reclaimed");

    const store = await KvStore.open(path);
    const copy = await KvStore.open(fresh);
    try {
      await importStore(copy, await exportStore(store));
    } finally {
      await store.close();
      await copy.close();
    }
    const stored = await storedBytes(path);
    const live = await storedBytes(fresh);
    const fileOf = async (p: string) => (await Deno.stat(p)).size;
    const file = await fileOf(path);
    const freshFile = await fileOf(fresh);
    console.log(
      `${hits} of ${runs} kills left a staged change; keys and values ${stored} B against ${live} B for a fresh import (${
        (stored / live).toFixed(2)
      }x); SQLite file ${file} B against ${freshFile} B (${(file / freshFile).toFixed(2)}x)`,
    );
    assert.ok(stored <= 1.25 * live, `keys and values ${stored} B for ${live} B of live data`);
    assert.ok(file <= 2.5 * freshFile, `SQLite file ${file} B for ${freshFile} B`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Deno KV: a start that cannot reclaim what a live writer staged says so in the log", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-kv-reclaim-" });
  const path = `${dir}/store.sqlite`;
  const writer = await KvStore.open(path);
  const kv = await Deno.openKv(path);
  try {
    await writer.space("default").listSessions();
    const owner = String((await Array.fromAsync(kv.list({ prefix: ["live"] })))[0]!.key[1]);
    await stage(kv, "live-writer", owner);
    await stage(kv, "dead-writer", "nobody");
    const { log, records } = recordingLogger();
    const store = await openStore({ kvPath: path }, log);
    await store.space("default").listSessions(); // queued after the start's sweep
    await store.close();
    const said = records.find((r) => r.msg.startsWith("cannot reclaim yet"));
    assert.ok(said, JSON.stringify(records));
    assert.equal(said.level, "warn");
    assert.equal(said.writesKept, 1);
    assert.ok(Number(said.keysDeleted) >= 1, "what the dead writer staged was reclaimed");
  } finally {
    kv.close();
    await writer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

const WRITER = fileURLToPath(new URL("./fixtures/big_writer.ts", import.meta.url));
const KILLS = 8;

/** Runs the writer until it has begun a random 2–5 changes, waits a random moment inside one, kills it. */
async function runAndKill(path: string, run: number): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, WRITER, path, String(run)],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const target = 2 + Math.floor(Math.random() * 4);
  let begun = 0;
  let started!: () => void;
  const enough = new Promise<void>((resolve) => (started = resolve));
  // Read on after the target (a closed pipe would end the writer by itself).
  const reading = (async () => {
    for await (const line of lines(child.stdout)) {
      if (line.startsWith("begin") && ++begun >= target) started();
    }
  })();
  await Promise.race([enough, child.status]);
  await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 200));
  try {
    child.kill("SIGKILL");
  } catch {
    // Ended by itself: the check below says why.
  }
  const status = await child.status;
  await reading;
  assert.equal(status.signal, "SIGKILL", `writer run ${run} ended by itself: ${await stderr}`);
}

/** Bytes stored in the KV: in total, reachable from the session metas and works, and garbage. */
async function measure(
  path: string,
): Promise<{ total: number; live: number; garbage: number; staged: number }> {
  const kv = await Deno.openKv(path);
  try {
    const entries = await Array.fromAsync(kv.list<unknown>({ prefix: [] }));
    const gens = new Set<string>();
    const lines = new Set<string>();
    const decode = (value: Uint8Array) => JSON.parse(new TextDecoder().decode(value));
    for (const e of entries) {
      if (e.key[0] === "m") {
        const meta = decode(e.value as Uint8Array);
        gens.add(meta.gen);
        if (meta.line) lines.add(meta.line);
      }
    }
    let total = 0;
    let live = 0;
    let staged = 0;
    for (const e of entries) {
      const size = JSON.stringify(e.key).length + (e.value instanceof Uint8Array ? e.value.byteLength : 8);
      total += size;
      const [tag, owner] = e.key;
      const reachable = tag === "t" || tag === "l"
        ? gens.has(owner as string)
        : tag === "h" || tag === "hd" || tag === "hb"
        ? lines.has(owner as string)
        : tag !== "gc";
      if (reachable) live += size;
      if (tag === "gc") staged++;
    }
    return { total, live, garbage: total - live, staged };
  } finally {
    kv.close();
  }
}

Deno.test(`Deno KV: after ${KILLS} writers were killed during big changes, the next start reclaims their garbage (within 2x the live data)`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-kv-reclaim-" });
  const path = `${dir}/store.sqlite`;
  try {
    let leftBehind = 0;
    for (let run = 0; run < KILLS; run++) {
      await runAndKill(path, run);
      leftBehind = Math.max(leftBehind, (await measure(path)).garbage);
    }
    // Each writer's start reclaims what the one before left; the last kill's garbage is still there.
    const before = await measure(path);
    assert.ok(leftBehind > 0, "the kills left garbage behind (else this test proves nothing)");

    const store = await KvStore.open(path);
    await store.space("default").listSessions(); // queued after the start's sweep
    await store.close();

    const after = await measure(path);
    const fileBytes = (await Deno.stat(path)).size;
    console.log(
      `after ${KILLS} kills: garbage before restart ${before.garbage} B (most seen ${leftBehind} B), after restart ${after.garbage} B; live ${after.live} B, stored ${after.total} B (${
        (after.total / after.live).toFixed(2)
      }x); SQLite file ${fileBytes} B`,
    );
    assert.equal(after.staged, 0, "no garbage marker is left");
    assert.equal(after.garbage, 0, "everything unreachable is reclaimed at the start");
    assert.ok(after.total <= 2 * after.live, `stored ${after.total} B for ${after.live} B of live data`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Writes a staged marker for generation `gen` (with one task key) owned by `owner`. */
async function stage(kv: Deno.Kv, gen: string, owner: string): Promise<void> {
  const marker = { at: Date.now(), staged: true, owner };
  await kv.set(["gc", "g", gen], new TextEncoder().encode(JSON.stringify(marker)));
  await kv.set(["t", gen, "x"], new Uint8Array(8));
}

/** The generations that still have a staged marker, and those that still have task keys. */
async function staging(kv: Deno.Kv): Promise<{ markers: string[]; tasks: string[] }> {
  const markers = (await Array.fromAsync(kv.list({ prefix: ["gc", "g"] }))).map((e) => String(e.key[2]));
  const tasks = (await Array.fromAsync(kv.list({ prefix: ["t"] }))).map((e) => String(e.key[1]));
  return { markers: markers.sort(), tasks: [...new Set(tasks)].sort() };
}

Deno.test("Deno KV: a start keeps what a live writer is staging and reclaims what a dead one staged", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-kv-reclaim-" });
  const path = `${dir}/store.sqlite`;
  const kv = await Deno.openKv(path);
  try {
    const writer = await KvStore.open(path);
    await writer.space("default").listSessions();
    const owners = await Array.fromAsync(kv.list<Uint8Array>({ prefix: ["live"] }));
    assert.equal(owners.length, 1, "an open store holds a lease");
    const owner = String(owners[0]!.key[1]);
    // The writer's lock file is its own: the leases made up below name none.
    const { lock: _lock, ...own } = JSON.parse(new TextDecoder().decode(owners[0]!.value));
    const lease = (value: Record<string, unknown>) => new TextEncoder().encode(JSON.stringify(value));
    const later = Date.now() + LEASE_MS;

    await stage(kv, "live-writer", owner);
    await stage(kv, "writer-elsewhere", "elsewhere");
    await kv.set(["live", "elsewhere"], lease({ until: later, machine: "another machine", pid: own.pid }));
    await stage(kv, "expired-lease", "expired");
    await kv.set(["live", "expired"], lease({ until: Date.now() - 1 }));
    await stage(kv, "no-lease", "nobody");
    if (own.machine !== undefined) {
      // Same machine: a process that no longer runs, and a PID reused by another process, are dead at once.
      await stage(kv, "killed-writer", "killed");
      await kv.set(["live", "killed"], lease({ ...own, until: later, pid: 2 ** 22 + 1 }));
      await stage(kv, "reused-pid", "reused");
      await kv.set(["live", "reused"], lease({ ...own, until: later, started: "0" }));
    }

    const starting = await KvStore.open(path);
    await starting.space("default").listSessions();
    await starting.close();
    assert.deepEqual(await staging(kv), {
      markers: ["live-writer", "writer-elsewhere"],
      tasks: ["live-writer", "writer-elsewhere"],
    });
    assert.deepEqual(
      (await Array.fromAsync(kv.list({ prefix: ["live"] }))).map((e) => e.key[1]).sort(),
      ["elsewhere", owner].sort(),
      "dead leases are dropped",
    );

    await writer.close();
    const next = await KvStore.open(path);
    await next.space("default").listSessions();
    await next.close();
    assert.deepEqual(await staging(kv), { markers: ["writer-elsewhere"], tasks: ["writer-elsewhere"] });
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Deno KV: a writer that holds its lock file is alive even when its lease ran out (renewals held up by a busy database)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-kv-reclaim-" });
  const path = `${dir}/store.sqlite`;
  const writer = await KvStore.open(path);
  const kv = await Deno.openKv(path);
  try {
    await writer.space("default").listSessions();
    const [entry] = await Array.fromAsync(kv.list<Uint8Array>({ prefix: ["live"] }));
    const owner = String(entry!.key[1]);
    const lease = JSON.parse(new TextDecoder().decode(entry!.value));
    assert.ok(typeof lease.lock === "string", "a store on a local KV_PATH holds a lock file");
    await kv.set(entry!.key, new TextEncoder().encode(JSON.stringify({ ...lease, until: Date.now() - 1 })));
    await stage(kv, "live-writer", owner);

    const starting = await KvStore.open(path);
    await starting.space("default").listSessions();
    await starting.close();
    assert.deepEqual(await staging(kv), { markers: ["live-writer"], tasks: ["live-writer"] });
    assert.equal((await kv.get(entry!.key)).value !== null, true, "its lease is not dropped");
  } finally {
    kv.close();
    await writer.close();
    await Deno.remove(dir, { recursive: true });
  }
});
