/**
 * Before/after on one machine: this checkout against another one (e.g. a worktree of `main`), side
 * by side and interleaved, in both eras wherever a server serves them (a checkout from before issue
 * 28 answers the handshake era only; its 2026-07-28 cells say so).
 *
 * - Cold start: spawn → the answer to the opening request (`server/discover` of 2026-07-28, or
 *   `initialize`), wall time and the process's CPU time until it answered (a separate run), for the
 *   floors, SDK v2 alone, both servers under `deno run` and both as `deno task bundle` builds them.
 * - HTTP: the floor and both servers in turns, getTask on a 100-task session (the floor: its no-op);
 *   requests per second and the server's CPU time per request. Handshake era with sessions against
 *   SDK v1's floor, 2026-07-28 against SDK v2's.
 * - Tool latency: part 2's measurement (`latency.ts`) of each server in each transport and era,
 *   every call followed by the floor's no-op; p50 and its ratio to the no-op.
 *
 *   deno run -A bench/compare.ts --other=/path/to/other/checkout [--rounds=15] [--http-rounds=9]
 *     [--clients=4] (a list: --clients=1,4,16) [--sizes=10000] [--only=cold,http,latency]
 *
 * Both servers run with this checkout's `deno.json` (the other's main.ts is started by path), so
 * they resolve the same package versions.
 */
import { withTimeout } from "../tests/support/time.ts";
import { freePort, spawnChild } from "../tests/support/processes.ts";
import { ROOT } from "../tests/support/paths.ts";
import { openingName, timeToFirstAnswer } from "./cold_start.ts";
import {
  baselineStdio,
  floorHttp,
  floorLabel,
  type FloorSdk,
  floorStdio,
  SDK_ONLY,
  type ServerCommand,
  serverHttp,
  serverStdio,
  startHttpServer,
} from "./commands.ts";
import { connectWay, measureSize, type SizeResult, TOOLS, wayName, WAYS } from "./latency.ts";
import { cpuMs, threadCpuMs } from "./machine.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, table } from "./report.ts";
import { callTool, connectRawHttp, type Era, type HttpRpc, openingRequest } from "./rpc.ts";
import { fillSession } from "./shapes.ts";
import { median } from "./stats.ts";

