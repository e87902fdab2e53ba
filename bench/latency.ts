/**
 * Part 2: tool-call latency (p50, p99) of getTask, startTask, completeTask and createTask over
 * stdio and over HTTP, each in both eras (a 2026-07-28 client and a handshake-era client), with
 * 100, 10,000 and 100,000 tasks in the session (memory store, filled by createTask calls over the
 * same connection before timing), against a floor's no-op tool on the same transport, spoken to in
 * the same era: SDK v2's floor, except handshake-era HTTP, whose floor is SDK v1's with sessions
 * (as this server's handshake era over HTTP has them). Every timed call is followed by a timed no-op
 * call, so both see the same load.
 *
 * startTask and completeTask walk the leaves in tree order (start the next leaf, complete it), so
 * every call is valid; createTask adds one leaf under a subtask and an untimed deleteTask removes
 * it again, keeping the session at its size.
 */
import { freePort } from "../tests/support/processes.ts";
import { sleep } from "../tests/support/time.ts";
import {
  floorHttp,
  floorLabel,
  type FloorSdk,
  floorStdio,
  type ServerCommand,
  serverHttp,
  serverStdio,
  startHttpServer,
} from "./commands.ts";
import { rssKiB } from "./machine.ts";
import { ms, type PartOptions, type PartResult, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawHttp, connectRawStdio, type Era, type Rpc } from "./rpc.ts";
import { fillSession } from "./shapes.ts";
import { type Stats, stats } from "./stats.ts";

type Transport = "stdio" | "http";

/** A transport and the era its client speaks. */
export interface Way {
  transport: Transport;
  era: Era;
}

/** Every transport in both eras. */
export const WAYS: readonly Way[] = [
  { transport: "stdio", era: "modern" },
  { transport: "stdio", era: "legacy" },
  { transport: "http", era: "modern" },
  { transport: "http", era: "legacy" },
];

/** The floor a way is measured against. */
export function floorOf(way: Way): FloorSdk {
  return way.transport === "http" && way.era === "legacy" ? "v1" : "v2";
}

/** A way's name in the tables. */
export function wayName(way: Way): string {
  return `${way.transport}, ${way.era === "modern" ? "2026-07-28" : "handshake"}`;
}

/** The tools timed. */
export const TOOLS = ["getTask", "startTask", "completeTask", "createTask"] as const;
type ToolName = typeof TOOLS[number];

/** A connected client and how to close it (and its server). */
export interface Connected {
  rpc: Rpc;
  close(): Promise<void>;
}

/** Makes the command of the server measured from this checkout's (e.g. another checkout's main.ts). */
export type CommandOf = (cmd: ServerCommand) => ServerCommand;

