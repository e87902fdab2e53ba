/**
 * Part 1: cold start to the first `initialize` answer over stdio. Each run spawns the process,
 * writes the initialize request on its stdin at once, times until the answer line arrives on
 * stdout, then kills it. Servers take turns (A, B, C, A, B, C, …) so drift in machine load hits
 * all of them alike. Beside this server and the floor run two baselines (Deno answering by hand,
 * and the SDK's McpServer + stdio transport alone: the limit for any server built on the SDK's
 * server classes, which this one no longer is), this
 * server as the `bundle` task builds it, and task-orchestrator-mcp.
 */
import { spawnChild } from "../tests/support/processes.ts";
import { withTimeout } from "../tests/support/time.ts";
import {
  baselineStdio,
  bundleStdio,
  floorStdio,
  HELLO,
  SDK_ONLY,
  type ServerCommand,
  serverStdio,
} from "./commands.ts";
import { BENCH_DIR, orchestratorStdio } from "./peer.ts";
import { ms, type PartOptions, type PartResult, ratio, table, type Target, verdict } from "./report.ts";
import { initializeParams } from "./rpc.ts";
import { median, stats } from "./stats.ts";

/** Milliseconds from spawn to the initialize answer, for one run. */
export async function timeToInitialize(cmd: ServerCommand): Promise<number> {
  const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams() });
  const started = performance.now();
  const child = spawnChild(cmd, { stdin: "piped", stdout: "piped" });
  try {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(request + "\n"));
    const answered = (async () => {
      let buffer = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        if (buffer.includes("\n") && /"id"\s*:\s*1\b/.test(buffer)) return performance.now() - started;
      }
      throw new Error(`${cmd.label} closed stdout without answering initialize`);
    })();
    return await withTimeout(answered, 30_000, `${cmd.label} cold start`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
  }
}

/** Runs part 1. */
export async function coldStart(options: PartOptions): Promise<PartResult> {
  const rounds = options.quick ? 4 : 30;
  const warmup = 2;
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const servers: ServerCommand[] = [
    await baselineStdio("Deno alone (hello)", HELLO),
    await baselineStdio("SDK alone (McpServer + stdio)", SDK_ONLY),
    await floorStdio(),
    await serverStdio(),
  ];
  let bundleError: string | undefined;
  try {
    servers.push(await bundleStdio(`${BENCH_DIR}/checklist-mcp.mjs`));
  } catch (error) {
    bundleError = (error as Error).message;
    options.note(`cold start: bundle not available: ${bundleError}`);
  }
  let orchestratorError: string | undefined;
  try {
    servers.push(await orchestratorStdio(options.note));
  } catch (error) {
    orchestratorError = (error as Error).message;
    options.note(`cold start: task-orchestrator-mcp not available: ${orchestratorError}`);
  }
  const at = (label: string) => servers.findIndex((s) => s.label === label);
  const samples = servers.map(() => [] as number[]);
  for (let round = 0; round < warmup + rounds; round++) {
    for (let i = 0; i < servers.length; i++) {
      const elapsed = await timeToInitialize(servers[i]!);
      if (round >= warmup) samples[i]!.push(elapsed);
    }
    options.note(`cold start: round ${round + 1}/${warmup + rounds}`);
  }
  const medians = samples.map((s) => median(s));
  const figure = (i: number) => (i < 0 ? undefined : medians[i]);
  const ours = figure(at("checklist-mcp"));
  const floor = figure(at("floor"));
  const sdkOnly = figure(at("SDK alone (McpServer + stdio)"));
  const bundle = figure(at("checklist-mcp bundle"));
  const orchestrator = figure(servers.findIndex((s) => s.label.startsWith("task-orchestrator-mcp")));
  const rows = servers.map((server, i) => {
    const s = stats(samples[i]!);
    return [
      server.label,
      `\`${[server.command === "node" ? "node" : "deno", ...server.args.map(short)].join(" ")}\``,
      ms(s.p50),
      ms(s.min),
      ms(s.max),
      ratio(s.p50, floor!),
      orchestrator === undefined ? "—" : ratio(s.p50, orchestrator),
    ];
  });
  const vsFloor = ours! / floor!;
  const vsOrchestrator = orchestrator === undefined ? undefined : ours! / orchestrator;
  const vsBundle = bundle === undefined ? undefined : bundle / floor!;
  const targets: Target[] = [
    {
      name: "Cold start ≤ 0.9× the floor",
      met: vsFloor <= 0.9,
      detail: `${ms(ours!)} ms vs ${ms(floor!)} ms = ${vsFloor.toFixed(2)}×; the SDK alone: ${
        ratio(sdkOnly!, floor!)
      }`,
    },
    {
      name: "Bundle cold start ≤ 0.8× the floor",
      met: vsBundle === undefined ? undefined : vsBundle <= 0.8,
      detail: vsBundle === undefined
        ? `not available: ${bundleError}`
        : `${ms(bundle!)} ms vs ${ms(floor!)} ms = ${vsBundle.toFixed(2)}×`,
    },
    {
      name: "Cold start ≤ 0.6× task-orchestrator-mcp",
      met: vsOrchestrator === undefined ? undefined : vsOrchestrator <= 0.6,
      detail: vsOrchestrator === undefined
        ? `not available: ${orchestratorError}`
        : `${ms(ours!)} ms vs ${ms(orchestrator!)} ms = ${vsOrchestrator.toFixed(2)}×`,
    },
  ];
  const markdown = [
    "## 1. Cold start (stdio, spawn → initialize answer)",
    "",
    `${rounds} interleaved runs per server after ${warmup} warm-up rounds (A, B, C, A, B, C, …). Each run spawns the`,
    "process, writes the initialize request on stdin, times until the answer line arrives on stdout, and",
    "kills the process. Deno alone answers the line by hand and imports nothing; the SDK alone imports",
    "`McpServer` and the stdio transport and connects with no tool: no server built on the SDK's server classes",
    "starts sooner (its `Server` imports Ajv, a CommonJS package of ~80 files, and `types.js` builds every MCP",
    "schema, whatever the server uses). checklist-mcp answers MCP with its own exchange and schemas",
    "(`lib/mcp/protocol_server.ts`) and loads none of the SDK's runtime over stdio. The bundle is",
    "`deno task bundle`'s output run with `deno run --no-config`.",
    "",
    table(["server", "command", "median ms", "min ms", "max ms", "÷ floor", "÷ task-orchestrator"], rows),
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
  ].join("\n");
  return { markdown, targets };
}

function short(arg: string): string {
  return arg.replace(/^.*\/(bench\/[\w/]+\.ts)$/, "$1").replace(/^.*\/\.bench\//, ".bench/");
}
