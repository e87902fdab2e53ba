/**
 * Part 3: HTTP throughput with 1, 4 and 16 concurrent clients for a fixed time each, stateful
 * (one MCP session per client) and stateless (`STATELESS=1`: one server and transport per request),
 * this server's getTask on a 100-task session against the floor's no-op tool. Each client sends
 * one request at a time; the load generator runs in this process on the same machine. Besides
 * requests per second, the server process's own CPU time per request (from `/proc/PID/stat`) is
 * reported: other work on the machine moves it much less than it moves requests per second.
 */
import { cpuMs } from "./machine.ts";
import { freePort } from "../tests/support/processes.ts";
import { sleep } from "../tests/support/time.ts";
import { floorHttp, serverHttp, startHttpServer } from "./commands.ts";
import { ms, type PartOptions, type PartResult, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawHttp, type HttpRpc } from "./rpc.ts";
import { fillSession } from "./shapes.ts";
import { stats } from "./stats.ts";

type Mode = "stateful" | "stateless";

interface Run {
  clients: number;
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
  /** The server's CPU time (user + system) per request, in microseconds. */
  cpuUs: number;
}

interface Series {
  who: "checklist-mcp" | "floor";
  mode: Mode;
  runs: Run[];
  /** Why there are no runs. */
  unavailable?: string;
}

async function drive(
  clients: HttpRpc[],
  call: (rpc: HttpRpc, i: number) => Promise<unknown>,
  seconds: number,
  pid: number,
): Promise<Run> {
  const cpuBefore = await cpuMs(pid);
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(clients.map(async (rpc, c) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const t = performance.now();
      try {
        await call(rpc, c * 1_000_000 + i);
        latencies.push(performance.now() - t);
      } catch {
        errors++;
        if (errors > 1000) throw new Error("more than 1000 failed requests");
      }
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = await cpuMs(pid) - cpuBefore;
  const s = stats(latencies);
  return {
    clients: clients.length,
    requests: latencies.length,
    seconds: elapsed,
    p50: s.p50,
    p99: s.p99,
    errors,
    cpuUs: cpu * 1000 / Math.max(1, latencies.length),
  };
}

async function series(
  who: Series["who"],
  mode: Mode,
  concurrency: readonly number[],
  seconds: number,
  options: PartOptions,
): Promise<Series> {
  const port = freePort();
  const env: Record<string, string> = mode === "stateless" ? { STATELESS: "1" } : {};
  const cmd = who === "floor" ? await floorHttp(port, env) : await serverHttp(port, env);
  await using server = await startHttpServer(cmd, port);
  const sessionId = "bench";
  let leaves: string[] = [];
  {
    await using setup = await connectRawHttp(`${server.url}/mcp`, server.child.pid);
    if (mode === "stateless" && setup.sessionId !== undefined) {
      return {
        who,
        mode,
        runs: [],
        unavailable: "STATELESS=1 is not supported yet (the server issued a session id)",
      };
    }
    if (who === "checklist-mcp") leaves = (await fillSession(setup, { sessionId, size: 100 })).ids.leaves;
  }
  const call = who === "floor"
    ? (rpc: HttpRpc) => callTool(rpc, "noop", { id: "x" })
    : (rpc: HttpRpc, i: number) => callTool(rpc, "getTask", { sessionId, id: leaves[i % leaves.length] });
  const runs: Run[] = [];
  for (const n of concurrency) {
    const clients = await Promise.all(
      Array.from({ length: n }, () => connectRawHttp(`${server.url}/mcp`, server.child.pid)),
    );
    try {
      await drive(clients, call, Math.min(0.5, seconds / 4), server.child.pid);
      const run = await drive(clients, call, seconds, server.child.pid);
      runs.push(run);
      options.note(
        `throughput ${who} ${mode} ${n} clients: ${(run.requests / run.seconds).toFixed(0)} req/s`,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    await sleep(200);
  }
  return { who, mode, runs };
}

/** Runs part 3. */
export async function throughput(options: PartOptions): Promise<PartResult> {
  const concurrency = [1, 4, 16];
  const seconds = options.quick ? 1 : 3;
  const all: Series[] = [];
  for (const mode of ["stateful", "stateless"] as const) {
    for (const who of ["checklist-mcp", "floor"] as const) {
      all.push(await series(who, mode, concurrency, seconds, options));
    }
  }
  const rows: (string | number)[][] = [];
  const stateful: number[] = [];
  for (const mode of ["stateful", "stateless"] as const) {
    for (const n of concurrency) {
      const ours = all.find((s) => s.who === "checklist-mcp" && s.mode === mode)!;
      const floor = all.find((s) => s.who === "floor" && s.mode === mode)!;
      const a = ours.runs.find((r) => r.clients === n);
      const b = floor.runs.find((r) => r.clients === n);
      const rps = (r: Run | undefined) => (r ? (r.requests / r.seconds).toFixed(0) : "n/a");
      if (mode === "stateful" && a && b) stateful.push((a.requests / a.seconds) / (b.requests / b.seconds));
      rows.push([
        mode,
        n,
        rps(a),
        a ? `${ms(a.p50)} / ${ms(a.p99)}` : "n/a",
        rps(b),
        b ? `${ms(b.p50)} / ${ms(b.p99)}` : "n/a",
        a && b ? `${((a.requests / a.seconds) / (b.requests / b.seconds)).toFixed(2)}×` : "—",
        a ? a.cpuUs.toFixed(0) : "n/a",
        b ? b.cpuUs.toFixed(0) : "n/a",
        a && b ? `${(b.cpuUs / a.cpuUs).toFixed(2)}×` : "—",
        (a?.errors ?? 0) + (b?.errors ?? 0),
      ]);
    }
  }
  const notes = all.filter((s) => s.unavailable).map((s) =>
    `- ${s.who} ${s.mode}: not available — ${s.unavailable}.`
  );
  const markdown = [
    "## 3. HTTP throughput (concurrent clients)",
    "",
    `Each client sends one request at a time for ${seconds} s (after a short warm-up); checklist-mcp answers`,
    "getTask on a 100-task session, the floor its no-op tool. Stateful: one MCP connection per client.",
    "Stateless (`STATELESS=1`): a new server and transport per request. The load generator shares the machine.",
    "Server CPU is the server process's user + system time over the run divided by its requests; \"floor CPU ÷",
    'ours" is the throughput the server itself would allow, relative to the floor, with the machine to itself.',
    "",
    table([
      "mode",
      "clients",
      "checklist-mcp req/s",
      "p50 / p99 ms",
      "floor req/s",
      "floor p50 / p99 ms",
      "req/s ÷ floor",
      "server CPU µs/req",
      "floor CPU µs/req",
      "floor CPU ÷ ours",
      "errors",
    ], rows),
    ...(notes.length ? ["", ...notes] : []),
  ].join("\n");
  const worst = stateful.length > 0 ? Math.min(...stateful) : undefined;
  const targets: Target[] = [{
    name: "HTTP stateful req/s ≥ 0.9× the floor at 1, 4 and 16 clients",
    met: worst === undefined ? undefined : worst >= 0.9,
    detail: worst === undefined ? "not measured" : `${stateful.map((r) => `${r.toFixed(2)}×`).join(", ")}`,
  }];
  return {
    markdown: [markdown, "", ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`)].join(
      "\n",
    ),
    targets,
  };
}
