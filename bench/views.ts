/**
 * Part 7: the views (issue 35). The plan view's document size, and what a change costs the server
 * with a dashboard page open on a 100,000-task namespace against with none open.
 *
 *   deno run -A bench/views.ts [--quick] [--baseline=DIR]
 *
 * The change cost: a real server process (`main.ts --http`, Deno KV holding one namespace of ten
 * 10,000-task sessions, loaded with `deno task import`), one MCP client over HTTP renaming a task, one
 * call at a time. Each round runs three ways, interleaved: no page open; an event stream open as a
 * page holds it (`/events`, read as it comes), which is what the server does to learn what changed;
 * and that stream with the page's own read after each `change` event (`/api/view` of the session the
 * page shows, as lib/dashboard/browser/dashboard_main.ts reads it). The server's CPU (all its threads,
 * `/proc/PID/task/TID/schedstat`) over a round, settled for the same time after its last call in every
 * way, divided by the calls. With `--baseline=DIR` the same runs on a server of another checkout too.
 */
import { PLAN_HTML } from "../lib/plan_view/assets/plan_html.ts";
import { ok } from "../tests/support/harness.ts";
import { connectHttp } from "../tests/support/http.ts";
import { ROOT } from "../tests/support/paths.ts";
import { type ServerProcess, spawnServer } from "../tests/support/server_process.ts";
import { bigPlanDocument } from "../tests/support/dashboard.ts";
import { sleep } from "../tests/support/time.ts";
import { threadCpuMs } from "./machine.ts";
import { type PartOptions, type PartResult, ratio, table, type Target } from "./report.ts";
import { median } from "./stats.ts";

/** The plan view's document at most (bytes). */
export const PLAN_VIEW_BUDGET = 400 * 1024;
/** With a page open, a change costs at most this many times what it costs with none. */
export const PAGE_OPEN_BUDGET = 1.5;

const SESSIONS = 10;
/** How long the server gets after a round's last call to finish what the calls set off. */
const SETTLE_MS = 400;

type Way = "no page" | "event stream" | "event stream + the page's read";
const WAYS: readonly Way[] = ["no page", "event stream", "event stream + the page's read"];

