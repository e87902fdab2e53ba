/**
 * Teams of agents, measured (issue 21; docs/teams.md). Part 6 of `deno task bench`, and
 * on its own:
 *
 *   deno run -A bench/team_bench.ts [--write] [--quick] [--baseline=DIR]
 *
 * 1. claimTask against startTask at 10,000 tasks: one stdio server (memory store), one session per
 *    way of starting (startTask with no agent, startTask with an agent, claimTask on an ordinary
 *    plan, claimTask on a parallel plan where 11 other agents hold leaves, and where 12 other agents
 *    hold leaves, without paths and with 8 patterns on every leaf: the cost of reservations),
 *    taking turns call by call so all meet the same load; each start is followed by a timed
 *    completeTask of its leaf.
 * 2. 12 agents in 3 processes (4 each, the agent named per call) draining a parallel plan of 1,000
 *    leaves on one FILE_PATH and on one KV_PATH through claimTask → completeTask, with the loop and
 *    the claim journal of the race tests (tests/support/team_drain.ts): leaves/s, p50/p99 per claim,
 *    double claims, refusals; once without paths and once with leaves whose paths collide (at most 7
 *    held at once), counting live claims that reserved overlapping paths.
 * 3. startTask/completeTask with no agent named at 10,000 tasks against another checkout (the
 *    server before teams: `--baseline=DIR`, e.g. a worktree of `main`), per store: two servers of
 *    this checkout (started first and last, pooled; set against each other as the control) and one
 *    of the baseline, taking turns leaf by leaf. Without `--baseline` this is not measured.
 */
import { ROOT } from "../tests/support/paths.ts";
import { serverStdio } from "./commands.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, type PartOptions, type PartResult, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawStdio, type Rpc, type ToolResult } from "./rpc.ts";
import { fillSession, modulePaths, shapeDocument, shapeFor, type ShapeIds, shapeIds } from "./shapes.ts";
import { median, type Stats, stats } from "./stats.ts";
import { Client, InMemoryTransport } from "../tests/support/sdk_client.ts";
import {
  collidingPaths,
  doubleClaims,
  DRAIN_SESSION,
  newJournal,
  overlappingClaims,
  overlappingReservations,
  parallelPlanCalls,
  type ToolCaller,
  worker,
} from "../tests/support/team_drain.ts";

/** The heading of this part's section in `BENCHMARKS.md`. */
export const TEAM_HEADING = "## Teams of agents";

const AGENT = "bench";

/** A way of starting a leaf, timed with the completeTask that follows it. */
interface Way {
  label: string;
  sessionId: string;
  /** Starts the next leaf (the `i`-th); returns its id. */
  start(rpc: Rpc, i: number): Promise<string>;
  agent?: string;
}

interface WayResult {
  label: string;
  start: Stats;
  complete: Stats;
}

function taskId(result: ToolResult): string {
  const id = (result.structuredContent?.task as { id?: string } | null | undefined)?.id;
  if (!id) throw new Error(`no task in the reply: ${JSON.stringify(result.structuredContent).slice(0, 200)}`);
  return id;
}

/** Other agents holding leaves while the paths rows claim: 12, each reserving 8 patterns. */
const HOLDERS = 12;

/**
 * Part 6.1: claimTask against startTask on sessions of `size` tasks, turn by turn. The server records
 * no git (`REPO_DIR` outside any work tree): a named agent's call would otherwise add one `git status`
 * that a call without an agent does not, and what a git record costs is `deno task bench:git`'s.
 */
