/**
 * This server against task-orchestrator-mcp 1.1.0 (the Node server of seed 002, whose tools this one
 * answers under the same names) on a 10,000-task plan, both over stdio with their in-memory stores:
 * getTask, startTask and completeTask, one call at a time, the two servers taking turns. The plan
 * is 10 roots × 9 subtasks × 110 leaves, created with nested `tasks` (1,000 tasks a call). Before
 * timing, this server gets part 2's warm-up (untimed calls of every tool on a session of its own,
 * `latency.ts`), so its figures are of warm code as part 2's are, and task-orchestrator two untimed
 * rounds on its plan's first leaves (its calls take a second each, so compiling its code is noise).
 *
 *   deno task bench:peer [--pairs=20]
 */
import { callTool, connectRawStdio, type Rpc, type ToolResult } from "./rpc.ts";
import { serverStdio } from "./commands.ts";
import { warmUp } from "./latency.ts";
import { orchestratorStdio } from "./peer.ts";
import { ms, table } from "./report.ts";
import { fillSession } from "./shapes.ts";
import { median } from "./stats.ts";

const pairs = Number(Deno.args.find((a) => a.startsWith("--pairs="))?.slice("--pairs=".length) ?? "20");
const note = (line: string) => console.error(`[peer] ${line}`);

interface Contender {
  label: string;
  rpc: Rpc;
  /** Arguments naming this server's session, if it has sessions. */
  session: Record<string, string>;
  leaves: string[];
}

/** The created task, from structured content (ours) or the JSON text (task-orchestrator's). */
function createdTask(result: ToolResult): Tree {
  const structured = result.structuredContent?.task as Tree | undefined;
  if (structured) return structured;
  const text = result.content?.map((c) => c.text ?? "").join("") ?? "";
  return (JSON.parse(text) as { task: Tree }).task;
}

interface Tree {
  id: string;
  tasks?: Tree[];
}

/** Fills task-orchestrator's plan (the shape `fillSession` gives ours); returns the leaves' ids in order. */
async function fillTheirs(rpc: Rpc): Promise<string[]> {
  const leaves: string[] = [];
  for (let r = 0; r < 10; r++) {
    const tasks = Array.from({ length: 9 }, (_, m) => ({
      name: `Part ${r}.${m}`,
      tasks: Array.from({ length: 110 }, (_, l) => ({ name: `Step ${r}.${m}.${l}` })),
    }));
    const root = createdTask(await callTool(rpc, "createTask", { name: `Root ${r}`, tasks }));
    for (const mid of root.tasks ?? []) for (const leaf of mid.tasks ?? []) leaves.push(leaf.id);
  }
  return leaves;
}

async function time(rpc: Rpc, tool: string, args: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  const result = await callTool(rpc, tool, args);
  const elapsed = performance.now() - started;
  if (result.isError) throw new Error(`${tool}: ${result.content?.map((c) => c.text).join(" ")}`);
  return elapsed;
}

const ours = await connectRawStdio(await serverStdio());
const theirs = await connectRawStdio(await orchestratorStdio(note));
try {
  const contenders: Contender[] = [
    { label: "checklist-mcp", rpc: ours, session: { sessionId: "peer" }, leaves: [] },
    { label: "task-orchestrator-mcp 1.1.0", rpc: theirs, session: {}, leaves: [] },
  ];
  for (const c of contenders) {
    const started = performance.now();
    c.leaves = c.rpc === ours
      ? (await fillSession(ours, { sessionId: "peer", size: 10_000 })).ids.leaves
      : await fillTheirs(c.rpc);
    note(`${c.label}: 10,000 tasks created in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (c.leaves.length !== 9_900) throw new Error(`${c.label}: ${c.leaves.length} leaves, expected 9,900`);
  }
  await warmUp(ours, 300);
  const warm = 2;
  for (let i = 0; i < warm; i++) {
    const id = contenders[1]!.leaves[i]!;
    await time(theirs, "getTask", { id });
    await time(theirs, "startTask", { id });
    await time(theirs, "completeTask", { id, resolution: "Warm-up." });
  }
  contenders[1]!.leaves = contenders[1]!.leaves.slice(warm);
  note("warmed up");
  const samples = contenders.map(() => ({
    get: [] as number[],
    start: [] as number[],
    complete: [] as number[],
  }));
  for (let i = 0; i < pairs; i++) {
    for (const [k, c] of contenders.entries()) {
      const id = c.leaves[i]!;
      samples[k]!.get.push(await time(c.rpc, "getTask", { ...c.session, id }));
      samples[k]!.start.push(await time(c.rpc, "startTask", { ...c.session, id }));
      samples[k]!.complete.push(
        await time(c.rpc, "completeTask", { ...c.session, id, resolution: `Done ${i}.` }),
      );
    }
    if (i % 5 === 4) note(`${i + 1}/${pairs} rounds`);
  }
  const rows = (["get", "start", "complete"] as const).map((op) => {
    const [a, b] = [median(samples[0]![op]), median(samples[1]![op])];
    return [`${op}Task`, ms(a), ms(b), `${(b / a).toFixed(b / a < 10 ? 1 : 0)}×`];
  });
  console.log([
    `### This server against task-orchestrator-mcp at 10,000 tasks (stdio, memory, ${pairs} rounds, p50 ms)`,
    "",
    table(["tool", "checklist-mcp", "task-orchestrator-mcp 1.1.0", "task-orchestrator ÷ ours"], rows),
  ].join("\n"));
} finally {
  await ours.close();
  await theirs.close();
}
