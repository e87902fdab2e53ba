/**
 * Store mutation latency (`deno task bench:store`): the time of one change through the store
 * interface (no MCP), per store and session size, from the call to the durable reply.
 *
 *   deno run -A bench/store_bench.ts [--write] [--quick]   (-A: Deno guards /proc/cpuinfo)
 *
 * Per store and size: a session of N tasks is imported, the store reopened (cold load timed), then
 * timed changes: `edit` (one task's description), `complete` (a leaf done, its parent settled),
 * `create 10` (a task with 9 subtasks). `seen by another` is a second store on the same place
 * reading after the first one's edit (KV: catch-up from the change log; file: re-read and parse).
 * `--write` replaces the "## Store mutation latency" section of BENCHMARKS.md.
 */
import { createTask, deleteTask } from "../lib/domain/task_ops.ts";
import type { Task } from "../lib/domain/schemas.ts";
import type { TaskTree } from "../lib/domain/task_tree.ts";
import { stateFromFile } from "../lib/store/file_format.ts";
import { STORE_KINDS, type StoreKind } from "../tests/support/store_places.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { ms } from "./report.ts";
import { percentileOf } from "./stats.ts";

type Kind = StoreKind["name"];
const SESSION = "bench";
const HEADING = "## Store mutation latency";

interface Row {
  kind: Kind;
  size: number;
  fillMs: number;
  loadMs?: number;
  edit: number[];
  complete: number[];
  create: number[];
  seen?: number[];
}

/** Nearly N tasks: `size / 800` roots (at least 10; room for new subtasks), each with the rest as leaves. */
function sessionOf(size: number): Task[] {
  const roots = Math.max(10, Math.ceil(size / 800));
  const per = Math.floor((size - 10) / roots) - 1; // leaves room for the timed createTask
  return Array.from({ length: roots }, (_, r) => ({
    id: `r${r}`,
    name: `Root ${r}`,
    description: "",
    status: "todo" as const,
    tasks: Array.from({ length: per }, (_, i) => ({
      id: `r${r}-${i}`,
      name: `Leaf ${i} of root ${r}`,
      description: "A leaf task with a description of a realistic length for a plan.",
      status: "todo" as const,
      tasks: [],
    })),
  }));
}

async function time(samples: number[], fn: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await fn();
  samples.push(performance.now() - started);
}

async function measure(kind: Kind, size: number, n: number): Promise<Row> {
  const place = await STORE_KINDS.find((k) => k.name === kind)!.place();
  try {
    const { state } = stateFromFile({
      version: 1,
      sessions: { [SESSION]: sessionOf(size) },
      works: [],
      progress: {},
    });
    let store = await place.open();
    const fillStarted = performance.now();
    await store.importState(state);
    const row: Row = {
      kind,
      size,
      fillMs: performance.now() - fillStarted,
      edit: [],
      complete: [],
      create: [],
    };
    if (kind !== "memory") {
      await store.close();
      const loadStarted = performance.now();
      store = await place.open();
      await store.space("default").readTree(SESSION, () => {});
      row.loadMs = performance.now() - loadStarted;
    }
    const [roots, actual] = await store.space("default").readTree(
      SESSION,
      (tree) => [tree!.roots.length, tree!.size],
    );
    row.size = actual;
    const per = Math.floor(actual / roots) - 1;
    const leaf = (i: number) => `r${i % roots}-${Math.floor(i / roots) % per}`;
    for (let i = 0; i < n; i++) {
      await time(
        row.edit,
        () =>
          store.space("default").updateTree(
            SESSION,
            (tree) => tree.setField(tree.require(leaf(i * 7)), "description", `edit ${i}`),
          ),
      );
    }
    for (let i = 0; i < n; i++) {
      await time(row.complete, () =>
        store.space("default").updateTree(SESSION, (tree: TaskTree) => {
          const task = tree.require(leaf(i));
          tree.setStatus(task, "done");
          tree.settleFrom(tree.parentOf(task));
        }));
    }
    for (let i = 0; i < n; i++) {
      await time(row.create, () =>
        store.space("default").updateTree(SESSION, (tree) =>
          createTask(tree, {
            id: `new-${i}`,
            parentId: `r${i % roots}`,
            name: `New ${i}`,
            tasks: Array.from({ length: 9 }, (_, j) => ({ name: `New ${i}.${j}` })),
          })));
      // Untimed: keep the session at its size (a full session refuses new tasks).
      await store.space("default").updateTree(SESSION, (tree) => deleteTask(tree, `new-${i}`));
    }
    if (kind !== "memory") {
      const other = await place.open();
      await other.space("default").readTree(SESSION, () => {});
      row.seen = [];
      for (let i = 0; i < Math.min(n, 30); i++) {
        await store.space("default").updateTree(
          SESSION,
          (tree) => tree.setField(tree.require(leaf(i * 3)), "name", `seen ${i}`),
        );
        await time(row.seen, () => other.space("default").readTree(SESSION, () => {}));
      }
      await other.close();
    }
    await store.close();
    return row;
  } finally {
    await place.cleanup();
  }
}