async function claimVsStart(size: number, n: number, options: PartOptions): Promise<WayResult[]> {
  const nowhere = await Deno.makeTempDir({ prefix: "no-work-tree-" });
  const rpc = await connectRawStdio(await serverStdio({ REPO_DIR: nowhere }));
  try {
    const fill = async (sessionId: string) => (await fillSession(rpc, { sessionId, size })).ids;
    const parallelize = async (sessionId: string, ids: ShapeIds) => {
      for (const id of [...ids.roots, ...ids.mids]) {
        await callTool(rpc, "updateTask", { sessionId, id, parallel: true });
      }
    };
    const anon = await fill("anon");
    const named = await fill("named");
    await fill("claim");
    const parallel = await fill("claim-parallel");
    await parallelize("claim-parallel", parallel);
    for (let k = 1; k <= 11; k++) {
      await callTool(rpc, "claimTask", { sessionId: "claim-parallel", agent: `other${k}` });
    }
    // The same plan twice, without paths and with 8 patterns on each subtask of the first root but the
    // last (their leaves inherit them) and on each of the 12 leaves the other agents hold in that last
    // one (the root level keeps its order, so the first root is where work is): each of the bench agent's
    // claims checks its leaf's 8 patterns against the 96 reserved.
    const perRoot = shapeFor(size).mids;
    for (const [sessionId, paths] of [["claim-12", false], ["claim-paths", true]] as const) {
      const ids = await fill(sessionId);
      await parallelize(sessionId, ids);
      const last = ids.mids[perRoot - 1]!;
      const held = ids.leaves.filter((id) => id.startsWith(`r0.m${perRoot - 1}.`)).slice(0, HOLDERS);
      if (paths) {
        for (let k = 0; k < perRoot - 1; k++) {
          await callTool(rpc, "updateTask", { sessionId, id: ids.mids[k]!, paths: modulePaths(k) });
        }
        for (const [k, id] of held.entries()) {
          await callTool(rpc, "updateTask", { sessionId, id, paths: modulePaths(100 + k) });
        }
      }
      for (const [k, id] of held.entries()) {
        const reply = await callTool(rpc, "claimTask", { sessionId, agent: `holder${k + 1}`, id });
        const task = reply.structuredContent?.task as { id?: string } | null | undefined;
        if (task?.id !== id) {
          throw new Error(`holder${k + 1} did not get ${id} (under ${last}) in ${sessionId}`);
        }
      }
    }
    options.note(`team claim/start: 6 sessions of ${size} tasks ready`);
    const byId = (ids: ShapeIds, sessionId: string, agent?: string) => async (r: Rpc, i: number) => {
      const id = ids.leaves[i]!;
      await callTool(r, "startTask", { sessionId, id, ...(agent ? { agent } : {}) });
      return id;
    };
    const byClaim = (sessionId: string) => async (r: Rpc) =>
      taskId(await callTool(r, "claimTask", { sessionId, agent: AGENT }));
    const ways: Way[] = [
      { label: "startTask, no agent", sessionId: "anon", start: byId(anon, "anon") },
      {
        label: "startTask, agent named",
        sessionId: "named",
        start: byId(named, "named", AGENT),
        agent: AGENT,
      },
      { label: "claimTask", sessionId: "claim", start: byClaim("claim"), agent: AGENT },
      {
        label: "claimTask, parallel plan, 11 other agents holding leaves",
        sessionId: "claim-parallel",
        start: byClaim("claim-parallel"),
        agent: AGENT,
      },
      {
        label: `claimTask, parallel plan, ${HOLDERS} other agents holding leaves, no paths`,
        sessionId: "claim-12",
        start: byClaim("claim-12"),
        agent: AGENT,
      },
      {
        label: `claimTask, parallel plan, ${HOLDERS} other agents holding 8 patterns each`,
        sessionId: "claim-paths",
        start: byClaim("claim-paths"),
        agent: AGENT,
      },
    ];
    const samples = ways.map(() => ({ start: [] as number[], complete: [] as number[] }));
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < ways.length; k++) {
        const w = (i + k) % ways.length;
        const way = ways[w]!;
        let t = performance.now();
        const id = await way.start(rpc, i);
        samples[w]!.start.push(performance.now() - t);
        t = performance.now();
        await callTool(rpc, "completeTask", {
          sessionId: way.sessionId,
          id,
          resolution: `Done ${i}.`,
          ...(way.agent ? { agent: way.agent } : {}),
        });
        samples[w]!.complete.push(performance.now() - t);
      }
    }
    return ways.map((way, w) => ({
      label: way.label,
      start: stats(samples[w]!.start),
      complete: stats(samples[w]!.complete),
    }));
  } finally {
    await rpc.close();
    await Deno.remove(nowhere, { recursive: true }).catch(() => {});
  }
}

/** What one drain measured. */
interface Drain {
  store: "file" | "kv";
  /** Whether the leaves carried colliding paths (tests/support/team_drain.ts `collidingPaths`). */
  paths: boolean;
  leaves: number;
  seconds: number;
  claim: Stats;
  complete: Stats;
  doubles: number;
  overlaps: number;
  /** Pairs of live claims whose paths overlapped (0 unless the reservations failed). */
  reserved: number;
  errors: string[];
  waits: number;
  perProcess: number[];
  unavailable?: string;
}

