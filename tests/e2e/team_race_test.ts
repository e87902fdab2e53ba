/**
 * Teams of agents racing across processes (issue 21; README "Teams of agents"): three real
 * `main.ts --stdio` processes with four agents each (the agent named per call) on one FILE_PATH, and
 * on one KV_PATH, drain a parallel plan of 300 leaves through claimTask/completeTask at once. Every
 * claimTask reply is recorded with its claim and every completeTask success counted, so afterwards:
 * each leaf was claimed once and completed once by its claimant, no two claims on one leaf were ever
 * live together, blocked leaves waited for their blocker, and the stored tree is whole.
 *
 * Then a worker process is SIGKILLed while its four agents hold leaves on 2-second leases: the other
 * processes' agents are refused those leaves while the leases are live and take them over
 * (`taken_over_from` naming the dead agent) once they end, never before. Times compared are the
 * servers' clocks (`claim.since`, `expires_at`, read inside the store's atomic step) and this
 * process's clock around each call, one machine's clock.
 */
import assert from "node:assert/strict";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { call, type Connection, ok, spawnStdio, type StdioConnection } from "../support/harness.ts";
import { sleep } from "../support/time.ts";

const SESSION = "race";
/** How long an agent with nothing ready waits before asking again (a back-off, not a synchronization). */
const BACK_OFF_MS = 20;

type StoreKind = "file" | "kv";

/** One claimTask reply that handed out a leaf, with this process's clock around the call. */
interface ClaimRecord {
  agent: string;
  leaf: string;
  /** The claim's `since` and `expires_at`, in milliseconds (the server's clock). */
  since: number;
  expires: number;
  renewed: boolean;
  takenOverFrom?: string;
  sent: number;
  received: number;
}

/** One claimTask reply with nothing ready: what it waited on, with the time the call was sent. */
interface WaitRecord {
  agent: string;
  sent: number;
  received: number;
  waitingOn: { id: string; agent: string; expires_at: string }[];
  blocked: number;
}

/** One completeTask success. */
interface CompleteRecord {
  agent: string;
  leaf: string;
  sent: number;
  received: number;
}

/** A refused call (none is expected): who, which tool, on what, and the error. */
interface ErrorRecord {
  agent: string;
  tool: string;
  leaf?: string;
  code: string;
  message: string;
}

/** Everything the agents saw, in the order the replies arrived. */
interface Journal {
  claims: ClaimRecord[];
  waits: WaitRecord[];
  completions: CompleteRecord[];
  errors: ErrorRecord[];
}

interface ClaimReply {
  task: { id: string; status: string } | null;
  claim?: { agent: string; since: string; expires_at: string };
  taken_over_from?: string;
  renewed?: boolean;
  waiting_on?: { id: string; name: string; agent: string; expires_at: string }[];
  blocked?: { id: string; blocked_by: string[] }[];
}

function newJournal(): Journal {
  return { claims: [], waits: [], completions: [], errors: [] };
}

/** The structured reply of a call, or undefined after journaling its error. */
async function journaled<T>(
  conn: Connection,
  journal: Journal,
  tool: string,
  args: Record<string, unknown> & { agent: string; id?: string },
): Promise<T | undefined> {
  const result = await call(conn.client, tool, { sessionId: SESSION, ...args });
  if (!result.isError) return result.structuredContent as T;
  const { code, message } = (result.structuredContent as { error: { code: string; message: string } }).error;
  journal.errors.push({ agent: args.agent, tool, ...(args.id ? { leaf: args.id } : {}), code, message });
  return undefined;
}

/** Calls claimTask and journals the reply; returns it (undefined when refused). */
async function claim(
  conn: Connection,
  agent: string,
  journal: Journal,
  extra: Record<string, unknown> = {},
): Promise<ClaimReply | undefined> {
  const sent = Date.now();
  const reply = await journaled<ClaimReply>(conn, journal, "claimTask", { agent, ...extra });
  const received = Date.now();
  if (!reply) return undefined;
  if (reply.task === null) {
    journal.waits.push({
      agent,
      sent,
      received,
      waitingOn: reply.waiting_on ?? [],
      blocked: reply.blocked?.length ?? 0,
    });
    return reply;
  }
  assert.ok(reply.claim, `claimTask for ${agent} handed out ${reply.task.id} without a claim`);
  assert.equal(reply.claim.agent, agent, "a claim belongs to the agent that asked");
  assert.equal(reply.task.status, "in_progress");
  journal.claims.push({
    agent,
    leaf: reply.task.id,
    since: Date.parse(reply.claim.since),
    expires: Date.parse(reply.claim.expires_at),
    renewed: reply.renewed === true,
    ...(reply.taken_over_from ? { takenOverFrom: reply.taken_over_from } : {}),
    sent,
    received,
  });
  return reply;
}