/** One line on the machine, for the section's first paragraph. */
async function describeMachine(): Promise<string> {
  const m = await machine();
  const load = m.loadavg ? `, load average ${m.loadavg.split(" ")[0]} at the start` : "";
  return `${m.cpus} CPUs (nproc), ${m.cpu}; Deno ${m.deno}, ${m.os}${load}`;
}

function report(rows: Row[], machineLine: string, n: number): string {
  const label = { memory: "memory", file: "JSON file", kv: "Deno KV" };
  const lines = [
    HEADING,
    "",
    `Measured with \`deno task bench:store --write\` (bench/store_bench.ts) on ${machineLine}, temp files on local disk.`,
    `One change = one \`updateTree\` call until its durable reply, through the store interface (no MCP). ${n}`,
    "samples per cell; milliseconds, p50 / p95.",
    "",
    "| store | tasks | edit | complete | create 10 | seen by another store | cold load | import |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const r of rows) {
    const pair = (s: number[] | undefined) =>
      s ? `${ms(percentileOf(s, 50))} / ${ms(percentileOf(s, 95))}` : "—";
    lines.push(
      `| ${label[r.kind]} | ${r.size.toLocaleString("en-US")} | ${pair(r.edit)} | ${pair(r.complete)} | ${
        pair(r.create)
      } | ${pair(r.seen)} | ${ms(r.loadMs ?? NaN)} | ${ms(r.fillMs)} |`,
    );
  }
  const p50 = (kind: Kind, smallest: boolean) => {
    const of = rows.filter((r) => r.kind === kind);
    const row = smallest ? of[0] : of[of.length - 1];
    return row && { size: row.size, ms: percentileOf(row.edit, 50) };
  };
  const growth = (kind: Kind) => {
    const [a, b] = [p50(kind, true), p50(kind, false)];
    return a && b && a.size !== b.size
      ? `${(b.ms / a.ms).toFixed(1)}× from ${a.size.toLocaleString("en-US")} to ${
        b.size.toLocaleString("en-US")
      } tasks (edit p50 ${ms(a.ms)} → ${ms(b.ms)} ms)`
      : "not measured";
  };
  lines.push(
    "",
    "- `edit`: one task's description; `complete`: a leaf set done and its parent settled; `create 10`: a",
    "  task with 9 subtasks under a root. `seen by another store`: a second store on the same file or KV",
    "  reads after the first one's edit (KV catches up from its change log; the file store re-reads,",
    "  validates and parses the file). `cold load`: open and first read; `import`: writing it whole.",
    `- Growth: Deno KV ${growth("kv")}: a change writes only the touched task records, the session`,
    "  meta and a log entry, so it does not grow with the session; the cold load does (one listing of all",
    `  task keys). JSON file ${growth("file")}: every change rewrites and fsyncs the whole file, so it`,
    "  grows with the session's size in bytes, on top of a fixed cost of fsync and rename.",
    "- Targets: KV change p50 ≤ 3 ms at 100,000 tasks; JSON file change ≤ 20 ms at 10,000 tasks.",
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const n = quick ? 30 : 200;
  const plan: [Kind, number][] = quick ? [["memory", 1000], ["file", 1000], ["kv", 1000]] : [
    ["memory", 1000],
    ["memory", 10_000],
    ["memory", 100_000],
    ["file", 1000],
    ["file", 10_000],
    ["kv", 1000],
    ["kv", 10_000],
    ["kv", 100_000],
  ];
  const rows: Row[] = [];
  for (const [kind, size] of plan) {
    console.error(`[bench:store] ${kind} ${size}`);
    rows.push(await measure(kind, size, kind === "file" && size >= 10_000 ? Math.min(n, 100) : n));
  }
  const text = report(rows, await describeMachine(), n);
  console.log(text);
  if (Deno.args.includes("--write")) {
    await updateBenchmarks((document) => placeSection(document, HEADING, text));
    console.error("[bench:store] BENCHMARKS.md updated");
  }
}