async function scratch(): Promise<string> {
  await Deno.mkdir(`${BENCH_DIR}/tmp`, { recursive: true });
  return await Deno.makeTempDir({ dir: `${BENCH_DIR}/tmp`, prefix: "team-" });
}

function rawCaller(rpc: Rpc): ToolCaller {
  return async (name, args) => await rpc.request("tools/call", { name, arguments: args }) as ToolResult;
}

/** Part 6.2: `processes` × `perProcess` agents drain a parallel plan of `parts` × `leaves` leaves. */
async function drain(
  store: "file" | "kv",
  shape: { processes: number; perProcess: number; parts: number; leaves: number; paths: boolean },
  options: PartOptions,
  root: string = ROOT,
  more: Record<string, string> = {},
): Promise<Drain> {
  const dir = await scratch();
  const env: Record<string, string> = store === "file"
    ? { FILE_PATH: `${dir}/plan.json`, ...more }
    : { KV_PATH: `${dir}/plan.sqlite`, ...more };
  const rpcs: Rpc[] = [];
  const total = shape.parts * shape.leaves;
  try {
    for (let p = 0; p < shape.processes; p++) rpcs.push(await connectRawStdio(await serverStdio(env, root)));
    const layout = shape.paths ? { paths: collidingPaths } : {};
    for (const args of parallelPlanCalls(shape.parts, shape.leaves, layout)) {
      await callTool(rpcs[0]!, "createTask", args);
    }
    const journal = newJournal();
    const started = performance.now();
    await Promise.all(
      rpcs.flatMap((rpc, p) =>
        Array.from(
          { length: shape.perProcess },
          (_, a) => worker(rawCaller(rpc), `w${p}-${a}`, journal, started + 240_000),
        )
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const plan = await callTool(rpcs[1 % rpcs.length]!, "getTask", { sessionId: DRAIN_SESSION, id: "plan" });
    const status = (plan.structuredContent?.task as { status?: string } | undefined)?.status;
    const errors = journal.errors.map((e) => `${e.agent} ${e.tool} ${e.leaf ?? ""}: ${e.code}`);
    if (status !== "done") errors.push(`the plan is ${status} after the drain`);
    if (journal.completions.length !== total) {
      errors.push(`${journal.completions.length} of ${total} completed`);
    }
    options.note(
      `team drain ${store}${shape.paths ? " with paths" : ""}${
        root === ROOT ? "" : ` (${root})`
      }: ${total} ` +
        `leaves in ${seconds.toFixed(1)} s`,
    );
    const pathsOf = (leaf: string) => collidingPaths(0, Number(leaf.slice(leaf.indexOf(".l") + 2)));
    return {
      store,
      paths: shape.paths,
      leaves: total,
      seconds,
      claim: stats(journal.claims.map((c) => c.received - c.sent)),
      complete: stats(journal.completions.map((c) => c.received - c.sent)),
      doubles: doubleClaims(journal).length,
      overlaps: overlappingClaims(journal).length,
      reserved: shape.paths ? overlappingReservations(journal, pathsOf).length : 0,
      errors,
      waits: journal.waits.length,
      perProcess: rpcs.map((_, p) => journal.claims.filter((c) => c.agent.startsWith(`w${p}-`)).length),
    };
  } catch (error) {
    const none = stats([]);
    return {
      store,
      paths: shape.paths,
      leaves: total,
      seconds: NaN,
      claim: none,
      complete: none,
      doubles: NaN,
      overlaps: NaN,
      reserved: NaN,
      errors: [],
      waits: 0,
      perProcess: [],
      unavailable: (error as Error).message,
    };
  } finally {
    await Promise.all(rpcs.map((rpc) => rpc.close()));
    await Deno.remove(dir, { recursive: true });
  }
}

/** Drains of this checkout (without and with git records) and of the baseline on one store, taking turns. */
interface DrainVersus {
  store: "file" | "kv";
  ours: Drain[];
  base: Drain[];
  git: Drain[];
}

/** Leaves per second of a drain (NaN when it could not run or had errors). */
function rate(d: Drain): number {
  return d.unavailable || d.errors.length > 0 ? NaN : d.leaves / d.seconds;
}

/** The median of the finite figures (NaN when there are none): a failed drain counts as no figure. */
function medianOf(values: readonly number[]): number {
  return median(values.filter(Number.isFinite));
}

/**
 * Part 6.2 against the baseline (issue 35): on each store, `rounds` drains of this checkout and of the
 * baseline taking turns (the order rotating each round), each server started by its own checkout. This
 * checkout runs twice: with `REPO_DIR` outside any work tree, so it records no git, as the baseline
 * (what the drain costs besides git), and in its own work tree, recording where the work lives before
 * each named agent's claim and completion (what git adds).
 */
async function drainVersus(
  baseline: string,
  shape: { processes: number; perProcess: number; parts: number; leaves: number },
  rounds: number,
  options: PartOptions,
): Promise<DrainVersus[]> {
  const out: DrainVersus[] = [];
  const nowhere = await Deno.makeTempDir({ prefix: "no-work-tree-" });
  try {
    for (const store of ["file", "kv"] as const) {
      const versus: DrainVersus = { store, ours: [], base: [], git: [] };
      const ways: [Drain[], string, Record<string, string>][] = [
        [versus.ours, ROOT, { REPO_DIR: nowhere }],
        [versus.base, baseline, {}],
        [versus.git, ROOT, {}],
      ];
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < ways.length; i++) {
          const [into, root, more] = ways[(round + i) % ways.length]!;
          into.push(await drain(store, { ...shape, paths: false }, options, root, more));
        }
      }
      out.push(versus);
    }
  } finally {
    await Deno.remove(nowhere, { recursive: true }).catch(() => {});
  }
  return out;
}

