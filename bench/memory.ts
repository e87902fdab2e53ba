/**
 * Part 4: resident memory (`VmRSS` from `/proc/PID/status`) over stdio: idle after the handshake,
 * this server against the SDK v2 floor (and SDK v1's floor and task-orchestrator-mcp for
 * reference), and this server holding 100,000 tasks in one session (filled by createTask calls,
 * memory store).
 */
import { sleep } from "../tests/support/time.ts";
import { floorStdio, type ServerCommand, serverStdio } from "./commands.ts";
import { rssKiB } from "./machine.ts";
import { orchestratorStdio } from "./peer.ts";
import { type PartOptions, type PartResult, table, type Target, verdict } from "./report.ts";
import { connectRawStdio } from "./rpc.ts";
import { fillSession } from "./shapes.ts";
import { median } from "./stats.ts";

const SETTLE_MS = 1000;

async function idleRss(cmd: ServerCommand): Promise<number> {
  await using rpc = await connectRawStdio(cmd);
  await rpc.request("tools/list");
  await sleep(SETTLE_MS);
  return await rssKiB(rpc.pid!);
}

async function fullRss(size: number): Promise<number> {
  await using rpc = await connectRawStdio(await serverStdio());
  await fillSession(rpc, { sessionId: "bench", size });
  await sleep(SETTLE_MS);
  return await rssKiB(rpc.pid!);
}

function mib(kib: number | undefined): string {
  return kib === undefined || !Number.isFinite(kib) ? "—" : (kib / 1024).toFixed(1);
}

/** Runs part 4; `rss100kKiB` from part 2 saves filling another session. */
export async function memory(options: PartOptions & { rss100kKiB?: number }): Promise<PartResult> {
  const runs = options.quick ? 1 : 3;
  const servers: ServerCommand[] = [await serverStdio(), await floorStdio("v2"), await floorStdio("v1")];
  try {
    servers.push(await orchestratorStdio(options.note));
  } catch (error) {
    options.note(`memory: task-orchestrator-mcp not available: ${(error as Error).message}`);
  }
  const samples = servers.map(() => [] as number[]);
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < servers.length; i++) samples[i]!.push(await idleRss(servers[i]!));
  }
  const idle = samples.map((s) => median(s));
  const bigSize = options.quick ? 10_000 : 100_000;
  const big = options.rss100kKiB !== undefined && !options.quick
    ? options.rss100kKiB
    : await fullRss(bigSize);
  options.note(`memory: idle ${idle.map((k) => mib(k)).join(" / ")} MiB, ${bigSize} tasks ${mib(big)} MiB`);
  const [ours, floor] = idle as [number, number];
  const rows: string[][] = servers.map((
    s,
    i,
  ) => [s.label, "idle", mib(idle[i]), `${(idle[i]! / floor).toFixed(2)}×`]);
  rows.splice(1, 0, [
    "checklist-mcp",
    `${bigSize.toLocaleString("en-US")} tasks`,
    mib(big),
    `${(big / floor).toFixed(2)}×`,
  ]);
  const targets: Target[] = [{
    name: "Idle memory ≤ 1.15× the SDK v2 floor",
    met: ours / floor <= 1.15,
    detail: `${mib(ours)} MiB vs ${mib(floor)} MiB = ${(ours / floor).toFixed(2)}×`,
  }];
  const markdown = [
    "## 4. Resident memory (VmRSS, stdio)",
    "",
    `Idle: after initialize and one tools/list, ${SETTLE_MS} ms later; median of ${runs} processes each.`,
    `With tasks: one session filled by createTask calls (memory store), ${SETTLE_MS} ms after the last call.`,
    "",
    table(["server", "state", "RSS MiB", "÷ v2 floor idle"], rows),
    "",
    `checklist-mcp holds about ${
      ((big - ours) / bigSize * 1024).toFixed(0)
    } bytes per task (RSS growth ÷ tasks).`,
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
  ].join("\n");
  return { markdown, targets };
}
