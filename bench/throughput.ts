/**
 * Part 3: HTTP throughput with 1, 4 and 16 concurrent clients in five modes, this server's getTask
 * on a 100-task session against a floor's no-op tool:
 *
 * - 2026-07-28: every request alone, with the `_meta` envelope and the standard headers, against
 *   the SDK v2 floor (`createMcpHandler` on `Deno.serve`);
 * - the same under `deno serve` (main.ts's default export against bench/floor_serve.ts);
 * - the handshake era with sessions (one MCP session per client), against the SDK v1 floor
 *   (stateful), as before issue 28;
 * - the same with this server under `deno serve` (the floor already serves with `Deno.serve`, the
 *   listener `deno serve` uses): no target, it shows what our own listener of `deno run` costs there;
 * - the handshake era without sessions (`STATELESS=1` here: SDK v2's stateless legacy leg),
 *   against the SDK v2 floor's own stateless legacy leg.
 *
 * Both servers run at once and take turns (this, floor, floor, this, …) in short rounds, so a change
 * in the machine's load hits both alike; the ratio is the median of each round's pair. Each client
 * sends one request at a time; the load generator runs in this process on the same machine.
 * Besides requests per second, the server process's own CPU time per request (from
 * `/proc/PID/stat`) is reported: other work on the machine moves it much less than it moves
 * requests per second.
 */
import { cpuMs } from "./machine.ts";
import { freePort } from "../tests/support/processes.ts";
import {
  floorHttp,
  floorLabel,
  type FloorSdk,
  floorServe,
  serverHttp,
  serverServe,
  startHttpServer,
} from "./commands.ts";
import { ms, type PartOptions, type PartResult, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawHttp, type Era, type HttpRpc } from "./rpc.ts";
import { fillSession } from "./shapes.ts";
import { median, stats } from "./stats.ts";

/** How the clients speak to both servers, and which floor this server is measured against. */
interface Mode {
  name: string;
  era: Era;
  /** No session ids: every 2026-07-28 request, and the handshake era under this server's `STATELESS=1`. */
  stateless: boolean;
  floor: FloorSdk;
  /** Both servers under `deno serve` (the default export) instead of `deno run`. */
  serve?: boolean;
}

const MODES: readonly Mode[] = [
  { name: "2026-07-28", era: "modern", stateless: true, floor: "v2" },
  { name: "2026-07-28, deno serve", era: "modern", stateless: true, floor: "v2", serve: true },
  { name: "handshake, stateful", era: "legacy", stateless: false, floor: "v1" },
  { name: "handshake, stateful, deno serve", era: "legacy", stateless: false, floor: "v1", serve: true },
  { name: "handshake, stateless", era: "legacy", stateless: true, floor: "v2" },
];

type Who = "checklist-mcp" | "floor";

/** One server's requests over one stretch of time. */
interface Stretch {
  requests: number;
  seconds: number;
  latencies: number[];
  errors: number;
  cpuMs: number;
}

/** One server's figures at one client count, over all its rounds. */
interface Run {
  clients: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** The server's CPU time (user + system) per request, in microseconds. */
  cpuUs: number;
}

/** A server under test: how to call it, and its process. */
interface Contender {
  who: Who;
  url: string;
  pid: number;
  era: Era;
  call: (rpc: HttpRpc, i: number) => Promise<unknown>;
  stop: () => Promise<unknown>;
}

async function drive(
  clients: HttpRpc[],
  call: (rpc: HttpRpc, i: number) => Promise<unknown>,
  seconds: number,
  pid: number,
): Promise<Stretch> {
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
  return {
    requests: latencies.length,
    seconds: (performance.now() - started) / 1000,
    latencies,
    errors,
    cpuMs: await cpuMs(pid) - cpuBefore,
  };
}

