/**
 * Part 5: the cost of one change through the server, per store: a completeTask or createTask call
 * over stdio with the memory store, a JSON file (`FILE_PATH`, preloaded with the session) and Deno
 * KV (`KV_PATH`, filled by createTask calls). The reply waits until the change is durable, so the
 * call's latency includes the store's write. Store-level figures (no MCP) are in the section
 * "Store mutation latency" written by `bench/store_bench.ts`.
 */
import { serverStdio } from "./commands.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, type PartOptions, type PartResult, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawStdio, type Rpc } from "./rpc.ts";
import { fillSession, shapeDocument, shapeFor, type ShapeIds, shapeIds } from "./shapes.ts";
import { type Stats, stats } from "./stats.ts";

type StoreKind = "memory" | "file" | "kv";

interface Config {
  store: StoreKind;
  size: number;
}

interface Outcome extends Config {
  complete?: Stats;
  create?: Stats;
  setupMs?: number;
  unavailable?: string;
}

const SESSION = "bench";

async function measure(rpc: Rpc, ids: ShapeIds, n: number): Promise<{ complete: Stats; create: Stats }> {
  const complete: number[] = [];
  const create: number[] = [];
  for (let i = 0; i < n; i++) {
    const id = ids.leaves[i]!;
    await callTool(rpc, "startTask", { sessionId: SESSION, id });
    const started = performance.now();
    await callTool(rpc, "completeTask", { sessionId: SESSION, id, resolution: `Done ${i}.` });
    complete.push(performance.now() - started);
  }
  // A full session refuses createTask: make room for one task first.
  await callTool(rpc, "deleteTask", { sessionId: SESSION, id: ids.leaves[0] });
  const parentId = ids.mids[ids.mids.length - 1]!;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const result = await callTool(rpc, "createTask", {
      sessionId: SESSION,
      parentId,
      name: `New ${i}`,
      description: "Added by the bench",
    });
    create.push(performance.now() - started);
    const id = (result.structuredContent?.task as { id?: string } | undefined)?.id;
    if (!id) throw new Error("createTask answered without structuredContent.task.id");
    await callTool(rpc, "deleteTask", { sessionId: SESSION, id });
  }
  return { complete: stats(complete), create: stats(create) };
}

async function run(config: Config, n: number, options: PartOptions): Promise<Outcome> {
  const dir = `${BENCH_DIR}/tmp`;
  await Deno.mkdir(dir, { recursive: true });
  const base = `${dir}/${config.store}-${config.size}-${Deno.pid}`;
  const env: Record<string, string> = {};
  const shape = shapeFor(config.size);
  let ids: ShapeIds = shapeIds(shape);
  const started = performance.now();
  if (config.store === "file") {
    env.FILE_PATH = `${base}.json`;
    await Deno.writeTextFile(env.FILE_PATH, JSON.stringify(shapeDocument(shape, SESSION)));
  } else if (config.store === "kv") {
    env.KV_PATH = `${base}.kv`;
  }
  try {
    let rpc: Rpc;
    try {
      rpc = await connectRawStdio(await serverStdio(env));
    } catch (error) {
      return { ...config, unavailable: (error as Error).message };
    }
    try {
      if (config.store !== "file") {
        ids = (await fillSession(rpc, { sessionId: SESSION, size: config.size, deadlineMs: 240_000 })).ids;
      }
      const setupMs = performance.now() - started;
      options.note(`store change ${config.store} ${config.size}: set up in ${(setupMs / 1000).toFixed(1)} s`);
      return { ...config, ...await measure(rpc, ids, n), setupMs };
    } catch (error) {
      return { ...config, unavailable: (error as Error).message };
    } finally {
      await rpc.close();
    }
  } finally {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.startsWith(base.slice(dir.length + 1))) {
        await Deno.remove(`${dir}/${entry.name}`, { recursive: true });
      }
    }
  }
}

/** Runs part 5. */
export async function storeChange(options: PartOptions): Promise<PartResult> {
  const configs: Config[] = options.quick
    ? [{ store: "memory", size: 1000 }, { store: "file", size: 1000 }, { store: "kv", size: 1000 }]
    : [
      { store: "memory", size: 1000 },
      { store: "memory", size: 10_000 },
      { store: "memory", size: 100_000 },
      { store: "file", size: 1000 },
      { store: "file", size: 10_000 },
      { store: "kv", size: 100_000 },
    ];
  const n = options.quick ? 20 : 100;
  const outcomes: Outcome[] = [];
  for (const config of configs) outcomes.push(await run(config, n, options));
  const memoryAt = (size: number) => outcomes.find((o) => o.store === "memory" && o.size === size);
  const label = { memory: "memory", file: "JSON file (`FILE_PATH`)", kv: "Deno KV (`KV_PATH`)" };
  const rows = outcomes.map((o) => {
    if (!o.complete || !o.create) {
      return [label[o.store], o.size.toLocaleString("en-US"), "n/a", "n/a", "n/a", "n/a", "—"];
    }
    const base = memoryAt(o.size);
    return [
      label[o.store],
      o.size.toLocaleString("en-US"),
      ms(o.complete.p50),
      ms(o.complete.p99),
      ms(o.create.p50),
      ms(o.create.p99),
      base?.complete && o.store !== "memory" ? `+${ms(o.complete.p50 - base.complete.p50)}` : "—",
    ];
  });
  const target = (store: StoreKind, size: number, limit: number, name: string): Target => {
    const o = outcomes.find((x) => x.store === store && x.size === size);
    if (!o?.complete || !o.create) {
      return { name, met: undefined, detail: o?.unavailable ? `not available: ${o.unavailable}` : "not run" };
    }
    const worst = Math.max(o.complete.p50, o.create.p50);
    return {
      name,
      met: worst <= limit,
      detail: `completeTask p50 ${ms(o.complete.p50)} ms, createTask p50 ${ms(o.create.p50)} ms`,
    };
  };
  const kvSize = options.quick ? 1000 : 100_000;
  const fileSize = options.quick ? 1000 : 10_000;
  const targets = [
    target("kv", kvSize, 3, `KV change p50 ≤ 3 ms at ${kvSize.toLocaleString("en-US")} tasks`),
    target("file", fileSize, 20, `JSON file change p50 ≤ 20 ms at ${fileSize.toLocaleString("en-US")} tasks`),
  ];
  const notes = outcomes.filter((o) => o.unavailable).map((o) =>
    `- ${label[o.store]} at ${o.size.toLocaleString("en-US")} tasks: not available — ${o.unavailable}`
  );
  const markdown = [
    "## 5. Cost of one change through the server, per store (stdio)",
    "",
    `${n} timed completeTask calls (each after an untimed startTask of the same leaf) and ${n} timed createTask`,
    "calls (one leaf under a subtask, removed again by an untimed deleteTask) per store and size. The reply",
    "is sent only after the change is durable, so these include the store's write. The JSON file is",
    "preloaded with the session; memory and KV are filled by createTask calls. Store-level figures without",
    'MCP are in "Store mutation latency" below (`deno task bench:store`).',
    "",
    table([
      "store",
      "tasks",
      "completeTask p50 ms",
      "p99 ms",
      "createTask p50 ms",
      "p99 ms",
      "completeTask p50 − memory",
    ], rows),
    ...(notes.length ? ["", ...notes] : []),
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
  ].join("\n");
  return { markdown, targets };
}
