/**
 * Notes and the context a start hands over, measured (issue 30; docs/teams.md "Context that travels with the work"). On its own, not part of `deno task bench`:
 *
 *   deno task bench:notes [--write] [--quick]      (deno run -A bench/notes_bench.ts)
 *
 * 1. A note append against an updateTask of the name, at 10,000 tasks, per store (one stdio server
 *    each): the two calls take turns leaf by leaf on the same session, so both meet the same load and
 *    the same task (its one note included when renamed). A third row appends to a task that already
 *    holds 20 notes of 2,000 characters (each append drops one): the largest record and history delta
 *    a note can make.
 * 2. claimTask with a 30-blocker context against claimTask with none (memory store): two sessions of
 *    about 10,000 tasks alike but for one thing: in one, the part whose leaves are claimed waits for
 *    30 done tasks, each with a resolution and a note of about 400 characters, so every claim hands
 *    over a context at its 4,000-character limit (about 50 items dropped); in the other it waits for
 *    nothing. The two claim in turns, each claim followed by a completeTask of its leaf (timed apart).
 */
import { serverStdio } from "./commands.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawStdio, type Rpc, type ToolResult } from "./rpc.ts";
import { fillSession } from "./shapes.ts";
import { type Stats, stats } from "./stats.ts";

/** The heading of this benchmark's section in `BENCHMARKS.md` (outside the generated block). */
export const NOTES_HEADING = "## Notes and context (issue 30)";

const SIZE = 10_000;
const BLOCKERS = 30;

type StoreKind = "memory" | "file" | "kv";

const STORE_LABEL: Record<StoreKind, string> = {
  memory: "memory",
  file: "JSON file (`FILE_PATH`)",
  kv: "Deno KV (`KV_PATH`)",
};

async function scratch(): Promise<string> {
  await Deno.mkdir(`${BENCH_DIR}/tmp`, { recursive: true });
  return await Deno.makeTempDir({ dir: `${BENCH_DIR}/tmp`, prefix: "notes-" });
}

async function server(store: StoreKind, dir: string): Promise<Rpc> {
  const env: Record<string, string> = store === "file"
    ? { FILE_PATH: `${dir}/store.json` }
    : store === "kv"
    ? { KV_PATH: `${dir}/store.sqlite` }
    : {};
  return await connectRawStdio(await serverStdio(env));
}