/** Starts `who` for `mode`; a string says why it cannot be measured. */
async function start(who: Who, mode: Mode): Promise<Contender | string> {
  const port = freePort();
  // The modern era has no sessions whatever the setting; STATELESS=1 is the handshake era's.
  const env: Record<string, string> = who === "checklist-mcp" && mode.stateless && mode.era === "legacy"
    ? { STATELESS: "1" }
    : {};
  // The v1 floor serves with `Deno.serve` under `deno run` too: the same listener as `deno serve`'s.
  const cmd = mode.serve && !(who === "floor" && mode.floor === "v1")
    ? who === "floor" ? await floorServe(port) : await serverServe(port, env)
    : who === "floor"
    ? await floorHttp(port, {}, mode.floor)
    : await serverHttp(port, env);
  const server = await startHttpServer(cmd, port);
  const url = `${server.url}/mcp`;
  const sessionId = "bench";
  let leaves: string[] = [];
  {
    await using setup = await connectRawHttp(url, server.child.pid, mode.era);
    if (mode.stateless !== (setup.sessionId === undefined)) {
      await server.stop();
      return `${cmd.label} ${setup.sessionId === undefined ? "gave no" : "gave a"} session id`;
    }
    if (who === "checklist-mcp") leaves = (await fillSession(setup, { sessionId, size: 100 })).ids.leaves;
  }
  const call = who === "floor"
    ? (rpc: HttpRpc) => callTool(rpc, "noop", { id: "x" })
    : (rpc: HttpRpc, i: number) => callTool(rpc, "getTask", { sessionId, id: leaves[i % leaves.length] });
  return { who, url, pid: server.child.pid, era: mode.era, call, stop: () => server.stop() };
}

/** Both servers at `n` clients, in turns: each one's figures and the median ratio of the pairs. */
async function interleave(
  targets: [Contender, Contender],
  n: number,
  rounds: number,
  seconds: number,
): Promise<{ runs: [Run, Run]; ratio: number }> {
  const clients = await Promise.all(
    targets.map((t) => Promise.all(Array.from({ length: n }, () => connectRawHttp(t.url, t.pid, t.era)))),
  );
  try {
    for (const [i, t] of targets.entries()) await drive(clients[i]!, t.call, 0.3, t.pid);
    const stretches: [Stretch[], Stretch[]] = [[], []];
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // This, floor; then floor, this: neither always goes first.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const got: Stretch[] = [];
      for (const i of order) got[i] = await drive(clients[i]!, targets[i]!.call, seconds, targets[i]!.pid);
      stretches[0].push(got[0]!);
      stretches[1].push(got[1]!);
      ratios.push((got[0]!.requests / got[0]!.seconds) / (got[1]!.requests / got[1]!.seconds));
    }
    const run = (list: Stretch[]): Run => {
      const requests = list.reduce((sum, s) => sum + s.requests, 0);
      const latency = stats(list.flatMap((s) => s.latencies));
      return {
        clients: n,
        requestsPerSecond: median(list.map((s) => s.requests / s.seconds)),
        p50: latency.p50,
        p99: latency.p99,
        errors: list.reduce((sum, s) => sum + s.errors, 0),
        cpuUs: list.reduce((sum, s) => sum + s.cpuMs, 0) * 1000 / Math.max(1, requests),
      };
    };
    return { runs: [run(stretches[0]), run(stretches[1])], ratio: median(ratios) };
  } finally {
    await Promise.all(clients.flat().map((c) => c.close()));
  }
}