/**
 * A worker: claimTask → completeTask until claimTask finds nothing ready, nothing held by others and
 * nothing blocked; with nothing ready but something held or blocked, it backs off and asks again.
 * Bounded by `deadline` (performance.now()).
 */
async function worker(conn: Connection, agent: string, journal: Journal, deadline: number): Promise<void> {
  const refusals = () => journal.errors.filter((e) => e.agent === agent).length;
  // A refusal is journaled (and fails the test afterwards); a few let the journal show what went wrong.
  while (refusals() < 3) {
    if (performance.now() > deadline) {
      journal.errors.push({ agent, tool: "worker", code: "DEADLINE", message: "not finished in time" });
      return;
    }
    const reply = await claim(conn, agent, journal);
    if (!reply) continue;
    if (reply.task === null) {
      if (!reply.waiting_on?.length && !reply.blocked?.length) return;
      await sleep(BACK_OFF_MS);
      continue;
    }
    const leaf = reply.task.id;
    const sent = Date.now();
    const args = { id: leaf, agent, resolution: `by ${agent}` };
    if (await journaled(conn, journal, "completeTask", args)) {
      journal.completions.push({ agent, leaf, sent, received: Date.now() });
    }
  }
}

/** A parallel root `plan` over `parents` parallel parents `p0…` of `leaves` leaves `p0.l0…` each. */
function parallelPlan(parents: number, leaves: number, blockedBy: Record<string, string[]> = {}) {
  return {
    sessionId: SESSION,
    id: "plan",
    name: "Race plan",
    parallel: true,
    tasks: Array.from({ length: parents }, (_, p) => ({
      id: `p${p}`,
      name: `Part ${p}`,
      parallel: true,
      ...(blockedBy[`p${p}`] ? { blocked_by: blockedBy[`p${p}`] } : {}),
      tasks: Array.from({ length: leaves }, (_, l) => ({ id: `p${p}.l${l}`, name: `Leaf ${p}.${l}` })),
    })),
  };
}

function leafIds(parents: number, leaves: number): string[] {
  return Array.from({ length: parents }, (_, p) => Array.from({ length: leaves }, (_, l) => `p${p}.l${l}`))
    .flat();
}

/**
 * Pairs of claims on one leaf by different agents that were live at the same time. A claim is live
 * from its `since` until its `expires_at` (its latest renewal's), or until the leaf was completed;
 * a leaf completed is never claimed again, so a later claim must start at or after the earlier one's
 * expiry. Returns one line per violation.
 */
function overlappingClaims(journal: Journal): string[] {
  const holdings = new Map<string, { agent: string; since: number; expires: number }[]>();
  for (const c of journal.claims) {
    const list = holdings.get(c.leaf) ?? [];
    const own = list.find((h) => h.agent === c.agent && c.renewed);
    if (own) own.expires = Math.max(own.expires, c.expires);
    else list.push({ agent: c.agent, since: c.since, expires: c.expires });
    holdings.set(c.leaf, list);
  }
  const problems: string[] = [];
  for (const [leaf, list] of holdings) {
    list.sort((a, b) => a.since - b.since);
    for (let i = 1; i < list.length; i++) {
      const before = list[i - 1]!;
      const after = list[i]!;
      if (after.since < before.expires) {
        problems.push(
          `${leaf}: ${after.agent} claimed it at ${
            new Date(after.since).toISOString()
          } while ${before.agent}'s ` +
            `claim was live until ${new Date(before.expires).toISOString()}`,
        );
      }
    }
  }
  return problems;
}

/** Counts per key. */
function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/** Every leaf of the stored tree, read by a fresh store on the place after the servers stopped. */
async function storedTree<T>(
  kind: StoreKind,
  path: string,
  read: (roots: readonly Task[], problems: string[]) => T,
): Promise<T> {
  const store: Store = kind === "file" ? await JsonFileStore.open(path) : await KvStore.open(path);
  try {
    return await store.space("default").readTree(SESSION, (tree) => {
      assert.ok(tree, "the session is stored");
      return read(tree.roots, invariantViolations(tree));
    });
  } finally {
    await store.close();
  }
}

function leavesOf(tasks: readonly Task[]): Task[] {
  return tasks.flatMap((t) => (t.tasks.length === 0 ? [t] : leavesOf(t.tasks)));
}

