import { callTool, cleanEnv, connectStdio, floorStdio, stats } from "../bench/support.ts";
for (const pad of [0, 5000, 10000, 20000]) {
  Deno.env.set("FLOOR_PAD", String(pad));
  const cmd = await floorStdio();
  await using rpc = await connectStdio({ ...cmd, env: { ...cmd.env, FLOOR_PAD: String(pad) } });
  const samples: number[] = [];
  for (let i = 0; i < 600; i++) {
    const t = performance.now();
    await callTool(rpc, "noop", {});
    samples.push(performance.now() - t);
  }
  console.log(pad, stats(samples.slice(100)).p50.toFixed(3));
}