/** Runs part 3. */
export async function throughput(options: PartOptions): Promise<PartResult> {
  const concurrency = [1, 4, 16];
  const rounds = options.quick ? 2 : 8;
  const seconds = options.quick ? 0.5 : 0.75;
  const rows: (string | number)[][] = [];
  const ratios = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
  const notes: string[] = [];
  for (const mode of MODES) {
    const ours = await start("checklist-mcp", mode);
    const floor = await start("floor", mode);
    try {
      for (const [t, who] of [[ours, "checklist-mcp"], [floor, floorLabel(mode.floor)]] as const) {
        if (typeof t === "string") notes.push(`- ${who}, ${mode.name}: not available — ${t}.`);
      }
      for (const n of concurrency) {
        if (typeof ours === "string" || typeof floor === "string") {
          rows.push([
            mode.name,
            floorLabel(mode.floor),
            n,
            "n/a",
            "n/a",
            "n/a",
            "n/a",
            "—",
            "n/a",
            "n/a",
            "—",
            0,
          ]);
          continue;
        }
        const { runs: [a, b], ratio } = await interleave([ours, floor], n, rounds, seconds);
        options.note(
          `throughput ${mode.name} ${n} clients: ${a.requestsPerSecond.toFixed(0)} vs ${
            b.requestsPerSecond.toFixed(0)
          } req/s (${ratio.toFixed(2)}×)`,
        );
        ratios.get(mode)!.push(ratio);
        rows.push([
          mode.name,
          floorLabel(mode.floor),
          n,
          a.requestsPerSecond.toFixed(0),
          `${ms(a.p50)} / ${ms(a.p99)}`,
          b.requestsPerSecond.toFixed(0),
          `${ms(b.p50)} / ${ms(b.p99)}`,
          `${ratio.toFixed(2)}×`,
          a.cpuUs.toFixed(0),
          b.cpuUs.toFixed(0),
          `${(b.cpuUs / a.cpuUs).toFixed(2)}×`,
          a.errors + b.errors,
        ]);
      }
    } finally {
      for (const t of [ours, floor]) if (typeof t !== "string") await t.stop();
    }
  }
  const markdown = [
    "## 3. HTTP throughput (concurrent clients)",
    "",
    `Both servers run at once and take turns: ${rounds} rounds of ${seconds} s each per client count (this, floor;`,
    "then floor, this; after a short warm-up), so drift in the machine's load hits both alike. Each client sends",
    "one request at a time; checklist-mcp answers getTask on a 100-task session, the floor its no-op tool. Req/s",
    'is the median of the rounds; "req/s ÷ floor" the median of each round\'s ratio. 2026-07-28: each request',
    "alone with its `_meta` envelope and the headers `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, against",
    `the \`${
      floorLabel("v2")
    }\` (\`createMcpHandler\` on \`Deno.serve\`). Handshake, stateful: one MCP session per`,
    `client, against the \`${
      floorLabel("v1")
    }\` (SDK v1, Hono, its web-standard transport). \`deno serve\`: checklist-mcp started by \`deno serve\``,
    "(main.ts's default export), and so is the 2026-07-28 floor (its handler as a default export,",
    "bench/floor_serve.ts); the handshake era's v1 floor runs as under `deno run`, on `Deno.serve`, the listener",
    "`deno serve` uses. Handshake, stateless",
    "(checklist-mcp with `STATELESS=1`): a new server per request, against the v2 floor's own stateless legacy",
    "leg. The load generator shares the machine. Server CPU is the server process's user + system time over the",
    'run divided by its requests; "floor CPU ÷ ours" is the throughput the server itself would allow, relative to',
    "the floor, with the machine to itself.",
    "",
    table([
      "mode",
      "floor",
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
  const target = (mode: Mode, name: string): Target => {
    const list = ratios.get(mode)!;
    return {
      name,
      met: list.length === concurrency.length ? Math.min(...list) >= 0.9 : undefined,
      detail: list.length === 0 ? "not measured" : list.map((r) => `${r.toFixed(2)}×`).join(", "),
    };
  };
  const targets: Target[] = [
    target(MODES[0]!, "2026-07-28 HTTP req/s ≥ 0.9× the SDK v2 floor at 1, 4 and 16 clients"),
    target(
      MODES[1]!,
      "2026-07-28 HTTP under `deno serve` req/s ≥ 0.9× the SDK v2 floor under `deno serve` at 1, 4 and 16 clients",
    ),
    target(MODES[2]!, "Handshake-era HTTP (sessions) req/s ≥ 0.9× the SDK v1 floor at 1, 4 and 16 clients"),
  ];
  return {
    markdown: [markdown, "", ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`)].join(
      "\n",
    ),
    targets,
  };
}
