/**
 * Tool-call latency over stdio measured back to back on one warm connection (no interleaving with
 * another process), beside the floor's no-op measured the same way: the complement of part 2 of
 * `deno task bench`, which interleaves every call with the floor's.
 *
 *   deno run -A bench/back_to_back.ts [roots=100]   (roots x 9 x 110 tasks; 100 roots = 99,100 tasks)
 */
import { floorStdio, serverStdio } from "./commands.ts";
import { callTool, connectRawStdio } from "./rpc.ts";
import { stats } from "./stats.ts";

const roots = Number(Deno.args[0] ?? "100");
const CALLS = 3000;
const WARMUP = 300;

async function floorNoop(): Promise<number> {
  await using rpc = await connectRawStdio(await floorStdio());
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await callTool(rpc, "noop", {});
    samples.push(performance.now() - t);
  }
  return stats(samples.slice(WARMUP)).p50;
}

async function server(): Promise<Record<string, number>> {
  await using rpc = await connectRawStdio(await serverStdio());
  const leaves: string[] = [];
  for (let r = 0; r < roots; r++) {
    await callTool(rpc, "createTask", { id: `r${r}`, name: `Root task ${r}` });
    for (let c = 0; c < 9; c++) {
      const tasks = Array.from({ length: 110 }, (_, i) => ({ name: `Leaf task ${i}` }));
      const result = await callTool(rpc, "createTask", { parentId: `r${r}`, name: `Subtask ${c}`, tasks });
      const created = result.structuredContent as { task: { tasks: { id: string }[] } };
      for (const leaf of created.task.tasks) leaves.push(leaf.id);
    }
  }
  const samples: Record<string, number[]> = { startTask: [], completeTask: [], getTask: [] };
  const timed = async (name: string, args: Record<string, unknown>) => {
    const t = performance.now();
    await callTool(rpc, name, args);
    samples[name]!.push(performance.now() - t);
  };
  for (const id of leaves.slice(0, CALLS)) {
    await timed("startTask", { id });
    await timed("completeTask", { id, resolution: "done" });
    await timed("getTask", { id });
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v.slice(WARMUP)).p50]));
}

const noop = await floorNoop();
const ours = await server();
console.log(`| call | p50 ms | / no-op |\n| --- | --- | --- |\n| noop (floor) | ${noop.toFixed(3)} | |`);
for (const [name, p50] of Object.entries(ours)) {
  console.log(`| ${name} (${roots * 991} tasks) | ${p50.toFixed(3)} | ${(p50 / noop).toFixed(2)}x |`);
}
