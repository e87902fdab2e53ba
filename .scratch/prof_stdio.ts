import { callTool, connectStdio, floorStdio, serverStdio, stats } from "../bench/support.ts";
const base = await serverStdio({ LOG_LEVEL: "debug" });
const cmd = { ...base, args: ["run", "-A", "main.ts", "--stdio"] };
{
  await using rpc = await connectStdio(cmd);
  const mk = (n: number, d: number): any[] =>
    Array.from({ length: n }, (_, i) => ({ name: `task ${d}-${i}`, tasks: d > 0 ? mk(n, d - 1) : [] }));
  const leaves: string[] = [];
  for (let r = 0; r < 10; r++) {
    const res: any = await callTool(rpc, "createTask", {
      name: "root " + r,
      tasks: mk(9, 0).map((t) => ({ ...t, tasks: mk(40, 0) })),
    });
    for (const s of res.structuredContent.task.tasks) for (const l of s.tasks) leaves.push(l.id);
  }
  const st: number[] = [], ct: number[] = [], gt: number[] = [];
  for (const id of leaves.slice(0, 2000)) {
    let t = performance.now();
    await callTool(rpc, "startTask", { id });
    st.push(performance.now() - t);
    t = performance.now();
    await callTool(rpc, "completeTask", { id, resolution: "ok" });
    ct.push(performance.now() - t);
    t = performance.now();
    await callTool(rpc, "getTask", { id });
    gt.push(performance.now() - t);
  }
  console.log(
    "start",
    stats(st).p50.toFixed(3),
    "complete",
    stats(ct).p50.toFixed(3),
    "get",
    stats(gt).p50.toFixed(3),
  );
}