/** A text of `length` characters, different for each `i`. */
function text(i: number, length: number, fill = "x"): string {
  return `${i} `.padEnd(length, fill);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

interface AppendResult {
  store: StoreKind;
  note: Stats;
  rename: Stats;
  /** Appends to a task holding 20 notes of 2,000 characters. */
  full: Stats;
  unavailable?: string;
}

/** Part 1 on one store: note appends and renames taking turns, then appends to a full task. */
async function appendVsRename(
  store: StoreKind,
  n: number,
  note: (line: string) => void,
): Promise<AppendResult> {
  const dir = await scratch();
  let rpc: Rpc | undefined;
  try {
    rpc = await server(store, dir);
    const { ids } = await fillSession(rpc, { sessionId: "notes", size: SIZE });
    note(`notes ${store}: ${SIZE} tasks ready`);
    const samples = { note: [] as number[], rename: [] as number[], full: [] as number[] };
    const r = rpc;
    for (let i = 0; i < n; i++) {
      const id = ids.leaves[i]!;
      const steps = [
        async () =>
          samples.note.push(
            await timed(() =>
              callTool(r, "updateTask", { sessionId: "notes", id, note: text(i, 200), agent: "bench" })
            ),
          ),
        async () =>
          samples.rename.push(
            await timed(() => callTool(r, "updateTask", { sessionId: "notes", id, name: `Renamed ${i}` })),
          ),
      ];
      // Alternate which goes first, so neither always meets the other's aftermath.
      if (i % 2) steps.reverse();
      for (const step of steps) await step();
    }
    const fullId = ids.leaves[n]!;
    for (let i = 0; i < 20; i++) {
      await callTool(r, "updateTask", {
        sessionId: "notes",
        id: fullId,
        note: text(i, 2000, "é"),
        agent: "bench",
      });
    }
    for (let i = 0; i < Math.ceil(n / 3); i++) {
      samples.full.push(
        await timed(() =>
          callTool(r, "updateTask", {
            sessionId: "notes",
            id: fullId,
            note: text(i, 2000, "é"),
            agent: "bench",
          })
        ),
      );
    }
    return { store, note: stats(samples.note), rename: stats(samples.rename), full: stats(samples.full) };
  } catch (error) {
    const none = stats([]);
    return { store, note: none, rename: none, full: none, unavailable: (error as Error).message };
  } finally {
    await rpc?.close();
    await Deno.remove(dir, { recursive: true });
  }
}

interface ClaimResult {
  label: string;
  claim: Stats;
  complete: Stats;
  /** Characters of a claim's `context` JSON, and of the whole reply. */
  contextChars: number;
  replyChars: number;
  dropped: number;
  tasks: number;
}

/**
 * A session for part 2: a parallel root `plan` first (its `done` part of 30 finished tasks, its
 * parallel `work` part of `leaves` leaves, waiting for the 30 when `blocked`), then 10,000 tasks.
 */
async function claimSession(rpc: Rpc, sessionId: string, leaves: number, blocked: boolean): Promise<number> {
  const blockerIds = Array.from({ length: BLOCKERS }, (_, i) => `b${i}`);
  await callTool(rpc, "createTask", {
    sessionId,
    name: "Plan",
    parallel: true,
    tasks: [
      { id: "done", name: "Done first", tasks: blockerIds.map((id, i) => ({ id, name: `Blocker ${i}` })) },
      {
        id: "work",
        name: "Work",
        parallel: true,
        ...(blocked ? { blocked_by: blockerIds } : {}),
        tasks: Array.from({ length: leaves }, (_, i) => ({ id: `w${i}`, name: `Work ${i}` })),
      },
    ],
  });
  for (const [i, id] of blockerIds.entries()) {
    await callTool(rpc, "startTask", { sessionId, id });
    await callTool(rpc, "updateTask", { sessionId, id, note: text(i, 400, "n"), agent: "lead" });
    await callTool(rpc, "completeTask", { sessionId, id, resolution: text(i, 400, "r") });
  }
  await fillSession(rpc, { sessionId, size: SIZE });
  return 1 + 1 + BLOCKERS + 1 + leaves + SIZE;
}

/** Part 2: claimTask with a 30-blocker context against claimTask with none, in turns. */
async function claimWithContext(n: number, note: (line: string) => void): Promise<ClaimResult[]> {
  const rpc = await server("memory", "");
  try {
    const ways = [
      { label: `claimTask, ${BLOCKERS}-blocker context`, sessionId: "context", blocked: true },
      { label: "claimTask, no context", sessionId: "plain", blocked: false },
    ];
    const tasks: number[] = [];
    for (const way of ways) tasks.push(await claimSession(rpc, way.sessionId, n, way.blocked));
    note(`notes claim: 2 sessions of ${tasks[0]} tasks ready`);
    const samples = ways.map(() => ({ claim: [] as number[], complete: [] as number[] }));
    const last: ToolResult[] = [];
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < ways.length; k++) {
        const w = (i + k) % ways.length;
        const way = ways[w]!;
        let reply: ToolResult | undefined;
        samples[w]!.claim.push(
          await timed(async () =>
            reply = await callTool(rpc, "claimTask", { sessionId: way.sessionId, agent: "bench" })
          ),
        );
        const id = (reply!.structuredContent?.task as { id?: string } | null)?.id;
        if (!id?.startsWith("w")) throw new Error(`claimTask took ${id}, not a work leaf`);
        if (way.blocked !== (reply!.structuredContent?.context !== undefined)) {
          throw new Error(`${way.label}: a context ${way.blocked ? "missing" : "where none was due"}`);
        }
        last[w] = reply!;
        samples[w]!.complete.push(
          await timed(() =>
            callTool(rpc, "completeTask", {
              sessionId: way.sessionId,
              id,
              resolution: `Done ${i}.`,
              agent: "bench",
            })
          ),
        );
      }
    }
    return ways.map((way, w) => {
      const context = last[w]!.structuredContent?.context as { dropped?: number } | undefined;
      return {
        label: way.label,
        claim: stats(samples[w]!.claim),
        complete: stats(samples[w]!.complete),
        contextChars: context ? JSON.stringify(context).length : 0,
        replyChars: JSON.stringify(last[w]).length,
        dropped: context?.dropped ?? 0,
        tasks: tasks[w]!,
      };
    });
  } finally {
    await rpc.close();
  }
}

