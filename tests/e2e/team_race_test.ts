/**
 * Teams of agents racing across processes (issue 21; docs/teams.md): three real
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
 *
 * With paths (docs/teams.md "Paths and reservations"): the same drain over leaves whose paths collide
 * (at most 7 can be held at once, 12 agents want them): no leaf is handed out twice and no two live
 * claims ever reserve overlapping paths, the choice made atomically with the claim in the store.
 *
 * And notes (docs/teams.md "Context that travels with the work"): agents of three processes add notes to
 * the same tasks at once; every acknowledged note is kept, once, each its own revision, and past the
 * 20 kept `notes_dropped` counts exactly the rest.
 */
import assert from "node:assert/strict";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { call, type Connection, ok, spawnStdio, type StdioConnection } from "../support/harness.ts";
import {
  claim,
  collidingPaths,
  countBy,
  doubleClaims,
  DRAIN_SESSION,
  newJournal,
  overlappingClaims,
  overlappingReservations,
  parallelPlanCalls,
  parallelPlanLeaves,
  type PlanOptions,
  type ToolCaller,
  worker,
} from "../support/team_drain.ts";

const SESSION = DRAIN_SESSION;

/** Tool calls through the SDK client, each reply checked against the tool's output schema. */
function caller(conn: Connection): ToolCaller {
  return (name, args) => call(conn.client, name, args);
}

/** Creates the parallel plan through `conn`. */
async function createPlan(
  conn: Connection,
  parts: number,
  leaves: number,
  options: PlanOptions = {},
): Promise<void> {
  for (const args of parallelPlanCalls(parts, leaves, options)) await ok(conn.client, "createTask", args);
}

