/**
 * Deno KV: what interrupted writes leave behind is reclaimed at the next start (README "Limits"),
 * and only that: a live writer's staging is kept. The crash test kills a writer of big changes
 * (fixtures/big_writer.ts) with SIGKILL in the middle of its changes, several times, then starts a
 * store and measures what is reachable against what is stored.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { LEASE_MS } from "../../lib/store/kv/liveness.ts";
import { CONFIG } from "../support/paths.ts";
import { lines } from "../support/streams.ts";

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
    const own = JSON.parse(new TextDecoder().decode(owners[0]!.value));
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
