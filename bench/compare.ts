/**
 * Before/after on one machine: this checkout against another one (e.g. a worktree of `main`), side
 * by side and interleaved, for the figures of issue 22. Cold start: spawn → initialize answer (wall)
 * and the process's CPU time until it answered (a separate run), for the floor, the SDK
 * alone, both servers under `deno run` and both as `deno task bundle` builds them. HTTP: both
 * servers and the floor in turns, stateful, 4 clients, getTask (the floor: its no-op); requests per
 * second and the server's CPU time per request.
 *
 *   deno run -A bench/compare.ts --other=/path/to/other/checkout [--rounds=15] [--http-rounds=9]
 *     [--clients=4] (a list: --clients=1,4,16) [--only=cold,http]
 *
 * Both servers run with this checkout's `deno.json` (the other's main.ts is started by path), so
 * they resolve the same package versions.
 */
import { withTimeout } from "../tests/support/time.ts";
import { freePort, spawnChild } from "../tests/support/processes.ts";
import { ROOT } from "../tests/support/paths.ts";
import { timeToFirstAnswer } from "./cold_start.ts";
import {
  baselineStdio,
  floorHttp,
  floorStdio,
  SDK_ONLY,
  type ServerCommand,
  serverHttp,
  serverStdio,
  startHttpServer,
} from "./commands.ts";
import { cpuMs, threadCpuMs } from "./machine.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, table } from "./report.ts";
import { callTool, connectRawHttp, type HttpRpc, initializeParams } from "./rpc.ts";
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
const only = new Set(option("only", "cold,http")!.split(","));
const note = (line: string) => console.error(`[compare] ${line}`);

/** `cmd` with the other checkout's main.ts in place of this one's. */
function theirs(cmd: ServerCommand, label: string): ServerCommand {
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

/** CPU milliseconds from spawn to the initialize answer. */
async function cpuOfRun(cmd: ServerCommand): Promise<number> {
  const child = spawnChild(cmd, { stdin: "piped", stdout: "piped", stderr: "null" });
  const writer = child.stdin.getWriter();
  const request = { jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams() };
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
    await withTimeout(reading, 30_000, `${cmd.label} initialize`);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  return cpu;
}

async function coldStart(): Promise<string> {
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const ours = await serverStdio();
  const servers: ServerCommand[] = [
    await floorStdio(),
    await baselineStdio("SDK alone", SDK_ONLY),
    theirs(ours, "other (deno run)"),
    { ...ours, label: "this (deno run)" },
    await bundled(other!, `${BENCH_DIR}/compare-other.mjs`, "other (bundle)"),
    await bundled(ROOT, `${BENCH_DIR}/compare-this.mjs`, "this (bundle)"),
  ];
  const wall = servers.map(() => [] as number[]);
  const cpu = servers.map(() => [] as number[]);
  for (let round = 0; round < rounds + 1; round++) {
    for (let i = 0; i < servers.length; i++) {
      const w = await timeToFirstAnswer(servers[i]!, "legacy");
      const c = await cpuOfRun(servers[i]!);
      if (round > 0) { // the first round warms the caches
        wall[i]!.push(w);
        cpu[i]!.push(c);
      }
    }
    note(`cold start round ${round + 1}/${rounds + 1}`);
  }
  const floorWall = median(wall[0]!);
  const floorCpu = median(cpu[0]!);
  const rows = servers.map((s, i) => [
    s.label,
    ms(median(wall[i]!)),
    `${(median(wall[i]!) / floorWall).toFixed(2)}×`,
    ms(median(cpu[i]!)),
    `${(median(cpu[i]!) / floorCpu).toFixed(2)}×`,
  ]);
  return [
    `### Cold start: ${rounds} interleaved rounds`,
    "",
    table(["server", "wall ms to initialize", "÷ floor", "CPU ms to initialize", "÷ floor"], rows),
  ].join("\n");
}

interface HttpTarget {
  label: string;
  pid: number;
  url: string;
  call: (rpc: HttpRpc, i: number) => Promise<unknown>;
  stop: () => Promise<unknown>;
}

async function httpTarget(
  label: string,
  cmd: ServerCommand,
  port: number,
  floor: boolean,
): Promise<HttpTarget> {
  const server = await startHttpServer(cmd, port);
  const url = `${server.url}/mcp`;
  let leaves: string[] = [];
  if (!floor) {
    await using setup = await connectRawHttp(url);
    leaves = (await fillSession(setup, { sessionId: "bench", size: 100 })).ids.leaves;
  }
  const call = floor
    ? (rpc: HttpRpc) => callTool(rpc, "noop", { id: "x" })
    : (rpc: HttpRpc, i: number) =>
      callTool(rpc, "getTask", { sessionId: "bench", id: leaves[i % leaves.length] });
  return { label, pid: server.child.pid, url, call, stop: () => server.stop() };
}

async function http(clientCount: number): Promise<string> {
  const ports = [freePort(), freePort(), freePort()];
  const targets = [
    await httpTarget("floor", await floorHttp(ports[0]!, {}, "v1"), ports[0]!, true),
    await httpTarget("other", theirs(await serverHttp(ports[1]!), "other"), ports[1]!, false),
    await httpTarget("this", await serverHttp(ports[2]!), ports[2]!, false),
  ];
  const rps = targets.map(() => [] as number[]);
  const cpu = targets.map(() => [] as number[]);
  try {
    for (let round = 0; round < httpRounds + 1; round++) {
      for (let t = 0; t < targets.length; t++) {
        const target = targets[t]!;
        const clients = await Promise.all(
          Array.from({ length: clientCount }, () => connectRawHttp(target.url)),
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
      note(`http, ${clientCount} clients: round ${round + 1}/${httpRounds + 1}`);
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
  return [
    `### HTTP stateful, ${clientCount} ${
      clientCount === 1 ? "client" : "clients"
    }: ${httpRounds} interleaved rounds of 1.5 s`,
    "",
    table(["server", "req/s", "÷ floor", "server CPU µs/req", "floor CPU ÷ this"], rows),
  ].join("\n");
}

if (import.meta.main) {
  const parts = [`Other checkout: \`${other}\``];
  if (only.has("cold")) parts.push("", await coldStart());
  if (only.has("http")) { for (const n of clientCounts) parts.push("", await http(n)); }
  console.log(parts.join("\n"));
}