/** What one store measured against the baseline. */
interface Versus {
  store: "memory" | "file" | "kv" | "in-process";
  /** This checkout: the samples of its two servers together (started first and last, the baseline between). */
  ours: { start: Stats; complete: Stats };
  base: { start: Stats; complete: Stats };
  /** This checkout's two servers apart: how far apart identical servers come out (the control). */
  first: { start: Stats; complete: Stats };
  second: { start: Stats; complete: Stats };
  unavailable?: string;
}

/**
 * A server of the checkout at `root` in this process (memory store, SDK client in memory), behind
 * the raw client's interface: no process, pipe or scheduler between the two versions, only their
 * code. The baseline's modules resolve their imports with this checkout's import map.
 */
async function inProcessServer(root: string): Promise<Rpc> {
  const { createServer } = await import(`${root}/lib/mcp/server.ts`) as {
    createServer: (options: Record<string, unknown>) => {
      connect(transport: unknown): Promise<void>;
      close(): Promise<void>;
    };
  };
  const { MemoryStore } = await import(`${root}/lib/store/memory_store.ts`) as {
    MemoryStore: new () => unknown;
  };
  const { createLogger } = await import(`${root}/lib/log.ts`) as {
    createLogger: (options: Record<string, unknown>) => unknown;
  };
  // The plan view is a feature handed to the server since issue 36; before, the server had it built in.
  const features = await import(`${root}/lib/plan_view/server/plan_feature.ts`).then(
    (module: { PLAN_VIEW: unknown }) => [module.PLAN_VIEW],
    () => [],
  );
  const server = createServer({
    store: new MemoryStore(),
    log: createLogger({ level: "error", write: () => {} }),
    features,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "checklist-mcp-bench", version: "0.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  const close = async () => {
    await client.close();
    await server.close();
  };
  return {
    pid: undefined,
    request: (method, params) => {
      if (method !== "tools/call") throw new Error(`in-process server: ${method} is not supported`);
      return client.callTool(params as { name: string; arguments: Record<string, unknown> });
    },
    notify: () => Promise.resolve(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Part 6.3: this checkout against `baseline`, startTask/completeTask with no agent, leaf by leaf;
 * `in-process` puts the three servers in this process (memory store), the others start them over
 * stdio on the store named.
 */
export async function versusBaseline(
  store: "memory" | "file" | "kv" | "in-process",
  baseline: string,
  size: number,
  n: number,
  options: PartOptions,
): Promise<Versus> {
  const dir = await scratch();
  const shape = shapeFor(size);
  const sides: { rpc: Rpc; ids: ShapeIds; start: number[]; complete: number[] }[] = [];
  try {
    for (const [k, root] of [undefined, baseline, undefined].entries()) {
      const env: Record<string, string> = {};
      if (store === "file") {
        env.FILE_PATH = `${dir}/${k}.json`;
        await Deno.writeTextFile(env.FILE_PATH, JSON.stringify(shapeDocument(shape, "bench")));
      } else if (store === "kv") {
        env.KV_PATH = `${dir}/${k}.sqlite`;
      }
      const rpc = store === "in-process"
        ? await inProcessServer(root ?? ROOT)
        : await connectRawStdio(await serverStdio(env, root));
      sides.push({ rpc, ids: shapeIds(shape), start: [], complete: [] });
      if (store !== "file") sides[k]!.ids = (await fillSession(rpc, { sessionId: "bench", size })).ids;
    }
    options.note(`team vs baseline ${store}: three servers filled with ${size} tasks`);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(i + k) % sides.length]!;
        const id = side.ids.leaves[i]!;
        let t = performance.now();
        await callTool(side.rpc, "startTask", { sessionId: "bench", id });
        side.start.push(performance.now() - t);
        t = performance.now();
        await callTool(side.rpc, "completeTask", { sessionId: "bench", id, resolution: `Done ${i}.` });
        side.complete.push(performance.now() - t);
      }
    }
    const [first, base, second] = sides.map((s) => ({ start: stats(s.start), complete: stats(s.complete) }));
    const ours = {
      start: stats([...sides[0]!.start, ...sides[2]!.start]),
      complete: stats([...sides[0]!.complete, ...sides[2]!.complete]),
    };
    return { store, ours, base: base!, first: first!, second: second! };
  } catch (error) {
    const none = { start: stats([]), complete: stats([]) };
    const failed = { ours: none, base: none, first: none, second: none };
    return { store, ...failed, unavailable: (error as Error).message };
  } finally {
    await Promise.all(sides.map((s) => s.rpc.close()));
    await Deno.remove(dir, { recursive: true });
  }
}

/** The commit a checkout is at (short hash), or "?" when git cannot tell. */
async function commitOf(root: string | undefined): Promise<string> {
  const args = ["-C", root ?? ROOT, "log", "-1", "--format=%h"];
  const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output().catch(() =>
    null
  );
  return out?.success ? new TextDecoder().decode(out.stdout).trim() : "?";
}

/** Runs part 6; its Markdown is the whole "Teams of agents" section. */
export async function team(options: PartOptions & { baseline?: string }): Promise<PartResult> {
  const before = await machine();
  const size = options.quick ? 1000 : 10_000;
  const sizeText = size.toLocaleString("en-US");
  const ways = await claimVsStart(size, options.quick ? 40 : 300, options);
  const drainShape = options.quick
    ? { processes: 3, perProcess: 4, parts: 4, leaves: 50 }
    : { processes: 3, perProcess: 4, parts: 10, leaves: 100 };
  const drains: Drain[] = [];
  for (const store of ["file", "kv"] as const) {
    for (const paths of [false, true]) drains.push(await drain(store, { ...drainShape, paths }, options));
  }
  const versusShape = options.quick
    ? { processes: 3, perProcess: 4, parts: 3, leaves: 25 }
    : { processes: 3, perProcess: 4, parts: 3, leaves: 100 };
  const drainsVersus = options.baseline
    ? await drainVersus(options.baseline, versusShape, options.quick ? 2 : 3, options)
    : [];
  const versus: Versus[] = [];
  if (options.baseline) {
    for (const store of ["in-process", "memory", "file", "kv"] as const) {
      versus.push(await versusBaseline(store, options.baseline, size, options.quick ? 30 : 200, options));
    }
  }

  const anon = ways[0]!.start.p50;
  const plain = ways.find((w) => w.label.endsWith("no paths"))!;
  const reserving = ways.find((w) => w.label.endsWith("8 patterns each"))!;
  const claimWays = ways.filter((w) => w.label.startsWith("claimTask"));
  const worstClaim = claimWays.reduce((a, b) => (b.start.p50 > a.start.p50 ? b : a));
  const drainTotal = drainShape.parts * drainShape.leaves;
  const agents = drainShape.processes * drainShape.perProcess;
  const targets: Target[] = [
    {
      name: `claimTask p50 ≤ 1.5× startTask p50 at ${sizeText} tasks`,
      met: worstClaim.start.p50 <= 1.5 * anon,
      detail: `${worstClaim.label} ${ms(worstClaim.start.p50)} ms vs startTask ${ms(anon)} ms = ${
        (worstClaim.start.p50 / anon).toFixed(2)
      }×`,
    },
    {
      name:
        `claimTask with ${HOLDERS} other agents holding 8 patterns each p50 ≤ 1.5× claimTask without paths ` +
        `at ${sizeText} tasks`,
      met: reserving.start.p50 <= 1.5 * plain.start.p50,
      detail: `${ms(reserving.start.p50)} ms vs ${ms(plain.start.p50)} ms = ${
        (reserving.start.p50 / plain.start.p50).toFixed(2)
      }×`,
    },
    ...drains.map((d): Target => ({
      name:
        `${agents} agents in ${drainShape.processes} processes drain ${drainTotal.toLocaleString("en-US")} ` +
        `leaves${d.paths ? " whose paths collide" : ""} on ${
          d.store === "file" ? "FILE_PATH" : "KV_PATH"
        }: ` +
        `0 double claims${d.paths ? ", 0 overlapping live reservations" : ""}`,
      met: d.unavailable
        ? undefined
        : d.doubles === 0 && d.overlaps === 0 && d.reserved === 0 && d.errors.length === 0,
      detail: d.unavailable
        ? `not available: ${d.unavailable}`
        : `${d.doubles} double claims, ${d.overlaps} overlapping${
          d.paths ? `, ${d.reserved} overlapping reservations` : ""
        }, ${d.errors.length} errors; ` +
          `${(d.leaves / d.seconds).toFixed(0)} leaves/s, p99 per claim ${ms(d.claim.p99)} ms`,
    })),
  ];
  /** How far apart the two servers of this version came out: the larger ratio either way. */
  const controlSpread = (v: Versus) =>
    Math.max(
      ...[v.first.start.p50 / v.second.start.p50, v.first.complete.p50 / v.second.complete.p50]
        .map((r) => Math.max(r, 1 / r)),
    );
  const versusRatio = (v: Versus) =>
    Math.max(v.ours.start.p50 / v.base.start.p50, v.ours.complete.p50 / v.base.complete.p50);
  if (options.baseline) {
    const measured = versus.filter((v) => !v.unavailable);
    const worst = measured.reduce<Versus | undefined>(
      (a, b) => (a === undefined || versusRatio(b) > versusRatio(a) ? b : a),
      undefined,
    );
    targets.push({
      name:
        `startTask/completeTask with no agent at ${sizeText} tasks no slower than the baseline (p50 ≤ 1.1×)`,
      met: worst === undefined ? undefined : versusRatio(worst) <= 1.1,
      detail: worst === undefined
        ? "not available"
        : `worst ${worst.store}: ${versusRatio(worst).toFixed(2)}×; two servers of this same version came ` +
          `out up to ${Math.max(...measured.map(controlSpread)).toFixed(2)}× apart in this run (control)`,
    });
    const versusLeaves = (versusShape.parts * versusShape.leaves).toLocaleString("en-US");
    for (const v of drainsVersus) {
      const [ours, base] = [medianOf(v.ours.map(rate)), medianOf(v.base.map(rate))];
      targets.push({
        name: `${agents} agents in 3 processes drain ${versusLeaves} leaves on ${
          v.store === "file" ? "FILE_PATH" : "KV_PATH"
        } at ≥ 0.95× the baseline's leaves/s (side by side)`,
        met: Number.isFinite(ours / base) ? ours / base >= 0.95 : undefined,
        detail: `${ours.toFixed(0)} vs ${base.toFixed(0)} leaves/s = ${
          (ours / base).toFixed(2)
        }× (medians of ${v.ours.length} drains each)`,
      });
    }
  } else {
    targets.push({
      name: `startTask/completeTask with no agent at ${sizeText} tasks no slower than before`,
      met: undefined,
      detail: "run with --baseline=DIR (a checkout of the version before)",
    });
  }

  const m = await machine();
  const storeLabel = {
    memory: "memory",
    file: "JSON file (`FILE_PATH`)",
    kv: "Deno KV (`KV_PATH`)",
    "in-process": "memory, servers in this process (no stdio)",
  };
  const markdown = [
    TEAM_HEADING,
    "",
    `\`deno task bench:team${options.quick ? " --quick" : ""}${
      options.baseline ? " --baseline=DIR" : ""
    }\` ` +
    "(`bench/team_bench.ts`; part 6 of `deno task bench`). All over stdio with raw JSON-RPC clients. " +
    `Date: ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}. Machine: ${m.cpus} × ${m.cpu}, ${m.ram}, ` +
    `Deno ${m.deno}; load average (1, 5, 15 min) ${before.loadavg} at start, ${m.loadavg} at end.`,
    ...(loaded(before, m)
      ? [
        "",
        "**Taken on a loaded machine** (the load average exceeded half the CPUs): the figures are indicative; " +
        "ratios come from calls taking turns and suffer less, and the control row shows how far apart two " +
        "identical servers came out.",
      ]
      : []),
    ...(options.quick
      ? ["", "**Quick run**: fewer samples and smaller sizes; not the figures to publish."]
      : []),
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
    "",
    `### claimTask against startTask at ${sizeText} tasks (memory store)`,
    "",
    `One server, one session of ${sizeText} tasks per row (shape ${
      shapeText(size)
    }), the rows taking turns ` +
    `call by call, ${ways[0]!.start.n} leaves each in tree order; each start is followed by a timed ` +
    "completeTask of its leaf (with the same agent). The parallel plan has every root and subtask " +
    "`parallel`, and 11 other agents hold its first leaves, so each claim passes over them. In the last " +
    `two rows ${HOLDERS} other agents hold leaves of the first root's last subtask (the root level keeps ` +
    "its order, so the first root is where the work is); in the very last row each other subtask of that " +
    "root carries 8 patterns its leaves inherit, and each held leaf 8 of its own (`src/modK/**`, " +
    "`tests/modK/*_test.ts`, `lib/**/modK_*.ts`, …; bench/shapes.ts `modulePaths`), so each claim checks " +
    "its leaf's 8 patterns against the 96 reserved ones.",
    "",
    table(
      ["start", "p50 ms", "p99 ms", "p50 ÷ startTask", "completeTask p50 ms", "completeTask p99 ms"],
      ways.map((w) => [
        w.label,
        ms(w.start.p50),
        ms(w.start.p99),
        `${(w.start.p50 / anon).toFixed(2)}×`,
        ms(w.complete.p50),
        ms(w.complete.p99),
      ]),
    ),
    "",
    `### ${agents} agents in ${drainShape.processes} processes draining ${
      drainTotal.toLocaleString("en-US")
    } leaves`,
    "",
    `${drainShape.processes} \`main.ts --stdio\` processes on one store, ${drainShape.perProcess} agents each ` +
    "(named per call, their calls in flight at once on the process's connection), each looping claimTask → " +
    `completeTask until nothing is left; the plan is a parallel root over ${drainShape.parts} parallel parts ` +
    `of ${drainShape.leaves} leaves. Every claim is journaled (tests/support/team_drain.ts, as in the race ` +
    "tests): a double claim is a leaf handed out twice; overlapping means two live claims on one leaf. " +
    "With paths, leaf `l` changes `src/m{l mod 10}/**` and `docs/d{l mod 7}.md` (`collidingPaths`), so at " +
    "most 7 leaves can be held at once and agents wait on reservations; overlapping reservations counts " +
    "pairs of live claims whose paths overlapped. Per-claim times are the claimTask calls that handed out " +
    "a leaf, queueing behind the other agents included.",
    "",
    table(
      [
        "store",
        "paths",
        "leaves/s",
        "wall s",
        "claim p50 ms",
        "claim p99 ms",
        "complete p50 ms",
        "complete p99 ms",
        "double claims",
        "overlapping",
        "overlapping reservations",
        "errors",
        "claims per process",
        "waits",
      ],
      drains.map((d) =>
        d.unavailable
          ? [
            storeLabel[d.store],
            d.paths ? "colliding" : "none",
            "n/a",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
          ]
          : [
            storeLabel[d.store],
            d.paths ? "colliding" : "none",
            (d.leaves / d.seconds).toFixed(0),
            d.seconds.toFixed(1),
            ms(d.claim.p50),
            ms(d.claim.p99),
            ms(d.complete.p50),
            ms(d.complete.p99),
            d.doubles,
            d.overlaps,
            d.paths ? d.reserved : "",
            d.errors.length,
            d.perProcess.join(" / "),
            d.waits,
          ]
      ),
    ),
    ...drains.filter((d) => d.unavailable || d.errors.length).map((d) =>
      `- ${storeLabel[d.store]}: ${d.unavailable ?? d.errors.slice(0, 5).join("; ")}`
    ),
    "",
    ...(drainsVersus.length > 0
      ? [
        `### The drain against the baseline (${await commitOf(options.baseline)})`,
        "",
        `${agents} agents in 3 processes drain a parallel plan of ${versusShape.parts} × ${versusShape.leaves} ` +
        "leaves (no paths), as above, on servers of this checkout and of the baseline taking turns (the order " +
        "rotating each round), each started by its own checkout's `stdio` task. This checkout runs twice: with " +
        "`REPO_DIR` outside any work tree, so it records no git, as the baseline records none (the target), and " +
        "in its own work tree, reading where the work lives (`git status`) before each named agent's claim and " +
        "completion, as a server started in a project does (what that feature of issue 34 costs a drain).",
        "",
        table(
          [
            "store",
            "this: leaves/s per drain",
            "baseline",
            "this, recording git",
            "medians: this ÷ baseline",
            "recording git ÷ baseline",
          ],
          drainsVersus.map((v) => [
            storeLabel[v.store],
            v.ours.map((d) => rate(d).toFixed(0)).join(", "),
            v.base.map((d) => rate(d).toFixed(0)).join(", "),
            v.git.map((d) => rate(d).toFixed(0)).join(", "),
            `${(medianOf(v.ours.map(rate)) / medianOf(v.base.map(rate))).toFixed(2)}×`,
            `${(medianOf(v.git.map(rate)) / medianOf(v.base.map(rate))).toFixed(2)}×`,
          ]),
        ),
        "",
      ]
      : []),
    `### No agents named: this version against the one before, at ${sizeText} tasks`,
    "",
    ...(options.baseline
      ? [
        `This checkout (${await commitOf(undefined)}) against the baseline (${await commitOf(
          options.baseline,
        )}), ` +
        "each server started by its own checkout's `stdio` task: two of this version (started first and " +
        'last, the baseline between them, their samples pooled as "this") and one of the baseline, the ' +
        `three taking turns leaf by leaf (${
          versus[0]?.second.start.n ?? 0
        } leaves each, startTask then completeTask, no agent named). The control column sets this version's ` +
        "two servers against each other: how far apart identical servers come out in the same run. The JSON " +
        "file is preloaded with the session; memory and KV are filled by createTask calls. The first row " +
        "loads each version's server into this process instead (memory store, SDK client in memory, the " +
        "baseline's modules resolved with this checkout's import map): only the code differs, no process " +
        "or pipe, so it is the least noisy view of what the team rules add to a call without agents.",
        "",
        table(
          [
            "store",
            "startTask p50 ms (this / before)",
            "ratio",
            "completeTask p50 ms (this / before)",
            "ratio",
            "startTask p99 ms (this / before)",
            "completeTask p99 ms (this / before)",
            "control: this (1st) ÷ this (2nd), start, complete",
          ],
          versus.map((v) =>
            v.unavailable ? [storeLabel[v.store], `n/a: ${v.unavailable}`, "", "", "", "", "", ""] : [
              storeLabel[v.store],
              `${ms(v.ours.start.p50)} / ${ms(v.base.start.p50)}`,
              `${(v.ours.start.p50 / v.base.start.p50).toFixed(2)}×`,
              `${ms(v.ours.complete.p50)} / ${ms(v.base.complete.p50)}`,
              `${(v.ours.complete.p50 / v.base.complete.p50).toFixed(2)}×`,
              `${ms(v.ours.start.p99)} / ${ms(v.base.start.p99)}`,
              `${ms(v.ours.complete.p99)} / ${ms(v.base.complete.p99)}`,
              `${(v.first.start.p50 / v.second.start.p50).toFixed(2)}×, ${
                (v.first.complete.p50 / v.second.complete.p50).toFixed(2)
              }×`,
            ]
          ),
        ),
      ]
      : ["Not measured in this run: give `--baseline=DIR`, a checkout of the version before teams."]),
  ].join("\n");
  return { markdown, targets };
}

/** Whether the load average exceeded half the CPUs at either end (as `run.ts` judges it). */
function loaded(...at: { cpus: string; loadavg: string }[]): boolean {
  return at.some((m) => Number(m.loadavg.split(" ")[0]) > Number(m.cpus) * 0.5);
}

function shapeText(size: number): string {
  const s = shapeFor(size);
  return `${s.roots} × ${s.mids} × ${s.leaves}`;
}

/** `--baseline=DIR` among `args`, as an absolute path. */
export function baselineArg(args: readonly string[]): string | undefined {
  const arg = args.find((a) => a.startsWith("--baseline="));
  if (!arg) return undefined;
  const dir = arg.slice("--baseline=".length);
  return dir.startsWith("/") ? dir : `${Deno.cwd()}/${dir}`;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const result = await team({
    quick,
    baseline: baselineArg(Deno.args),
    note: (line) => console.error(`[bench] ${line}`),
  });
  console.log(result.markdown);
  if (Deno.args.includes("--write")) {
    await updateBenchmarks((doc) => placeSection(doc, TEAM_HEADING, result.markdown));
  }
}