function option(name: string, fallback?: string): string | undefined {
  return Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

const other = option("other");
if (!other) throw new Error("usage: deno run -A bench/compare.ts --other=/path/to/other/checkout");
const rounds = Number(option("rounds", "15"));
const httpRounds = Number(option("http-rounds", "9"));
const clientCounts = option("clients", "4")!.split(",").map(Number);
const sizes = option("sizes", "10000")!.split(",").map(Number);
const only = new Set(option("only", "cold,http,latency")!.split(","));
const note = (line: string) => console.error(`[compare] ${line}`);
const ERAS: readonly Era[] = ["modern", "legacy"];

/** `cmd` with the other checkout's main.ts in place of this one's. */
function theirs(cmd: ServerCommand, label = cmd.label): ServerCommand {
  return { ...cmd, label, args: cmd.args.map((a) => (a === "main.ts" ? `${other}/main.ts` : a)) };
}

/** Bundles `root`'s main.ts into `output` and runs it as the README says. */
async function bundled(root: string, output: string, label: string): Promise<ServerCommand> {
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--platform", "deno", "-o", output, "main.ts"],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!built.success) throw new Error(`bundle of ${root}: ${new TextDecoder().decode(built.stderr)}`);
  const stdio = await serverStdio();
  const flags = stdio.args.slice(1, stdio.args.indexOf("main.ts"));
  return { ...stdio, label, args: ["run", "--no-config", ...flags, output, "--stdio"] };
}

/** CPU milliseconds from spawn to the answer to the opening request of `era`. */
async function cpuOfRun(cmd: ServerCommand, era: Era): Promise<number> {
  const child = spawnChild(cmd, { stdin: "piped", stdout: "piped", stderr: "null" });
  const writer = child.stdin.getWriter();
  const request = { jsonrpc: "2.0", id: 1, ...openingRequest(era) };
  await writer.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
  let cpu = NaN;
  const reading = (async () => {
    let text = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      if (text.includes("\n")) break;
    }
    cpu = await threadCpuMs(child.pid); // answered: the start-up's CPU, before the process winds down
  })();
  try {
    await withTimeout(reading, 30_000, `${cmd.label} ${request.method}`);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  return cpu;
}

/** Whether `cmd` answers a 2026-07-28 opening over stdio (a checkout before issue 28 does not). */
async function servesModernStdio(cmd: ServerCommand): Promise<boolean> {
  return await timeToFirstAnswer(cmd, "modern").then(() => true, () => false);
}

async function coldStart(): Promise<string> {
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const ours = await serverStdio();
  const floor = await floorStdio("v2");
  const both = (cmd: ServerCommand) => ERAS.map((era) => ({ cmd, era }));
  const maybeBoth = async (cmd: ServerCommand) =>
    (await servesModernStdio(cmd)) ? both(cmd) : [{ cmd, era: "legacy" as const }];
  const runs: { cmd: ServerCommand; era: Era }[] = [
    ...both(floor),
    ...both(await baselineStdio("SDK v2 alone", SDK_ONLY)),
    { cmd: await floorStdio("v1"), era: "legacy" },
    ...await maybeBoth(theirs(ours, "other (deno run)")),
    ...both({ ...ours, label: "this (deno run)" }),
    ...await maybeBoth(await bundled(other!, `${BENCH_DIR}/compare-other.mjs`, "other (bundle)")),
    ...both(await bundled(ROOT, `${BENCH_DIR}/compare-this.mjs`, "this (bundle)")),
  ];
  const wall = runs.map(() => [] as number[]);
  const cpu = runs.map(() => [] as number[]);
  for (let round = 0; round < rounds + 1; round++) {
    for (const [i, run] of runs.entries()) {
      const w = await timeToFirstAnswer(run.cmd, run.era);
      const c = await cpuOfRun(run.cmd, run.era);
      if (round > 0) { // the first round warms the caches
        wall[i]!.push(w);
        cpu[i]!.push(c);
      }
    }
    note(`cold start round ${round + 1}/${rounds + 1}`);
  }
  const floorOf = (era: Era) => runs.findIndex((r) => r.cmd === floor && r.era === era);
  const rows = runs.map((run, i) => {
    const f = floorOf(run.era);
    return [
      run.cmd.label,
      openingName(run.era),
      ms(median(wall[i]!)),
      `${(median(wall[i]!) / median(wall[f]!)).toFixed(2)}×`,
      ms(median(cpu[i]!)),
      `${(median(cpu[i]!) / median(cpu[f]!)).toFixed(2)}×`,
    ];
  });
  return [
    `### Cold start: ${rounds} interleaved rounds (÷ the ${floorLabel("v2")}, same opening)`,
    "",
    table(["server", "opening", "wall ms to the answer", "÷ floor", "CPU ms to the answer", "÷ floor"], rows),
  ].join("\n");
}

interface HttpTarget {
  label: string;
  pid: number;
  url: string;
  call: (rpc: HttpRpc, i: number) => Promise<unknown>;
  stop: () => Promise<unknown>;
}

/** Starts one server for `era`; undefined when it does not serve that era. */
async function httpTarget(
  label: string,
  cmd: ServerCommand,
  port: number,
  floor: boolean,
  era: Era,
): Promise<HttpTarget | undefined> {
  const server = await startHttpServer(cmd, port);
  const url = `${server.url}/mcp`;
  let leaves: string[] = [];
  try {
    await using setup = await connectRawHttp(url, server.child.pid, era);
    if (!floor) leaves = (await fillSession(setup, { sessionId: "bench", size: 100 })).ids.leaves;
  } catch (error) {
    note(`${label}: ${era} not served (${(error as Error).message.slice(0, 120)})`);
    await server.stop();
    return undefined;
  }
  const call = floor
    ? (rpc: HttpRpc) => callTool(rpc, "noop", { id: "x" })
    : (rpc: HttpRpc, i: number) =>
      callTool(rpc, "getTask", { sessionId: "bench", id: leaves[i % leaves.length] });
  return { label, pid: server.child.pid, url, call, stop: () => server.stop() };
}

async function http(era: Era, clientCount: number): Promise<string> {
  const sdk: FloorSdk = era === "modern" ? "v2" : "v1";
  const ports = [freePort(), freePort(), freePort()];
  const started = [
    await httpTarget(floorLabel(sdk), await floorHttp(ports[0]!, {}, sdk), ports[0]!, true, era),
    await httpTarget("other", theirs(await serverHttp(ports[1]!)), ports[1]!, false, era),
    await httpTarget("this", await serverHttp(ports[2]!), ports[2]!, false, era),
  ];
  const targets = started.filter((t): t is HttpTarget => t !== undefined);
  const rps = targets.map(() => [] as number[]);
  const cpu = targets.map(() => [] as number[]);
  try {
    for (let round = 0; round < httpRounds + 1; round++) {
      for (const [t, target] of targets.entries()) {
        const clients = await Promise.all(
          Array.from({ length: clientCount }, () => connectRawHttp(target.url, undefined, era)),
        );
        const before = await cpuMs(target.pid);
        const started = performance.now();
        const deadline = started + 1500;
        let requests = 0;
        await Promise.all(clients.map(async (rpc, c) => {
          for (let i = 0; performance.now() < deadline; i++) {
            await target.call(rpc, c * 1_000_000 + i);
            requests++;
          }
        }));
        const seconds = (performance.now() - started) / 1000;
        const used = await cpuMs(target.pid) - before;
        await Promise.all(clients.map((c) => c.close()));
        if (round > 0) {
          rps[t]!.push(requests / seconds);
          cpu[t]!.push(used * 1000 / requests);
        }
      }
      note(`http ${era}, ${clientCount} clients: round ${round + 1}/${httpRounds + 1}`);
    }
  } finally {
    for (const target of targets) await target.stop();
  }
  const floorRps = median(rps[0]!);
  const floorCpu = median(cpu[0]!);
  const rows = targets.map((t, i) => [
    t.label,
    median(rps[i]!).toFixed(0),
    `${(median(rps[i]!) / floorRps).toFixed(2)}×`,
    median(cpu[i]!).toFixed(0),
    `${(floorCpu / median(cpu[i]!)).toFixed(2)}×`,
  ]);
  const missing = started.map((t, i) => (t ? undefined : ["floor", "other", "this"][i])).filter(Boolean);
  return [
    `### HTTP ${era === "modern" ? "2026-07-28" : "handshake era, sessions"}, ${clientCount} ${
      clientCount === 1 ? "client" : "clients"
    }: ${httpRounds} interleaved rounds of 1.5 s`,
    "",
    table(["server", "req/s", "÷ floor", "server CPU µs/req", "floor CPU ÷ this"], rows),
    ...(missing.length ? ["", `Not served in this era: ${missing.join(", ")}.`] : []),
  ].join("\n");
}

async function latency(): Promise<string> {
  const rows: string[][] = [];
  const options = { quick: false, note };
  for (const way of WAYS) {
    const floor = await connectWay(way, "floor");
    try {
      for (let i = 0; i < 1_000; i++) await callTool(floor.rpc, "noop", { id: "x" });
      for (const size of sizes) {
        const measured: (SizeResult | undefined)[] = [];
        for (const command of [theirs, undefined]) {
          measured.push(
            await measureSize(way, size, floor.rpc, { ...options, command }).catch((error) => {
              note(
                `${wayName(way)}: ${command ? "other" : "this"} not measured: ${(error as Error).message}`,
              );
              return undefined;
            }),
          );
        }
        const cell = (r: SizeResult | undefined, tool: typeof TOOLS[number]) => {
          if (!r) return "not served";
          const p50 = r.tools.get(tool)!.stats.p50;
          return `${ms(p50)} (${(p50 / r.noop.p50).toFixed(2)}×)`;
        };
        for (const tool of TOOLS) {
          rows.push([
            wayName(way),
            size.toLocaleString("en-US"),
            tool,
            cell(measured[0], tool),
            cell(measured[1], tool),
          ]);
        }
      }
    } finally {
      await floor.close();
    }
  }
  return [
    "### Tool latency: p50 ms (÷ the floor's no-op, timed right after each call)",
    "",
    table(["transport, era", "tasks", "tool", "other", "this"], rows),
  ].join("\n");
}

if (import.meta.main) {
  const parts = [`Other checkout: \`${other}\``];
  if (only.has("cold")) parts.push("", await coldStart());
  if (only.has("http")) {
    for (const era of ERAS) for (const n of clientCounts) parts.push("", await http(era, n));
  }
  if (only.has("latency")) parts.push("", await latency());
  console.log(parts.join("\n"));
}
