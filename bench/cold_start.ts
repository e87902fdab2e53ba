/**
 * Part 1: cold start to the first answer over stdio, for both openings of a connection: a
 * 2026-07-28 client's `server/discover` (with its `_meta` envelope) and a 2025 client's
 * `initialize`. Each run spawns the process, writes the opening request on its stdin at once, times
 * until the answer line arrives on stdout, then sends `tools/list` as a client does before its first
 * turn and times its answer too, then kills it. Every (server, opening) pair takes its
 * turn in each round (A, B, C, A, B, C, …) so drift in machine load hits all of them alike.
 *
 * The floor (issue 28) is a minimal SDK v2 server (`bench/floor_server.ts`: `serveStdio`, one
 * tool). Beside this server and the floor run: Deno answering by hand, SDK v2's `McpServer` and
 * `serveStdio` with no tool (the limit for any server on SDK v2's classes), SDK v1's floor (the
 * floor before issue 28), this server as the `bundle` task builds it, and task-orchestrator-mcp's
 * bin entry (handshake era only, so `initialize` only).
 */
import { spawnChild } from "../tests/support/processes.ts";
import { withTimeout } from "../tests/support/time.ts";
import {
  baselineStdio,
  bundleStdio,
  floorLabel,
  floorStdio,
  HELLO,
  SDK_ONLY,
  type ServerCommand,
  serverStdio,
  splitBundleStdio,
} from "./commands.ts";
import { BENCH_DIR, orchestratorStdio } from "./peer.ts";
import { ms, type PartOptions, type PartResult, ratio, table, type Target, verdict } from "./report.ts";
import { type Era, openingRequest, paramsIn } from "./rpc.ts";
import { median, stats } from "./stats.ts";

/** The opening request's name in the tables. */
export function openingName(era: Era): string {
  return era === "modern" ? "server/discover (2026-07-28)" : "initialize (2025)";
}

/** Milliseconds from spawn to the answer to the opening request of `era`, for one run. */
export async function timeToFirstAnswer(cmd: ServerCommand, era: Era): Promise<number> {
  return (await timeToAnswers(cmd, era, { toolsList: false })).first;
}

/**
 * One run, as a client opens a connection: the opening request of `era` written at spawn; once it is
 * answered (with `toolsList`), `notifications/initialized` in the handshake era and `tools/list`, the
 * list a client waits for before its first turn. Milliseconds from spawn to each answer.
 */
