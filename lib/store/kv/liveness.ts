/**
 * Which store processes on a Deno KV are alive, so that a start can reclaim what a killed writer
 * staged without touching what a live one is staging (sweeper.ts).
 *
 * Each open store holds a lease `["live", owner]` = `{ until, machine?, pid?, started? }` and renews
 * it every third of {@link LEASE_MS}; closing deletes it. A lease past `until` is dead. On the same
 * machine (same boot and PID namespace, read from `/proc`) a lease whose process no longer runs, or
 * runs with another start time (a reused PID), is dead at once, so a restart right after a crash
 * reclaims everything. Elsewhere (another machine, Deno Deploy) the lease runs out after
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

/** Whether a lease read from the KV belongs to a live process, as far as this process can tell. */
export function leaseAlive(lease: LeaseValue | undefined, now = Date.now()): boolean {
  if (!lease || lease.until < now) return false;
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
    if (typeof owner === "string" && leaseAlive(decodeJsonAs(LeaseSchema, e.value), now)) living.add(owner);
  }
  return living;
}

/** Deletes leases that are dead (left by processes that did not close their store). */
export async function dropDeadLeases(kv: Deno.Kv, living: ReadonlySet<string>): Promise<void> {
  for await (const e of kv.list({ prefix: ["live"] })) {
    if (typeof e.key[1] === "string" && !living.has(e.key[1])) {
      await whenUnlocked(() => kv.atomic().check(e).delete(e.key).commit());
    }
  }
}

/** This store's lease: taken at open (which also proves the KV takes writes), renewed, released. */
export class Lease {
  /** The name this store writes into the markers of what it stages. */
  readonly owner = newName();
  readonly #kv: Deno.Kv;
  readonly #identity = identity();
  #timer: ReturnType<typeof setInterval> | undefined;

  private constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Writes the lease and starts renewing it; throws when the KV refuses the write. */
  static async take(kv: Deno.Kv): Promise<Lease> {
    const lease = new Lease(kv);
    await lease.#renew();
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
  }

  #renew(): Promise<unknown> {
    const value: LeaseValue = { until: Date.now() + LEASE_MS, ...this.#identity };
    return whenUnlocked(() => this.#kv.set(leaseKey(this.owner), encodeJson(value)));
  }
}