/** Starts this server (through `command`, if given) or `way`'s floor, and connects to it in `way`. */
export async function connectWay(
  way: Way,
  who: "server" | "floor",
  command: CommandOf = (cmd) => cmd,
): Promise<Connected> {
  if (way.transport === "stdio") {
    const cmd = who === "server" ? command(await serverStdio()) : await floorStdio(floorOf(way));
    const rpc = await connectRawStdio(cmd, way.era);
    return { rpc, close: () => rpc.close() };
  }
  const port = freePort();
  const server = await startHttpServer(
    who === "server" ? command(await serverHttp(port)) : await floorHttp(port, {}, floorOf(way)),
    port,
  );
  try {
    const rpc = await connectRawHttp(`${server.url}/mcp`, server.child.pid, way.era);
    return {
      rpc,
      close: async () => {
        await rpc.close();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** Samples of one size on one transport. */
export interface SizeResult {
  size: number;
  fillMs: number;
  tools: Map<ToolName, { stats: Stats; replyBytes: number }>;
  noop: Stats;
  rssKiB?: number;
}

/**
 * Starts this server (through `options.command`, if given), fills a session of `size` tasks and
 * times every tool, each call followed by a no-op call of `floor`.
 */
export async function measureSize(
  way: Way,
  size: number,
  floor: Rpc,
  options: PartOptions & { command?: CommandOf },
): Promise<SizeResult> {
  const server = await connectWay(way, "server", options.command);
  try {
    const { rpc } = server;
    const sessionId = "bench";
    const { ids, ms: fillMs } = await fillSession(rpc, { sessionId, size });
    options.note(`latency ${wayName(way)} ${size}: filled in ${fillMs.toFixed(0)} ms`);
    let rss: number | undefined;
    if (way.transport === "stdio" && way.era === "legacy" && rpc.pid !== undefined) {
      await sleep(1000);
      rss = await rssKiB(rpc.pid);
    }
    const n = options.quick ? 40 : 400;
    const pairs = Math.min(n, ids.leaves.length - 10);
    const noop: number[] = [];
    const samples = new Map<ToolName, number[]>(TOOLS.map((t) => [t, []]));
    const bytes = new Map<ToolName, number[]>(TOOLS.map((t) => [t, []]));
    const time = async (tool: ToolName | undefined, args: Record<string, unknown>, record = true) => {
      const started = performance.now();
      const result = await callTool(rpc, tool ?? "getTask", { sessionId, ...args });
      const elapsed = performance.now() - started;
      if (tool && record) {
        samples.get(tool)!.push(elapsed);
        bytes.get(tool)!.push(JSON.stringify(result).length);
      }
      const floorStarted = performance.now();
      await callTool(floor, "noop", { id: "x" });
      if (record) noop.push(performance.now() - floorStarted);
      return result;
    };
    const leaf = (i: number) => ids.leaves[(i * 7919) % ids.leaves.length]!;
    await warmUp(rpc, options.quick ? 20 : 300);
    for (let i = 0; i < 30; i++) await time("getTask", { id: leaf(i) }, false);
    for (let i = 0; i < n; i++) await time("getTask", { id: leaf(i) });
    for (let i = 0; i < pairs; i++) {
      await time("startTask", { id: ids.leaves[i] });
      await time("completeTask", { id: ids.leaves[i], resolution: `Done ${i}.` });
    }
    // Make room for one task (a session may be full), then create and delete one leaf per sample.
    await callTool(rpc, "deleteTask", { sessionId, id: ids.leaves[0] });
    const parentId = ids.mids[ids.mids.length - 1]!;
    const creates = options.quick ? 40 : 200;
    for (let i = 0; i < creates; i++) {
      const created = await time("createTask", {
        parentId,
        name: `New ${i}`,
        description: "Added by the bench",
      });
      const id = (created.structuredContent?.task as { id?: string } | undefined)?.id;
      if (!id) throw new Error("createTask answered without structuredContent.task.id");
      await callTool(rpc, "deleteTask", { sessionId, id });
    }
    const tools = new Map<ToolName, { stats: Stats; replyBytes: number }>();
    for (const tool of TOOLS) {
      tools.set(tool, { stats: stats(samples.get(tool)!), replyBytes: stats(bytes.get(tool)!).p50 });
    }
    return { size, fillMs, tools, noop: stats(noop), rssKiB: rss };
  } finally {
    await server.close();
  }
}

/**
 * Untimed calls of every measured tool on a session of its own, so the server's code is as warm as
 * the floor's (one floor process serves every size; a server is started for each): without it the
 * first size's start and complete were measured while the JIT still compiled them.
 */
export async function warmUp(rpc: Rpc, calls: number): Promise<void> {
  const sessionId = "warm-up";
  const { ids } = await fillSession(rpc, { sessionId, size: 1_000 });
  const leaves = ids.leaves.slice(0, calls);
  for (const id of leaves) {
    await callTool(rpc, "getTask", { sessionId, id });
    await callTool(rpc, "startTask", { sessionId, id });
    await callTool(rpc, "completeTask", { sessionId, id, resolution: "Warm-up." });
  }
  const parentId = ids.mids[0]!;
  for (let i = 0; i < calls / 4; i++) {
    const created = await callTool(rpc, "createTask", { sessionId, parentId, name: `Warm-up ${i}` });
    const id = (created.structuredContent?.task as { id?: string } | undefined)?.id;
    if (id) await callTool(rpc, "deleteTask", { sessionId, id });
  }
  await callTool(rpc, "deleteTask", { sessionId, id: ids.roots[0]! });
}

/** Runs part 2. */
export async function latency(options: PartOptions): Promise<PartResult> {
  const sizes = options.quick ? [100, 10_000] : [100, 10_000, 100_000];
  const results = new Map<Way, SizeResult[]>();
  for (const way of WAYS) {
    const floor = await connectWay(way, "floor");
    try {
      // The floor warms up as the server does (warmUp): the same number of untimed calls.
      for (let i = 0; i < (options.quick ? 80 : 1_000); i++) await callTool(floor.rpc, "noop", { id: "x" });
      const list: SizeResult[] = [];
      for (const size of sizes) list.push(await measureSize(way, size, floor.rpc, options));
      results.set(way, list);
    } finally {
      await floor.close();
    }
  }
  const rows: (string | number)[][] = [];
  const targets: Target[] = [];
  const worst: { ratio: number; where: string }[] = [];
  for (const [way, list] of results) {
    for (const r of list) {
      const size = r.size.toLocaleString("en-US");
      rows.push([
        wayName(way),
        size,
        `noop (${floorLabel(floorOf(way))})`,
        ms(r.noop.p50),
        ms(r.noop.p99),
        "",
        "",
        "",
      ]);
      for (const tool of TOOLS) {
        const t = r.tools.get(tool)!;
        const ratio = t.stats.p50 / r.noop.p50;
        rows.push([
          wayName(way),
          size,
          tool,
          ms(t.stats.p50),
          ms(t.stats.p99),
          `${ratio.toFixed(2)}×`,
          `${(t.stats.p99 / r.noop.p99).toFixed(2)}×`,
          t.replyBytes.toLocaleString("en-US"),
        ]);
        if (tool !== "createTask") worst.push({ ratio, where: `${tool} ${wayName(way)} ${size}` });
      }
    }
  }
  const missed = worst.filter((w) => w.ratio > 1.5);
  const max = worst.reduce((a, b) => (b.ratio > a.ratio ? b : a), { ratio: 0, where: "" });
  targets.push({
    name: "get/start/complete p50 ≤ 1.5× the no-op at every size, in both eras",
    met: missed.length === 0,
    detail: `${missed.length} of ${worst.length} over 1.5×; worst ${max.where}: ${max.ratio.toFixed(2)}×`,
  });
  const fills = [...results].flatMap(([way, list]) =>
    list.map((r) => `${wayName(way)} ${r.size.toLocaleString("en-US")}: ${(r.fillMs / 1000).toFixed(1)} s`)
  );
  const rss100k = [...results.values()].flat().find((r) => r.size === 100_000 && r.rssKiB !== undefined)
    ?.rssKiB;
  const markdown = [
    "## 2. Tool-call latency (memory store)",
    "",
    "One client, one call at a time, in each era: a 2026-07-28 client (its `_meta` envelope on every request;",
    "over stdio the connection opens with `server/discover`, over HTTP each request goes alone with the",
    "standard headers) and a handshake-era client (`initialize`; over HTTP one session). Each timed call is",
    "followed by a timed call of a floor's no-op tool on the same transport and in the same era, so both see",
    `the same machine load: the \`${floorLabel("v2")}\`, except handshake-era HTTP, whose floor is the`,
    `\`${floorLabel("v1")}\` with sessions. The ratios divide by that no-op's figure at the same size. The`,
    "session is filled before timing with createTask calls of at most 500 tasks (shape: roots × 9 subtasks ×",
    "110 leaves; 100 tasks = 1 × 9 × 10). startTask/completeTask walk the leaves in order; createTask adds one",
    "leaf under a subtask (an untimed deleteTask removes it again). Reply size is the median JSON-RPC result",
    "in bytes.",
    "",
    table(
      ["transport, era", "tasks", "tool", "p50 ms", "p99 ms", "p50 ÷ no-op", "p99 ÷ no-op", "reply bytes"],
      rows,
    ),
    "",
    `Filling the session (createTask calls, excluded from the figures): ${fills.join("; ")}.`,
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
    ...(missed.length
      ? [`  Over 1.5×: ${missed.map((m) => `${m.where} (${m.ratio.toFixed(2)}×)`).join(", ")}.`]
      : []),
  ].join("\n");
  return { markdown, targets, figures: rss100k === undefined ? {} : { rss100kKiB: rss100k } };
}