async function withPlace(
  kind: StoreKind,
  body: (env: Record<string, string>, path: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "checklist-race-" });
  const path = `${dir}/${kind === "file" ? "plan.json" : "plan.sqlite"}`;
  try {
    await body({ [kind === "file" ? "FILE_PATH" : "KV_PATH"]: path }, path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const PROCESSES = 3;
const AGENTS_PER_PROCESS = 4;
const PARENTS = 10;
const LEAVES_PER_PARENT = 30;

for (const kind of ["file", "kv"] as const) {
  const place = kind === "file" ? "FILE_PATH" : "KV_PATH";

  Deno.test(
    `3 processes × 4 agents on one ${place} drain 300 parallel leaves: each leaf claimed and completed exactly once, no two live claims on one leaf`,
    async () => {
      await withPlace(kind, async (env, path) => {
        const servers: StdioConnection[] = await Promise.all(
          Array.from({ length: PROCESSES }, () => spawnStdio({ env })),
        );
        const journal = newJournal();
        const all = leafIds(PARENTS, LEAVES_PER_PARENT);
        try {
          // The last part waits for the first: agents meet blocked leaves and must not start them early.
          await ok(
            servers[0]!.client,
            "createTask",
            parallelPlan(PARENTS, LEAVES_PER_PARENT, { p9: ["p0"] }),
          );
          const deadline = performance.now() + 45_000;
          const agents = servers.flatMap((conn, p) =>
            Array.from({ length: AGENTS_PER_PROCESS }, (_, a) => ({ conn, agent: `w${p}-${a}`, process: p }))
          );
          await Promise.all(agents.map(({ conn, agent }) => worker(conn, agent, journal, deadline)));

          // Every leaf handed out exactly once (0 double claims), never renewed or taken over.
          const claimed = countBy(journal.claims, (c) => c.leaf);
          const doubles = [...claimed].filter(([, n]) => n > 1);
          assert.deepEqual(doubles, [], "double claims");
          assert.deepEqual(overlappingClaims(journal), []);
          assert.deepEqual(journal.claims.filter((c) => c.renewed || c.takenOverFrom), []);
          assert.deepEqual(journal.errors, [], "refused calls");
          assert.deepEqual([...claimed.keys()].sort(), [...all].sort(), "every leaf was claimed");

          // Every leaf completed exactly once, by the agent that claimed it.
          const completed = countBy(journal.completions, (c) => c.leaf);
          assert.equal(completed.size, all.length, "every leaf was completed");
          assert.deepEqual([...completed].filter(([, n]) => n !== 1), [], "leaves completed more than once");
          const claimant = new Map(journal.claims.map((c) => [c.leaf, c.agent]));
          for (const c of journal.completions) assert.equal(c.agent, claimant.get(c.leaf), c.leaf);

          // p9 was blocked by p0: none of its leaves was claimed before p0's last leaf was being completed.
          const p0Done = Math.max(
            ...journal.completions.filter((c) => c.leaf.startsWith("p0.")).map((c) => c.sent),
          );
          const early = journal.claims.filter((c) => c.leaf.startsWith("p9.") && c.since < p0Done);
          assert.deepEqual(early, [], "leaves claimed before their blocker was done");

          // The work really was shared: agents of more than one process took leaves.
          const byProcess = countBy(journal.claims, (c) => c.agent.slice(0, c.agent.indexOf("-")));
          assert.ok(byProcess.size >= 2, `claims per process: ${JSON.stringify([...byProcess])}`);

          // Every process sees the plan done.
          for (const { client } of servers) {
            const { task } = await ok<{ task: Task }>(client, "getTask", { sessionId: SESSION, id: "plan" });
            assert.equal(task.status, "done");
          }
        } finally {
          await Promise.all(servers.map((conn) => conn.close()));
        }
        // The stored tree, read afresh: all done, no claim left, each leaf's resolution by its claimant.
        await storedTree(kind, path, (roots, problems) => {
          assert.deepEqual(problems, []);
          const leaves = leavesOf(roots);
          assert.equal(leaves.length, all.length);
          const claimant = new Map(journal.claims.map((c) => [c.leaf, c.agent]));
          for (const leaf of leaves) {
            assert.equal(leaf.status, "done", leaf.id);
            assert.equal(leaf.claim, undefined, `${leaf.id} keeps no claim once done`);
            assert.equal(leaf.resolution, `by ${claimant.get(leaf.id)}`);
          }
        });
      });
    },
  );

  Deno.test(`a SIGKILLed worker process's leaves on one ${place} are taken over by other processes' agents after their 2-second leases, not before`, async () => {
    await withPlace(kind, async (env, path) => {
      const [doomed, ...survivors] = await Promise.all(
        Array.from({ length: PROCESSES }, () => spawnStdio({ env })),
      ) as [StdioConnection, ...StdioConnection[]];
      const journal = newJournal();
      const all = leafIds(2, 10);
      try {
        await ok(survivors[0]!.client, "createTask", parallelPlan(2, 10));
        // The doomed process's four agents each take a leaf on a short lease, then the process dies.
        const dead = ["d0", "d1", "d2", "d3"];
        await Promise.all(dead.map((agent) => claim(doomed, agent, journal, { lease_seconds: 2 })));
        const held = new Map(journal.claims.map((c) => [c.leaf, c]));
        assert.equal(held.size, dead.length, "the dead agents held four different leaves");
        Deno.kill(doomed.pid, "SIGKILL");

        // At once: a claim aimed at a dead agent's leaf is refused while its lease is live.
        const [firstLeaf, firstClaim] = [...held][0]!;
        const probe = await claim(survivors[0]!, "s0-probe", journal, { id: firstLeaf });
        assert.ok(probe, JSON.stringify(journal.errors));
        const probeWait = journal.waits.at(-1);
        if (probe.task === null) {
          assert.deepEqual(
            probeWait!.waitingOn.map(({ id, agent, expires_at }) => ({ id, agent, expires_at })),
            [{
              id: firstLeaf,
              agent: firstClaim.agent,
              expires_at: new Date(firstClaim.expires).toISOString(),
            }],
          );
        } else {
          // Only possible when the machine stalled past the lease: then the take-over came after it.
          assert.ok(Date.now() >= firstClaim.expires, "taken before the lease ended");
          await ok(survivors[0]!.client, "completeTask", {
            sessionId: SESSION,
            id: firstLeaf,
            agent: "s0-probe",
            resolution: "by s0-probe",
          });
          journal.completions.push({ agent: "s0-probe", leaf: firstLeaf, sent: 0, received: Date.now() });
        }

        // The survivors (two agents per process) drain the plan, the dead agents' leaves included.
        const deadline = performance.now() + 30_000;
        await Promise.all(
          survivors.flatMap((conn, p) =>
            ["a", "b"].map((a) => worker(conn, `s${p}-${a}`, journal, deadline))
          ),
        );

        // Each dead agent's leaf was taken over once, naming it, at or after its lease's end.
        for (const [leaf, dying] of held) {
          const later = journal.claims.filter((c) => c.leaf === leaf && c !== dying);
          assert.equal(later.length, 1, `${leaf} was taken over once`);
          const taker = later[0]!;
          assert.equal(taker.takenOverFrom, dying.agent, `${leaf}: taken_over_from names the dead agent`);
          assert.ok(
            taker.since >= dying.expires,
            `${leaf} was taken at ${new Date(taker.since).toISOString()}, before the lease ended at ` +
              new Date(dying.expires).toISOString(),
          );
          assert.ok(taker.received >= dying.expires);
        }
        assert.deepEqual(
          journal.claims.filter((c) => c.takenOverFrom && !held.has(c.leaf)),
          [],
          "only the dead agents' leaves were taken over",
        );
        // Every refusal that named a dead agent was asked for before that agent's lease ended.
        for (const wait of journal.waits) {
          for (const w of wait.waitingOn.filter((w) => dead.includes(w.agent))) {
            const dying = held.get(w.id);
            assert.equal(dying?.agent, w.agent, `${w.id} is not ${w.agent}'s leaf`);
            assert.ok(wait.sent < dying.expires, `${wait.agent} was refused ${w.id} after its lease ended`);
          }
        }
        assert.deepEqual(overlappingClaims(journal), []);
        assert.deepEqual(journal.errors, [], "refused calls");

        // Every leaf completed exactly once, by a survivor.
        const completed = countBy(journal.completions, (c) => c.leaf);
        assert.deepEqual([...completed.keys()].sort(), [...all].sort());
        assert.deepEqual([...completed].filter(([, n]) => n !== 1), []);
        assert.deepEqual(journal.completions.filter((c) => dead.includes(c.agent)), []);
      } finally {
        await Promise.all([doomed, ...survivors].map((conn) => conn.close()));
      }
      await storedTree(kind, path, (roots, problems) => {
        assert.deepEqual(problems, []);
        const leaves = leavesOf(roots);
        assert.equal(leaves.length, all.length);
        for (const leaf of leaves) {
          assert.equal(leaf.status, "done", leaf.id);
          assert.equal(leaf.claim, undefined);
          assert.doesNotMatch(leaf.resolution ?? "", /by d\d/);
        }
      });
    });
  });
}
