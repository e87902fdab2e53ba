/**
 * Which store processes on a Deno KV are alive, so that a start can reclaim what a killed writer
 * staged without touching what a live one is staging (sweeper.ts).
 *
 * Each open store holds a lease `["live", owner]` = `{ until, lock?, machine?, pid?, started? }` and
 * renews it every third of {@link LEASE_MS}; closing deletes it. A store on a local `KV_PATH` also
 * holds an exclusive advisory lock on a file of its own, `<KV_PATH>-live/<owner>` (`lock`), which the
 * operating system releases when the process dies however it dies: a lease whose lock file can be
 * locked by someone else is dead at once (so a restart right after a crash reclaims everything), and
 * one whose lock is held is alive, even past `until`. Otherwise a lease past `until` is dead. This needs no more than the read and write access the store has
 * anyway (`/proc` needs `--allow-all` under Deno 2). Where `/proc` can be read, the same holds on one
 * machine (same boot and PID namespace) for a lease whose process no longer runs, or runs with another
 * start time (a reused PID). Elsewhere (another machine, Deno Deploy) the lease runs out after
 * {@link LEASE_MS}.
 */
import { z } from "zod";
import { decodeJsonAs, encodeJson } from "./codec.ts";
import { newName } from "./layout.ts";
import { whenUnlocked } from "./retry.ts";

/** How long a lease lasts without renewal. */
export const LEASE_MS = 30_000;

/** The key of an owner's lease (store-wide: outside every layout's prefix). */
export function leaseKey(owner: string): Deno.KvKey {
  return ["live", owner];
}

const LeaseSchema = z.object({
  until: z.number(),
  /** The file this owner holds locked while it runs (absolute path). */
  lock: z.string().optional(),
  machine: z.string().optional(),
  pid: z.number().optional(),
  started: z.string().optional(),
});
type LeaseValue = z.infer<typeof LeaseSchema>;

/** This machine and PID namespace, and this process's start time, where `/proc` tells them. */
interface ProcessIdentity {
  machine: string;
  pid: number;
  started: string;
}

function readProc(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/** A process's start time (field 22 of `/proc/PID/stat`); undefined when it does not run or is unknown. */
function startTimeOf(pid: number | "self"): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19];
}

function identity(): ProcessIdentity | undefined {
  const boot = readProc("/proc/sys/kernel/random/boot_id")?.trim();
  let pidNamespace: string | undefined;
  try {
    pidNamespace = Deno.readLinkSync("/proc/self/ns/pid");
  } catch {
    pidNamespace = undefined;
  }
  const started = startTimeOf("self");
  if (!boot || !pidNamespace || started === undefined) return undefined;
  return { machine: `${boot}/${pidNamespace}`, pid: Deno.pid, started };
}

/**
 * Whether someone holds `path` locked: false when this process could lock it (then it lets go again);
 * undefined when the file is not there or cannot be tried (the lease's time then decides).
 */
async function lockHeld(path: string): Promise<boolean | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return undefined;
  }
  try {
    if (!await file.tryLock(true)) return true;
    await file.unlock();
    return false;
  } catch {
    return undefined;
  } finally {
    file.close();
  }
}

/** Whether a lease read from the KV belongs to a live process, as far as this process can tell. */
export async function leaseAlive(lease: LeaseValue | undefined, now = Date.now()): Promise<boolean> {
  if (!lease) return false;
  // The lock file answers first: a writer whose renewals could not get through (a database held busy
  // for longer than a lease) is still alive while it holds its lock.
  const held = lease.lock === undefined ? undefined : await lockHeld(lease.lock);
  if (held !== undefined) return held;
  if (lease.until < now) return false;
  const self = identity();
  if (self && lease.machine === self.machine && lease.pid !== undefined) {
    return startTimeOf(lease.pid) === lease.started;
  }
  return true;
}

/** The owners whose leases are alive now. */
export async function livingOwners(kv: Deno.Kv, now = Date.now()): Promise<Set<string>> {
  const living = new Set<string>();
  for await (const e of kv.list<Uint8Array>({ prefix: ["live"] })) {
    const owner = e.key[1];
    if (typeof owner === "string" && await leaseAlive(decodeJsonAs(LeaseSchema, e.value), now)) {
      living.add(owner);
    }
  }
  return living;
}

/** Deletes leases that are dead (left by processes that did not close their store), and their lock files. */
export async function dropDeadLeases(kv: Deno.Kv, living: ReadonlySet<string>): Promise<void> {
  for await (const e of kv.list<Uint8Array>({ prefix: ["live"] })) {
    if (typeof e.key[1] === "string" && !living.has(e.key[1])) {
      const { ok } = await whenUnlocked(() => kv.atomic().check(e).delete(e.key).commit());
      const lock = ok ? decodeJsonAs(LeaseSchema, e.value)?.lock : undefined;
      if (lock !== undefined) await Deno.remove(lock).catch(() => {});
    }
  }
}

/** Where a store on the local database `path` keeps its lock file (see the module doc). */
export function lockDirOf(path: string): string {
  return `${path}-live`;
}

/** Creates and locks this owner's lock file in `dir`; undefined (no lock) when the file system refuses. */
async function takeLock(
  dir: string,
  owner: string,
): Promise<{ path: string; file: Deno.FsFile } | undefined> {
  try {
    await Deno.mkdir(dir, { recursive: true });
    const path = await Deno.realPath(dir) + "/" + owner;
    const file = await Deno.open(path, { read: true, write: true, createNew: true });
    if (await file.tryLock(true)) return { path, file };
    file.close();
  } catch {
    // No lock file: the lease's time (and /proc, where readable) decides whether this store is alive.
  }
  return undefined;
}

/** This store's lease: taken at open (which also proves the KV takes writes), renewed, released. */
export class Lease {
  /** The name this store writes into the markers of what it stages. */
  readonly owner = newName();
  readonly #kv: Deno.Kv;
  readonly #identity = identity();
  #lock: { path: string; file: Deno.FsFile } | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  private constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /**
   * Writes the lease and starts renewing it; throws when the KV refuses the write. With `lockDir`
   * (a local database: {@link lockDirOf}), first takes the lock file that proves this process alive.
   */
  static async take(kv: Deno.Kv, lockDir?: string): Promise<Lease> {
    const lease = new Lease(kv);
    if (lockDir !== undefined) lease.#lock = await takeLock(lockDir, lease.owner);
    try {
      await lease.#renew();
    } catch (error) {
      await lease.#unlock();
      throw error;
    }
    const timer = setInterval(() => lease.#renew().catch(() => {}), LEASE_MS / 3);
    Deno.unrefTimer(timer);
    lease.#timer = timer;
    return lease;
  }

  /** Stops renewing and deletes the lease (its staging, if any, is then anyone's to sweep). */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await whenUnlocked(() => this.#kv.delete(leaseKey(this.owner))).catch(() => {});
    await this.#unlock();
  }

  async #unlock(): Promise<void> {
    const lock = this.#lock;
    this.#lock = undefined;
    if (!lock) return;
    lock.file.close(); // closing lets go of the lock
    await Deno.remove(lock.path).catch(() => {});
  }

  #renew(): Promise<unknown> {
    const value: LeaseValue = {
      until: Date.now() + LEASE_MS,
      ...(this.#lock ? { lock: this.#lock.path } : {}),
      ...this.#identity,
    };
    return whenUnlocked(() => this.#kv.set(leaseKey(this.owner), encodeJson(value)));
  }
}