/** Every leaf of the stored tree, read by a fresh store on the place after the servers stopped. */
async function storedTree<T>(
  kind: "file" | "kv",
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
  kind: "file" | "kv",
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
        const all = parallelPlanLeaves(PARENTS, LEAVES_PER_PARENT);
        try {
          // The last part waits for the first: agents meet blocked leaves and must not start them early.
          await createPlan(servers[0]!, PARENTS, LEAVES_PER_PARENT, { blockedBy: { p9: ["p0"] } });
          const deadline = performance.now() + 45_000;
          const agents = servers.flatMap((conn, p) =>
            Array.from({ length: AGENTS_PER_PROCESS }, (_, a) => ({ conn, agent: `w${p}-${a}`, process: p }))
          );
          await Promise.all(agents.map(({ conn, agent }) => worker(caller(conn), agent, journal, deadline)));

          // Every leaf handed out exactly once (0 double claims), never renewed or taken over.
          const claimed = countBy(journal.claims, (c) => c.leaf);
          assert.deepEqual(doubleClaims(journal), [], "double claims");
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

  Deno.test(
    `3 processes × 4 agents on one ${place} drain 120 leaves whose paths collide: 0 double grants, no two live claims ever reserve overlapping paths`,
    async () => {
      await withPlace(kind, async (env, path) => {
        const servers: StdioConnection[] = await Promise.all(
          Array.from({ length: PROCESSES }, () => spawnStdio({ env })),
        );
        const journal = newJournal();
        const all = parallelPlanLeaves(4, 30);
        const pathsOf = (leaf: string) => collidingPaths(0, Number(leaf.slice(leaf.indexOf(".l") + 2)));
        try {
          await createPlan(servers[0]!, 4, 30, { paths: collidingPaths });
          const deadline = performance.now() + 60_000;
          await Promise.all(
            servers.flatMap((conn, p) =>
              Array.from(
                { length: AGENTS_PER_PROCESS },
                (_, a) => worker(caller(conn), `w${p}-${a}`, journal, deadline),
              )
            ),
          );
          assert.deepEqual(journal.errors, [], "refused calls");
          assert.deepEqual(doubleClaims(journal), [], "double grants");
          assert.deepEqual(overlappingClaims(journal), []);
          assert.deepEqual(overlappingReservations(journal, pathsOf), [], "overlapping live reservations");
          assert.ok(
            journal.waits.some((w) => w.reserved > 0),
            "some agent found every ready leaf reserved and waited",
          );
          assert.deepEqual([...countBy(journal.completions, (c) => c.leaf).keys()].sort(), [...all].sort());
        } finally {
          await Promise.all(servers.map((conn) => conn.close()));
        }
        await storedTree(kind, path, (roots, problems) => {
          assert.deepEqual(problems, []);
          for (const leaf of leavesOf(roots)) {
            assert.equal(leaf.status, "done", leaf.id);
            assert.deepEqual(leaf.paths, pathsOf(leaf.id));
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
      const all = parallelPlanLeaves(2, 10);
      try {
        await createPlan(survivors[0]!, 2, 10);
        // The doomed process's four agents each take a leaf on a short lease, then the process dies.
        const dead = ["d0", "d1", "d2", "d3"];
        await Promise.all(dead.map((agent) => claim(caller(doomed), agent, journal, { lease_seconds: 2 })));
        const held = new Map(journal.claims.map((c) => [c.leaf, c]));
        assert.equal(held.size, dead.length, "the dead agents held four different leaves");
        Deno.kill(doomed.pid, "SIGKILL");

        // At once: a claim aimed at a dead agent's leaf is refused while its lease is live.
        const [firstLeaf, firstClaim] = [...held][0]!;
        const probe = await claim(caller(survivors[0]!), "s0-probe", journal, { id: firstLeaf });
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
            ["a", "b"].map((a) => worker(caller(conn), `s${p}-${a}`, journal, deadline))
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

  Deno.test(`agents of 3 processes add notes to the same tasks on one ${place} at once: none lost, each its own revision, notes_dropped counts the rest`, async () => {
    await withPlace(kind, async (env, path) => {
      const servers: StdioConnection[] = await Promise.all(
        Array.from({ length: PROCESSES }, () => spawnStdio({ env })),
      );
      const acknowledged: { id: string; agent: string; text: string; revision: number }[] = [];
      try {
        await createPlan(servers[0]!, 1, 2);
        // A worker holds one of the tasks: a note needs no claim, the holder's or anyone's.
        await ok(servers[0]!.client, "claimTask", { sessionId: SESSION, agent: "holder", id: "p0.l0" });
        const { revision: before } = await ok<{ revision: number }>(servers[0]!.client, "task_history", {
          sessionId: SESSION,
        });
        // p0.l0 gets 18 notes (all kept); p0.l1 gets 30 (20 kept, 10 dropped).
        const writers = servers.flatMap((conn, p) =>
          ["a", "b", "c"].map((a) => ({ conn, agent: `n${p}-${a}` }))
        );
        await Promise.all(writers.map(async ({ conn, agent }, w) => {
          const jobs = [
            ...Array.from({ length: 2 }, (_, i) => ({ id: "p0.l0", text: `${agent} on l0 #${i}` })),
            ...Array.from(
              { length: w < 3 ? 4 : 3 },
              (_, i) => ({ id: "p0.l1", text: `${agent} on l1 #${i}` }),
            ),
          ];
          for (const { id, text } of jobs) {
            const reply = await ok<{ revision: number }>(conn.client, "updateTask", {
              sessionId: SESSION,
              id,
              note: text,
              agent,
            });
            acknowledged.push({ id, agent, text, revision: reply.revision });
          }
        }));
        assert.equal(acknowledged.length, 18 + 30);
        const revisions = acknowledged.map((a) => a.revision).sort((x, y) => x - y);
        assert.deepEqual(
          revisions,
          Array.from({ length: acknowledged.length }, (_, i) => before + 1 + i),
          "each note its own revision, none shared",
        );
        // Every process reads the same notes: l0 holds all 18 in commit order, l1 the last 20 of 30.
        const byRevision = (id: string) =>
          acknowledged.filter((a) => a.id === id).sort((x, y) => x.revision - y.revision).map((
            a,
          ) => [a.agent, a.text]);
        for (const { client } of servers) {
          const l0 = (await ok<{ task: Task }>(client, "getTask", { sessionId: SESSION, id: "p0.l0" })).task;
          assert.deepEqual(l0.notes!.map((n) => [n.agent, n.text]), byRevision("p0.l0"));
          assert.equal(l0.notes_dropped, undefined);
          assert.equal(l0.claim?.agent, "holder", "the notes left the claim alone");
          const l1 = (await ok<{ task: Task }>(client, "getTask", { sessionId: SESSION, id: "p0.l1" })).task;
          assert.deepEqual(l1.notes!.map((n) => [n.agent, n.text]), byRevision("p0.l1").slice(-20));
          assert.equal(l1.notes_dropped, 10);
        }
      } finally {
        await Promise.all(servers.map((conn) => conn.close()));
      }
      await storedTree(kind, path, (roots, problems) => {
        assert.deepEqual(problems, []);
        const [l0, l1] = leavesOf(roots);
        assert.equal(l0!.notes!.length, 18);
        assert.equal(l1!.notes!.length + l1!.notes_dropped!, 30);
        assert.equal(new Set(l0!.notes!.map((n) => n.text)).size, 18, "no note twice");
      });
    });
  });
}