/** A KV store holding one namespace of {@link SESSIONS} 10,000-task sessions, loaded by `deno task import`. */
async function bigStore(dir: string): Promise<string> {
  const sessions: Record<string, unknown> = {};
  for (let i = 0; i < SESSIONS; i++) {
    Object.assign(sessions, (bigPlanDocument(`s${i}`) as { sessions: Record<string, unknown> }).sessions);
  }
  const file = `${dir}/plan.json`;
  await Deno.writeTextFile(file, JSON.stringify({ version: 1, sessions, works: [], progress: {} }));
  const kv = `${dir}/tasks.kv`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/scripts/transfer.ts`, "import", file],
    env: { KV_PATH: kv },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`import failed: ${new TextDecoder().decode(out.stderr)}`);
  return kv;
}

/** An open page's event stream: reads events as they come and, with `reread`, the view after each change. */
function openPage(server: ServerProcess, reread: boolean): { close: () => Promise<void> } {
  const abort = new AbortController();
  let reader: ReadableStreamDefaultReader<string> | undefined;
  const done = (async () => {
    const response = await fetch(`${server.url}/events`, { signal: abort.signal });
    reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (let text = "";;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += value;
      const events = text.split("\n\n");
      text = events.pop() ?? "";
      for (const event of events) {
        if (!reread || !event.startsWith("event: change")) continue;
        await (await fetch(`${server.url}/api/view?ns=default&session=s0`, { signal: abort.signal })).text();
      }
    }
  })().catch(() => {});
  return {
    // Cancelled as well as aborted: an aborted fetch does not always end a read already waiting on
    // its body (seen once in a nine-round run), and a page that never closes would stall the run.
    close: async () => {
      abort.abort();
      await reader?.cancel().catch(() => {});
      await Promise.race([done, sleep(2000)]);
    },
  };
}

/** CPU per call (ms) of each way, a sample per round. */
async function changeCost(root: string | undefined, kv: string, rounds: number, calls: number) {
  await using server = await spawnServer({ env: { KV_PATH: kv }, ...(root ? { root } : {}) });
  await using mcp = await connectHttp(`${server.url}/mcp`);
  const pid = server.child.pid;
  let n = 0;
  const rename = () =>
    ok(mcp.client, "updateTask", { sessionId: "s0", id: "s0-0-0", name: `Renamed ${n++}` });
  for (let i = 0; i < 20; i++) await rename();
  const samples = new Map<Way, number[]>(WAYS.map((w) => [w, []]));
  for (let round = 0; round < rounds; round++) {
    for (const way of [...WAYS.slice(round % WAYS.length), ...WAYS.slice(0, round % WAYS.length)]) {
      const page = way === "no page" ? undefined : openPage(server, way !== "event stream");
      await sleep(SETTLE_MS); // the stream's first read of the namespace's version
      const before = await threadCpuMs(pid);
      for (let i = 0; i < calls; i++) await rename();
      await sleep(SETTLE_MS);
      samples.get(way)!.push((await threadCpuMs(pid) - before) / calls);
      await page?.close();
    }
  }
  return new Map([...samples].map(([way, s]) => [way, median(s)]));
}

/** Runs part 7. */
export async function views(options: PartOptions & { baseline?: string | undefined }): Promise<PartResult> {
  const docBytes = new TextEncoder().encode(PLAN_HTML).length;
  const rounds = options.quick ? 3 : 9;
  const calls = options.quick ? 30 : 100;
  const dir = await Deno.makeTempDir();
  try {
    options.note(`views: loading ${SESSIONS * 10_000} tasks into Deno KV`);
    const kv = await bigStore(dir);
    options.note(`views: ${rounds} rounds of ${calls} changes each way`);
    const ours = await changeCost(undefined, kv, rounds, calls);
    const before = options.baseline ? await changeCost(options.baseline, kv, rounds, calls) : undefined;
    const none = ours.get("no page")!;
    const stream = ours.get("event stream")!;
    const read = ours.get("event stream + the page's read")!;
    const targets: Target[] = [
      {
        name: `Plan view document ≤ ${PLAN_VIEW_BUDGET / 1024} KB`,
        met: docBytes <= PLAN_VIEW_BUDGET,
        detail: `${docBytes.toLocaleString("en-US")} bytes`,
      },
      {
        name:
          `A change with a dashboard page open on 100,000 tasks ≤ ${PAGE_OPEN_BUDGET}× its CPU with none (KV)`,
        met: stream / none <= PAGE_OPEN_BUDGET,
        detail:
          `${stream.toFixed(2)} ms vs ${none.toFixed(2)} ms = ${
            ratio(stream, none)
          }; with the page's read of ` +
          `its view after each change: ${ratio(read, none)}`,
      },
    ];
    const rows = [["this checkout", ours] as const, ...(before ? [["baseline", before] as const] : [])]
      .flatMap((
        [who, cost],
      ) =>
        WAYS.map((way) => [who, way, cost.get(way)!.toFixed(2), ratio(cost.get(way)!, cost.get("no page")!)])
      );
    const markdown = [
      "## 7. The views (plan view size; a change with a dashboard page open)",
      "",
      `The plan view's document (\`ui://checklist/plan.html\`): ${docBytes.toLocaleString("en-US")} bytes.`,
      "",
      `A change with a dashboard page open: a server (\`main.ts --http\`, Deno KV holding one namespace of ${SESSIONS} ` +
      "sessions of 10,000 tasks) and one MCP client over HTTP renaming a task, one call at a time; " +
      `${rounds} rounds of ${calls} calls each way, the ways interleaved; the server's CPU (all threads) per call, ` +
      "medians of the rounds. `event stream`: a page's `/events` open (the server learns what changed); " +
      "`+ the page's read`: the page also reads `/api/view` of a 10,000-task session after each change event.",
      "",
      table(["server", "page", "CPU per change ms", "÷ no page"], rows),
    ].join("\n");
    return { markdown, targets };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const baseline = Deno.args.find((a) => a.startsWith("--baseline="))?.slice("--baseline=".length);
  const result = await views({
    quick: Deno.args.includes("--quick"),
    note: (line) => console.error(`[bench] ${line}`),
    baseline,
  });
  console.log(result.markdown);
  for (const t of result.targets) console.log(`- ${t.name}: ${t.met ? "met" : "missed"} (${t.detail})`);
}
