/**
 * What history costs (`deno task bench:history`; docs/history.md). Two stdio servers per
 * store and size, one with history (`HISTORY_SIZE=100`) and one without (`HISTORY_SIZE=0`), over the
 * same session (the JSON file preloaded, memory and KV filled by createTask calls), take turns: each
 * round times one updateTask (a one-task change) on each, so both meet the same machine load. Then
 * the store's growth per one-task change: the JSON file's size, and the bytes of the Deno KV history
 * keys and values of those changes.
 *
 *   deno run -A bench/history_bench.ts [--write] [--quick] [--only=memory,file,kv]
 */
import { serverStdio } from "./commands.ts";
import { BENCH_DIR } from "./peer.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { ms, ratio, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawStdio, type Rpc } from "./rpc.ts";
import { fillSession, shapeDocument, shapeFor, shapeIds } from "./shapes.ts";
import { median, type Stats, stats } from "./stats.ts";

type StoreKind = "memory" | "file" | "kv";

const SESSION = "bench";
const LABEL: Record<StoreKind, string> = { memory: "memory", file: "JSON file", kv: "Deno KV" };

interface Pair {
  store: StoreKind;
  size: number;
  on?: Stats;
  off?: Stats;
  /** Median over rounds of (time with history / time without) in the same round. */
  pairedRatio?: number;
  /** Bytes the store grew by per one-task change, with history and without. */
  growthOn?: number;
  growthOff?: number;
  /** Bytes of one task as stored (its JSON), for comparison. */
  taskBytes?: number;
  unavailable?: string;
}

interface Server {
  rpc: Rpc;
  path: string | undefined;
}

async function start(store: StoreKind, size: number, historySize: number, base: string): Promise<Server> {
  const env: Record<string, string> = { HISTORY_SIZE: String(historySize) };
  let path: string | undefined;
  if (store === "file") {
    path = env.FILE_PATH = `${base}-${historySize}.json`;
    await Deno.writeTextFile(path, JSON.stringify(shapeDocument(shapeFor(size), SESSION)));
  } else if (store === "kv") {
    path = env.KV_PATH = `${base}-${historySize}.kv`;
  }
  const rpc = await connectRawStdio(await serverStdio(env));
  if (store !== "file") await fillSession(rpc, { sessionId: SESSION, size, deadlineMs: 300_000 });
  return { rpc, path };
}

/**
 * Bytes the store holds: the JSON file's size, or the keys and values of the Deno KV history entries
 * of revisions after `after` (older ones may be trimmed meanwhile; the other keys move either way).
 */
async function storeBytes(store: StoreKind, path: string | undefined, after = 0): Promise<number> {
  if (!path) return 0;
  if (store === "file") return (await Deno.stat(path)).size;
  const kv = await Deno.openKv(path);
  try {
    let bytes = 0;
    for await (const e of kv.list<Uint8Array>({ prefix: [] })) {
      if (!["h", "hd"].includes(String(e.key[0])) || Number(e.key[2]) <= after) continue;
      const value = e.value as unknown;
      bytes += JSON.stringify(e.key).length + (value instanceof Uint8Array ? value.length : 8);
    }
    return bytes;
  } finally {
    kv.close();
  }
}

const HEADING = "## History";