export async function timeToAnswers(
  cmd: ServerCommand,
  era: Era,
  { toolsList = true }: { toolsList?: boolean } = {},
): Promise<{ first: number; toolsList: number }> {
  const opening = openingRequest(era);
  const encoder = new TextEncoder();
  const line = (message: Record<string, unknown>) => encoder.encode(`${JSON.stringify(message)}\n`);
  const started = performance.now();
  const child = spawnChild(cmd, { stdin: "piped", stdout: "piped" });
  try {
    const writer = child.stdin.getWriter();
    await writer.write(line({ jsonrpc: "2.0", id: 1, ...opening }));
    const answered = (async () => {
      let first = NaN;
      let buffer = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf("\n")) >= 0) {
          const message = JSON.parse(buffer.slice(0, end)) as { id?: number; error?: unknown };
          buffer = buffer.slice(end + 1);
          if (message.id !== 1 && message.id !== 2) continue;
          const elapsed = performance.now() - started;
          const method = message.id === 1 ? opening.method : "tools/list";
          if (message.error !== undefined) {
            throw new Error(
              `${cmd.label} answered ${method} with an error: ${JSON.stringify(message.error)}`,
            );
          }
          if (message.id === 2) return { first, toolsList: elapsed };
          first = elapsed;
          if (!toolsList) return { first, toolsList: NaN };
          if (era === "legacy") {
            await writer.write(line({ jsonrpc: "2.0", method: "notifications/initialized" }));
          }
          await writer.write(
            line({ jsonrpc: "2.0", id: 2, method: "tools/list", params: paramsIn(era, undefined) }),
          );
        }
      }
      throw new Error(`${cmd.label} closed stdout without answering ${opening.method} and tools/list`);
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

/** A server that may not build: its command, or why not. */
interface Optional {
  cmd?: ServerCommand;
  why?: string;
}

/** One server with one opening. */
interface Contender {
  cmd: ServerCommand;
  era: Era;
  /** Whether it has tools to list (Deno alone and SDK v2 alone have none). */
  lists: boolean;
}

/** Runs part 1. */
export async function coldStart(options: PartOptions): Promise<PartResult> {
  const rounds = options.quick ? 4 : 30;
  const warmup = 2;
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const both = (cmd: ServerCommand, lists = true): Contender[] => [
    { cmd, era: "modern", lists },
    { cmd, era: "legacy", lists },
  ];
  const ours = await serverStdio();
  const floor = await floorStdio("v2");
  const sdkAlone = await baselineStdio("SDK v2 alone (McpServer + serveStdio)", SDK_ONLY);
  const contenders: Contender[] = [
    { cmd: await baselineStdio("Deno alone (hello)", HELLO), era: "legacy", lists: false },
    ...both(sdkAlone, false),
    ...both(floor),
    { cmd: await floorStdio("v1"), era: "legacy", lists: true },
    ...both(ours),
  ];
  /** A server that may not build (a bundle): among the contenders when built, or why not. */
  const optional = async (what: string, make: () => Promise<ServerCommand>): Promise<Optional> => {
    try {
      const cmd = await make();
      contenders.push(...both(cmd));
      return { cmd };
    } catch (error) {
      const why = (error as Error).message;
      options.note(`cold start: ${what} not available: ${why}`);
      return { why };
    }
  };
  const bundle = await optional("bundle", () => bundleStdio(`${BENCH_DIR}/checklist-mcp.mjs`));
  const split = await optional("split bundle", () => splitBundleStdio(`${BENCH_DIR}/split`));
  let orchestrator: ServerCommand | undefined;
  let orchestratorError: string | undefined;
  try {
    orchestrator = await orchestratorStdio(options.note);
    contenders.push({ cmd: orchestrator, era: "legacy", lists: true });
  } catch (error) {
    orchestratorError = (error as Error).message;
    options.note(`cold start: task-orchestrator-mcp not available: ${orchestratorError}`);
  }
  const samples = contenders.map(() => [] as number[]);
  const listed = contenders.map(() => [] as number[]);
  for (let round = 0; round < warmup + rounds; round++) {
    for (const [i, c] of contenders.entries()) {
      const { first, toolsList } = await timeToAnswers(c.cmd, c.era, { toolsList: c.lists });
      if (round >= warmup) {
        samples[i]!.push(first);
        if (c.lists) listed[i]!.push(toolsList);
      }
    }
    options.note(`cold start: round ${round + 1}/${warmup + rounds}`);
  }
  const medianOf = (cmd: ServerCommand | undefined, era: Era, of = samples) => {
    const i = contenders.findIndex((c) => c.cmd === cmd && c.era === era);
    return i < 0 || of[i]!.length === 0 ? undefined : median(of[i]!);
  };
  const theirs = medianOf(orchestrator, "legacy");
  const rows = contenders.map((c, i) => {
    const s = stats(samples[i]!);
    const floorFigure = medianOf(floor, c.era) ?? NaN;
    const list = listed[i]!.length ? median(listed[i]!) : undefined;
    return [
      c.cmd.label,
      openingName(c.era),
      `\`${[c.cmd.command === "node" ? "node" : "deno", ...c.cmd.args.map(short)].join(" ")}\``,
      ms(s.p50),
      ms(s.min),
      ms(s.max),
      ratio(s.p50, floorFigure),
      theirs === undefined ? "—" : ratio(s.p50, theirs),
      list === undefined ? "—" : ms(list),
      list === undefined ? "—" : ratio(list, medianOf(floor, c.era, listed) ?? NaN),
    ];
  });
  const targets: Target[] = [];
  for (const era of ["modern", "legacy"] as const) {
    const a = medianOf(ours, era)!;
    const b = medianOf(floor, era)!;
    targets.push({
      name: `Cold start, ${openingName(era)}, ≤ 1.1× the SDK v2 floor`,
      met: a / b <= 1.1,
      detail: `${ms(a)} ms vs ${ms(b)} ms = ${ratio(a, b)}; SDK v2 alone: ${
        ratio(medianOf(sdkAlone, era)!, b)
      }`,
    });
  }
  for (const era of ["modern", "legacy"] as const) {
    const a = medianOf(ours, era, listed)!;
    const b = medianOf(floor, era, listed)!;
    targets.push({
      name: `Cold start to the tools/list answer, after ${openingName(era)}, ≤ 1.2× the SDK v2 floor`,
      met: a / b <= 1.2,
      detail: `${ms(a)} ms vs ${ms(b)} ms = ${ratio(a, b)}`,
    });
  }
  const oursModern = medianOf(ours, "modern")!;
  const oursLegacy = medianOf(ours, "legacy")!;
  targets.push({
    name: "Cold start ≤ 0.6× task-orchestrator-mcp's bin entry (its initialize)",
    met: theirs === undefined ? undefined : Math.max(oursModern, oursLegacy) / theirs <= 0.6,
    detail: theirs === undefined
      ? `not available: ${orchestratorError}`
      : `${ms(oursLegacy)} ms (initialize), ${ms(oursModern)} ms (server/discover) vs ${ms(theirs)} ms = ${
        ratio(oursLegacy, theirs)
      }, ${ratio(oursModern, theirs)}`,
  });
  /** The line under the table for an optional server: its figures against the floor, no target. */
  const sideLine = (name: string, aside: string, { cmd, why }: Optional, lists: boolean) =>
    cmd === undefined
      ? `- The ${name}: not available (${why}).`
      : `- The ${name} (no target${aside}): ${
        (["modern", "legacy"] as const).map((era) =>
          `${openingName(era)} ${ms(medianOf(cmd, era)!)} ms = ${
            ratio(medianOf(cmd, era)!, medianOf(floor, era)!)
          } the floor${
            lists ? `, tools/list ${ratio(medianOf(cmd, era, listed)!, medianOf(floor, era, listed)!)}` : ""
          }`
        ).join("; ")
      }.`;
  const bundleLine = sideLine("bundle", "", bundle, false);
  const splitLine = sideLine(
    "split bundle",
    "; the same code as checklist-mcp, our modules in a few chunks",
    split,
    true,
  );
  const markdown = [
    "## 1. Cold start (stdio, spawn → the first answer, and the tools/list answer)",
    "",
    `${rounds} interleaved runs per server and opening after ${warmup} warm-up rounds (A, B, C, A, B, C, …). Each run`,
    "spawns the process, writes the opening request on stdin (a 2026-07-28 client's `server/discover` with its",
    "`_meta` envelope, or a 2025 client's `initialize`), times until the answer line arrives on stdout; then, as a",
    "client does before its first turn, sends `tools/list` (after `notifications/initialized` in the handshake",
    "era) and times until its answer arrives (the tools/list columns), and kills the process.",
    `The floor is a minimal SDK v2 server (\`${floorLabel("v2")}\`: \`McpServer\`, one no-op tool,`,
    '`serveStdio`); "÷ floor" divides by its figure for the same opening. Deno alone answers the line by hand and',
    "imports nothing; SDK v2 alone serves an `McpServer` with no tool through `serveStdio`: no server on SDK v2's",
    `classes answers sooner. The \`${
      floorLabel("v1")
    }\` is SDK v1's (the floor before issue 28). checklist-mcp`,
    "builds its server with SDK v2's `Server` (`lib/mcp/server.ts`) and serves it with `serveStdio`. The bundle is",
    "`deno task bundle`'s output run with `deno run --no-config`. The split bundle is the same code with our own",
    "modules bundled into a few chunks and npm packages left to the import map (`deno bundle --code-splitting",
    "--packages external`), run with `deno run --config deno.json`: what a start costs when our modules are not",
    "each loaded as a file of their own. task-orchestrator-mcp speaks the handshake era only.",
    "",
    table(
      [
        "server",
        "opening",
        "command",
        "median ms",
        "min ms",
        "max ms",
        "÷ floor",
        "÷ task-orchestrator",
        "tools/list median ms",
        "÷ floor",
      ],
      rows,
    ),
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
    bundleLine,
    splitLine,
  ].join("\n");
  return { markdown, targets };
}

function short(arg: string): string {
  return arg.replace(/^.*\/(bench\/[\w/]+\.ts)$/, "$1").replace(/^.*\/\.bench\//, ".bench/").replace(
    /^.*\/deno\.json$/,
    "deno.json",
  );
}
