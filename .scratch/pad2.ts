import { callTool, connectStdio, floorStdio, stats } from "../bench/support.ts";
const cmd = await floorStdio();
await using a = await connectStdio({ ...cmd, env: { ...cmd.env, FLOOR_PAD: "0" } });
await using b = await connectStdio({ ...cmd, env: { ...cmd.env, FLOOR_PAD: "6000" } });
const sa: number[] = [], sb: number[] = [];
for (let i = 0; i < 4000; i++) {
  let t = performance.now();
  await callTool(a, "noop", {});
  sa.push(performance.now() - t);
  t = performance.now();
  await callTool(b, "noop", {});
  sb.push(performance.now() - t);
}
console.log("pad0", stats(sa.slice(500)).p50.toFixed(3), "pad6000", stats(sb.slice(500)).p50.toFixed(3));