/** Runs both parts; the Markdown is the whole section. */
export async function notesBench(options: { quick: boolean; note: (line: string) => void }) {
  const before = await machine();
  const n = options.quick ? 40 : 300;
  const appends: AppendResult[] = [];
  for (const store of ["memory", "file", "kv"] as const) {
    appends.push(await appendVsRename(store, n, options.note));
  }
  const claims = await claimWithContext(n, options.note);
  const m = await machine();

  const targets: Target[] = [
    ...appends.map((a): Target => ({
      name: `a note append at ${SIZE.toLocaleString("en-US")} tasks, ${
        STORE_LABEL[a.store]
      }: p50 ≤ 1.2× an updateTask of the name`,
      met: a.unavailable ? undefined : a.note.p50 <= 1.2 * a.rename.p50,
      detail: a.unavailable
        ? `not available: ${a.unavailable}`
        : `${ms(a.note.p50)} ms vs ${ms(a.rename.p50)} ms = ${(a.note.p50 / a.rename.p50).toFixed(2)}×`,
    })),
    {
      name: `claimTask with a ${BLOCKERS}-blocker context: p50 ≤ 1.5× without`,
      met: claims[0]!.claim.p50 <= 1.5 * claims[1]!.claim.p50,
      detail: `${ms(claims[0]!.claim.p50)} ms vs ${ms(claims[1]!.claim.p50)} ms = ${
        (claims[0]!.claim.p50 / claims[1]!.claim.p50).toFixed(2)
      }×`,
    },
  ];
  const loaded = [before, m].some((x) => Number(x.loadavg.split(" ")[0]) > Number(x.cpus) * 0.5);
  const markdown = [
    NOTES_HEADING,
    "",
    `\`deno task bench:notes${
      options.quick ? " --quick" : ""
    }\` (\`bench/notes_bench.ts\`). All over stdio ` +
    `with raw JSON-RPC clients, one \`main.ts --stdio\` server per store. Date: ${
      new Date().toISOString().replace(/\.\d+Z$/, "Z")
    }. Machine: ${m.cpus} × ${m.cpu}, ${m.ram}, Deno ${m.deno}; load average (1, 5, 15 min) ${before.loadavg} ` +
    `at start, ${m.loadavg} at end.`,
    ...(loaded
      ? [
        "",
        "**Taken on a loaded machine** (the load average exceeded half the CPUs): the figures are indicative; " +
        "the ratios come from calls taking turns and suffer less.",
      ]
      : []),
    ...(options.quick ? ["", "**Quick run**: fewer samples; not the figures to publish."] : []),
    "",
    ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
    "",
    `### A note append against a rename at ${SIZE.toLocaleString("en-US")} tasks`,
    "",
    `One session of ${SIZE.toLocaleString("en-US")} tasks per store (shape 10 × 9 × 110); for each of ` +
    `${n} leaves in turn, \`updateTask { note }\` (200 characters, agent named) and \`updateTask { name }\` ` +
    "on that leaf, which goes first alternating. Each is one change with its own revision and history " +
    "entry. The last column appends to one task already holding 20 notes of 2,000 characters (`é`, 4 KB " +
    "of UTF-8 each): each append drops the oldest, and the record and the history delta carry all 20.",
    "",
    table(
      [
        "store",
        "note p50 ms",
        "note p99 ms",
        "rename p50 ms",
        "rename p99 ms",
        "note ÷ rename (p50)",
        "append to a full task p50 / p99 ms",
      ],
      appends.map((a) =>
        a.unavailable ? [STORE_LABEL[a.store], `n/a: ${a.unavailable}`, "", "", "", "", ""] : [
          STORE_LABEL[a.store],
          ms(a.note.p50),
          ms(a.note.p99),
          ms(a.rename.p50),
          ms(a.rename.p99),
          `${(a.note.p50 / a.rename.p50).toFixed(2)}×`,
          `${ms(a.full.p50)} / ${ms(a.full.p99)}`,
        ]
      ),
    ),
    "",
    `### claimTask with a ${BLOCKERS}-blocker context (memory store)`,
    "",
    `Two sessions of ${
      claims[0]!.tasks.toLocaleString("en-US")
    } tasks, alike but for one thing: a parallel ` +
    `part of ${n} leaves that waits, in one of them, for ${BLOCKERS} done tasks, each with a resolution and a ` +
    "note of 400 characters; so each claim there hands over a context cut to its 4,000-character limit. The " +
    "two sessions claim in turns, each claim followed by a completeTask of its leaf.",
    "",
    table(
      [
        "claim",
        "claim p50 ms",
        "claim p99 ms",
        "p50 ÷ no context",
        "completeTask p50 ms",
        "context chars",
        "items dropped",
        "reply chars",
      ],
      claims.map((c) => [
        c.label,
        ms(c.claim.p50),
        ms(c.claim.p99),
        `${(c.claim.p50 / claims[1]!.claim.p50).toFixed(2)}×`,
        ms(c.complete.p50),
        c.contextChars,
        c.dropped,
        c.replyChars,
      ]),
    ),
  ].join("\n");
  return { markdown, targets };
}

if (import.meta.main) {
  const result = await notesBench({
    quick: Deno.args.includes("--quick"),
    note: (line) => console.error(`[bench] ${line}`),
  });
  console.log(result.markdown);
  if (Deno.args.includes("--write")) {
    await updateBenchmarks((doc) => placeSection(doc, NOTES_HEADING, result.markdown));
  }
}