async function measure(pair: Pair, n: number, note: (line: string) => void): Promise<Pair> {
  const dir = `${BENCH_DIR}/tmp`;
  await Deno.mkdir(dir, { recursive: true });
  const base = `${dir}/history-${pair.store}-${pair.size}-${Deno.pid}`;
  const servers: Server[] = [];
  try {
    const started = performance.now();
    servers.push(await start(pair.store, pair.size, 100, base), await start(pair.store, pair.size, 0, base));
    note(
      `history ${pair.store} ${pair.size}: set up in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const [on, off] = servers as [Server, Server];
    const leaves = shapeIds(shapeFor(pair.size)).leaves;
    const times = { on: [] as number[], off: [] as number[] };
    const revision = async (server: Server) =>
      (await callTool(server.rpc, "task_history", { sessionId: SESSION, limit: 1 })).structuredContent
        ?.revision as number;
    const from = { on: await revision(on), off: await revision(off) };
    const before = {
      on: await storeBytes(pair.store, on.path, from.on),
      off: await storeBytes(pair.store, off.path, from.off),
    };
    for (let i = 0; i < n; i++) {
      const args = { sessionId: SESSION, id: leaves[i % leaves.length]!, name: `Renamed leaf ${i}` };
      // Alternate who goes first, so neither always meets a warmer or busier machine.
      for (const which of i % 2 ? ["on", "off"] as const : ["off", "on"] as const) {
        const server = which === "on" ? on : off;
        const t = performance.now();
        await callTool(server.rpc, "updateTask", args);
        times[which].push(performance.now() - t);
      }
    }
    const after = {
      on: await storeBytes(pair.store, on.path, from.on),
      off: await storeBytes(pair.store, off.path, from.off),
    };
    const task = JSON.stringify({
      id: leaves[0],
      name: "Renamed leaf 0",
      description: "",
      status: "todo",
      tasks: [],
    });
    return {
      ...pair,
      on: stats(times.on),
      off: stats(times.off),
      pairedRatio: median(times.on.map((t, i) => t / times.off[i]!)),
      growthOn: on.path ? (after.on - before.on) / n : undefined,
      growthOff: off.path ? (after.off - before.off) / n : undefined,
      taskBytes: task.length,
    };
  } catch (error) {
    return { ...pair, unavailable: (error as Error).message };
  } finally {
    for (const server of servers) await server.rpc.close();
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.startsWith(base.slice(dir.length + 1))) {
        await Deno.remove(`${dir}/${entry.name}`, { recursive: true });
      }
    }
  }
}

/** Measures every store at each size; returns the section's Markdown and its targets. */
export async function historyCost(
  quick: boolean,
  note: (line: string) => void,
  only: readonly StoreKind[] = ["memory", "file", "kv"],
): Promise<{
  markdown: string;
  targets: Target[];
}> {
  const sizes = quick ? [100, 1000] : [100, 10_000];
  // Fewer changes than HISTORY_SIZE: the JSON file's growth is before any trimming.
  const n = quick ? 20 : 90;
  const m = await machine();
  const pairs: Pair[] = [];
  for (const store of only) {
    for (const size of sizes) pairs.push(await measure({ store, size }, n, note));
  }
  const rows = pairs.map((p) => {
    const label = [LABEL[p.store], p.size.toLocaleString("en-US")];
    if (!p.on || !p.off) return [...label, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"];
    return [
      ...label,
      ms(p.off.p50),
      ms(p.on.p50),
      ratio(p.on.p50, p.off.p50),
      `${p.pairedRatio!.toFixed(2)}×`,
      ms(p.off.p99),
      ms(p.on.p99),
    ];
  });
  const growth = pairs.filter((p) => p.size === sizes.at(-1) && p.store !== "memory" && p.on).map((p) => [
    LABEL[p.store],
    p.size.toLocaleString("en-US"),
    p.growthOn === undefined ? "n/a" : Math.round(p.growthOn).toLocaleString("en-US"),
    p.growthOff === undefined ? "n/a" : Math.round(p.growthOff).toLocaleString("en-US"),
    String(p.taskBytes ?? "n/a"),
  ]);
  const targets: Target[] = sizes.map((size) => {
    const measured = pairs.filter((p) => p.size === size && p.on && p.off);
    const worst = measured.reduce((m, p) => Math.max(m, p.pairedRatio!), 0);
    return {
      name: `change latency with history within 1.2× of without, at ${size.toLocaleString("en-US")} tasks`,
      met: measured.length === 0 ? undefined : worst <= 1.2,
      detail: measured.map((p) => `${LABEL[p.store]} ${p.pairedRatio!.toFixed(2)}×`).join(", "),
    };
  });
  const notes = pairs.filter((p) => p.unavailable).map((p) =>
    `- ${LABEL[p.store]} at ${p.size.toLocaleString("en-US")} tasks: not available — ${p.unavailable}`
  );
  const markdown = [
    HEADING,
    "",
    `Measured with \`deno task bench:history --write\` (bench/history_bench.ts) on ${m.cpus} CPUs, ${m.cpu};`,
    `Deno ${m.deno}; load average ${m.loadavg.split(" ")[0]} at the start. Two stdio servers per store and`,
    "size, `HISTORY_SIZE=100` and `HISTORY_SIZE=0`, over the same session (the JSON file preloaded, memory",
    `and KV filled by createTask calls), take turns: ${n} rounds, each timing one updateTask (a rename of`,
    "one leaf) on each server, the order alternating. Milliseconds per call, until the durable reply.",
    "",
    table(
      [
        "store",
        "tasks",
        "off p50 ms",
        "on p50 ms",
        "p50 on / off",
        "paired on / off",
        "off p99 ms",
        "on p99 ms",
      ],
      rows,
    ),
    "",
    "`paired on / off` is the median, over the rounds, of the call with history divided by the call",
    "without it in the same round: the figure the target is judged on, since both calls of a round meet",
    "the same disk and load (a JSON file change is mostly its fsync, whose time varies several-fold here).",
    "",
    `Store growth per one-task change at ${sizes.at(-1)!.toLocaleString("en-US")} tasks, over those ${n}`,
    "changes: bytes of the JSON file (fewer changes than the history keeps, so none was trimmed yet), and",
    "bytes of the Deno KV history keys and values of those changes (`h`, `hd`; the change log and garbage",
    "sweeps move the other keys either way). A task's own JSON is given for scale: an entry holds the task's fields as they were",
    "before (here name, description, status) plus its revision, time, tool and summary.",
    "",
    table(["store", "tasks", "bytes per change, history on", "history off", "one task's JSON"], growth),
    ...(notes.length ? ["", ...notes] : []),
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
  ].join("\n");
  return { markdown, targets };
}

if (import.meta.main) {
  const note = (line: string) => console.error(`[bench:history] ${line}`);
  const only = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
  const { markdown } = await historyCost(
    Deno.args.includes("--quick"),
    note,
    only as StoreKind[] | undefined,
  );
  console.log(markdown);
  if (Deno.args.includes("--write")) {
    await updateBenchmarks((document) => placeSection(document, HEADING, markdown));
    note("BENCHMARKS.md updated");
  }
}
