/**
 * Dashboard speed (`deno task bench:dashboard`): how fast a change reaches an open page, and how fast
 * and how big the first page load is.
 *
 *   deno run -A bench/dashboard_bench.ts [--write] [--quick] [--baseline=DIR]
 *
 * 1. Event latency: a real server process (memory store), one real Chromium page with the dashboard
 *    open plus 0 or 49 more open event streams (so 1 and 50 open pages). Each sample is one
 *    `updateTask` over MCP (HTTP); the time is from the moment its reply arrived at the client to
 *    the moment the page's `change` event fired (the page's clock and ours are the same system
 *    clock; negative means the event came before the reply).
 * 2. Update at 10,000 tasks: a real server process (JSON file store) with a team at work on a
 *    10,000-task session, one Chromium page open on it. Each sample is one `updateTask` over MCP
 *    (HTTP); the time is from its reply to the page having read the view again and redrawn it.
 * 3. First load: the page of a 100-task and a 10,000-task session (JSON file), timed by the
 *    browser's navigation timing (start → load event, active path in the HTML), and the bytes of
 *    the HTML, its assets and the page's JSON view.
 * 4. The view at 10,000 tasks, in this process: building the session's view model as `/api/view`
 *    does (folded rows, marks, notes) and writing it as JSON, per call, for the team sessions; what
 *    the server pays per page load and per live update, without browser, network or store.
 * With `--baseline=DIR` (another checkout, e.g. of `main`), parts 2 to 4 also run the team sessions
 * on servers of that checkout, interleaved with this one's, and a before/after table sums them up.
 * `--write` replaces the "## Dashboard" section of BENCHMARKS.md.
 */
import { connectHttp } from "../tests/support/http.ts";
import { spawnServer } from "../tests/support/server_process.ts";
import { ROOT } from "../tests/support/paths.ts";
import { launchBrowser, newPage } from "../tests/support/browser.ts";
import { ok } from "../tests/support/harness.ts";
import { bigPlanDocument, bigTeamPlanDocument } from "../tests/support/dashboard.ts";

const HEADING = "## Dashboard";
const note = (line: string) => console.error(`[bench:dashboard] ${line}`);

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

function fmt(value: number): string {
  return Math.abs(value) < 10 ? value.toFixed(2) : value.toFixed(1);
}

/** Samples of reply → event at the page, with `extra` more event streams open. */
async function eventLatency(extra: number, samples: number): Promise<number[]> {
  await using server = await spawnServer();
  await using mcp = await connectHttp(`${server.url}/mcp`);
  await ok(mcp.client, "createTask", { sessionId: "bench", id: "t", name: "Bench task" });
  await using browser = await launchBrowser();
  await using tab = await newPage(browser);
  const { page } = tab;
  await page.goto(`${server.url}/?session=bench`);
  await page.waitForSelector("#live[data-state=live]");
  // A listener of our own on the page, recording when each change event fires (absolute ms).
  await page.evaluate(`(() => {
    window.__arrivals = [];
    const events = new EventSource("/events");
    events.addEventListener("change", () => window.__arrivals.push(performance.timeOrigin + performance.now()));
    return new Promise((resolve) => events.addEventListener("ready", resolve));
  })()`);
  const streams: ReadableStreamDefaultReader<Uint8Array>[] = [];
  for (let i = 0; i < extra; i++) {
    const response = await fetch(`${server.url}/events`);
    if (!response.ok) throw new Error(`stream ${i}: ${response.status}`);
    const reader = response.body!.getReader();
    streams.push(reader);
    (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })().catch(() => {});
  }
  const out: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const before = await page.evaluate<number>("window.__arrivals.length");
      await ok(mcp.client, "updateTask", { sessionId: "bench", id: "t", description: `sample ${i}` });
      const replied = performance.timeOrigin + performance.now();
      // A function, not a string: the page's CSP forbids evaluating strings.
      await page.waitForFunction(
        (n) => (globalThis as unknown as { __arrivals: number[] }).__arrivals.length > n,
        before,
        { timeout: 10_000 },
      );
      const arrived = await page.evaluate<number>(`window.__arrivals[${before}]`);
      out.push(arrived - replied);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    for (const reader of streams) await reader.cancel().catch(() => {});
  }
  return out;
}

/** A session the update and first-load figures use. */
interface BenchDoc {
  tasks: number;
  /** What the session holds besides its tasks (e.g. `4 agents`). */
  label?: string;
  doc: Record<string, unknown>;
  /** The checkout whose server shows it (this one when absent). */
  baseline?: string;
}

/**
 * Samples of reply → page redrawn for each document's session, interleaved (so the machine's load
 * falls on all alike): an `updateTask` of a leaf far from the path, the page reading the view again.
 */
async function updateLatency(docs: readonly BenchDoc[], samples: number): Promise<number[][]> {
  const dir = await Deno.makeTempDir();
  const servers: Awaited<ReturnType<typeof spawnServer>>[] = [];
  const clients: Awaited<ReturnType<typeof connectHttp>>[] = [];
  try {
    await using browser = await launchBrowser();
    const pages = [];
    for (const [i, { doc }] of docs.entries()) {
      await Deno.writeTextFile(`${dir}/tasks${i}.json`, JSON.stringify(doc));
      const server = await spawnServer({
        env: { FILE_PATH: `${dir}/tasks${i}.json` },
        root: docs[i]!.baseline,
      });
      servers.push(server);
      clients.push(await connectHttp(`${server.url}/mcp`));
      const tab = await newPage(browser);
      pages.push(tab);
      await tab.page.goto(`${server.url}/?session=bench`);
      await tab.page.waitForSelector("#live[data-state=live]");
      // When each redraw lands (the script counts them in body[data-seq]), in absolute ms.
      await tab.page.evaluate(`(() => {
        window.__redrawn = [];
        new MutationObserver(() => window.__redrawn.push(performance.timeOrigin + performance.now()))
          .observe(document.body, { attributes: true, attributeFilter: ["data-seq"] });
      })()`);
    }
    const out: number[][] = docs.map(() => []);
    for (let n = 0; n < samples; n++) {
      for (const [i, tab] of pages.entries()) {
        const before = await tab.page.evaluate<number>("window.__redrawn.length");
        await ok(clients[i]!.client, "updateTask", {
          sessionId: "bench",
          id: "s9-8-100",
          description: `sample ${n}`,
        });
        const replied = performance.timeOrigin + performance.now();
        await tab.page.waitForFunction(
          (k) => (globalThis as unknown as { __redrawn: number[] }).__redrawn.length > k,
          before,
          { timeout: 10_000 },
        );
        out[i]!.push(await tab.page.evaluate<number>(`window.__redrawn[${before}]`) - replied);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    for (const tab of pages) await tab[Symbol.asyncDispose]();
    return out;
  } finally {
    for (const client of clients) await client[Symbol.asyncDispose]();
    for (const server of servers) await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

interface LoadResult {
  tasks: number;
  /** What the session holds besides its tasks (e.g. `4 agents`). */
  label: string;
  /** The checkout whose server showed it (this one when absent). */
  baseline: string | undefined;
  /** Navigation timing per sample: first byte of the answer, DOM ready, end of the load event. */
  firstByte: number[];
  domReady: number[];
  loaded: number[];
  htmlBytes: number;
  assetBytes: number;
  viewBytes: number;
  rows: number;
}

/** First loads of each document's page, interleaved (so the machine's load falls on all alike). */
async function firstLoads(docs: readonly BenchDoc[], samples: number) {
  const dir = await Deno.makeTempDir();
  const servers: Awaited<ReturnType<typeof spawnServer>>[] = [];
  try {
    const results: LoadResult[] = [];
    for (const [i, { tasks, label, doc, baseline }] of docs.entries()) {
      await Deno.writeTextFile(`${dir}/tasks${i}.json`, JSON.stringify(doc));
      const server = await spawnServer({ env: { FILE_PATH: `${dir}/tasks${i}.json` }, root: baseline });
      servers.push(server);
      const html = await (await fetch(`${server.url}/?session=bench`)).text();
      let assetBytes = 0;
      for (const [, path] of html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) {
        assetBytes += (await (await fetch(`${server.url}${path}`)).arrayBuffer()).byteLength;
      }
      const viewBytes =
        (await (await fetch(`${server.url}/api/view?session=bench`)).arrayBuffer()).byteLength;
      results.push({
        tasks,
        label: label ?? "",
        baseline,
        firstByte: [],
        domReady: [],
        loaded: [],
        htmlBytes: new TextEncoder().encode(html).length,
        assetBytes,
        viewBytes,
        rows: 0,
      });
    }
    await using browser = await launchBrowser();
    for (let n = 0; n < samples; n++) {
      for (const [i, result] of results.entries()) {
        // A fresh context each time: a first visit, assets not cached.
        await using tab = await newPage(browser);
        await tab.page.goto(`${servers[i]!.url}/?session=bench`, { waitUntil: "load" });
        const timing = await tab.page.evaluate<number[]>(
          '(({ responseStart, domContentLoadedEventEnd, loadEventEnd }) => [responseStart, domContentLoadedEventEnd, loadEventEnd])(performance.getEntriesByType("navigation")[0])',
        );
        result.firstByte.push(timing[0]!);
        result.domReady.push(timing[1]!);
        result.loaded.push(timing[2]!);
        result.rows = await tab.page.locator("#session .tree > li").count();
      }
    }
    return results;
  } finally {
    for (const server of servers) await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** What builds a session's view in a checkout: its TaskTree and buildSessionView. */
interface ViewBuilder {
  TaskTree: new (roots: unknown[]) => unknown;
  buildSessionView: (
    namespace: string,
    id: string,
    tree: unknown,
    options: Record<string, unknown>,
  ) => unknown;
}

async function viewBuilder(root: string): Promise<ViewBuilder> {
  const { TaskTree } = await import(`${root}/lib/domain/task_tree.ts`);
  const { buildSessionView } = await import(`${root}/lib/render/build.ts`);
  return { TaskTree, buildSessionView };
}

/**
 * Samples (ms) of one view built and written as JSON, as the dashboard's data does for a page or a
 * live update, for each document (and checkout), interleaved call by call.
 */
async function viewBuilds(docs: readonly BenchDoc[], samples: number): Promise<number[][]> {
  const runs = await Promise.all(docs.map(async (d) => {
    const builder = await viewBuilder(d.baseline ?? ROOT);
    const roots = (d.doc as { sessions: Record<string, unknown[]> }).sessions.bench!;
    const tree = new builder.TaskTree(structuredClone(roots));
    return () =>
      JSON.stringify(
        builder.buildSessionView("default", "bench", tree, {
          open: [],
          history: null,
          notes: true,
          work: { now: Date.now() },
        }),
      );
  }));
  const out: number[][] = docs.map(() => []);
  for (let n = 0; n < samples + 20; n++) {
    // Each call by turns, the first of a round changing every round (a collection falls on all alike).
    for (let k = 0; k < runs.length; k++) {
      const i = (k + n) % runs.length;
      const start = performance.now();
      runs[i]!();
      if (n >= 20) out[i]!.push(performance.now() - start);
    }
  }
  return out;
}

/** The short commit `root` has checked out. */
async function commitOf(root: string): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["rev-parse", "--short", "HEAD"],
    cwd: root,
    stderr: "null",
  })
    .output();
  return new TextDecoder().decode(out.stdout).trim() || "unknown";
}

function replaceSection(document: string | undefined, section: string): string {
  if (!document || document.trim() === "") return `# Benchmarks\n\n${section}\n`;
  const start = document.indexOf(`\n${HEADING}\n`);
  if (start < 0) return `${document.trimEnd()}\n\n${section}\n`;
  const rest = document.slice(start + 1 + HEADING.length);
  const next = rest.search(/\n## |\n<!-- bench\/run\.ts: begin/);
  const end = next < 0 ? document.length : start + 1 + HEADING.length + next + 1;
  return `${document.slice(0, start + 1)}${section}\n${next < 0 ? "" : "\n"}${document.slice(end)}`;
}

async function formatted(markdown: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    cwd: new URL("..", import.meta.url),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(markdown));
  await writer.close();
  const { code, stdout } = await child.output();
  return code === 0 ? new TextDecoder().decode(stdout).trimEnd() : markdown;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const samples = quick ? 20 : 200;
  const loads = quick ? 5 : 30;
  const latency: [number, number[]][] = [];
  for (const pages of [1, 50]) {
    note(`event latency with ${pages} open pages`);
    latency.push([pages, await eventLatency(pages - 1, samples)]);
  }
  const baseline = Deno.args.find((arg) => arg.startsWith("--baseline="))?.slice("--baseline=".length);
  const team: BenchDoc = { tasks: 10_000, label: "4 agents", doc: bigTeamPlanDocument("bench") };
  const paths: BenchDoc = {
    tasks: 10_000,
    label: "4 agents, paths",
    doc: bigTeamPlanDocument("bench", { paths: true }),
  };
  const teams = [team, paths, ...(baseline ? [team, paths].map((d) => ({ ...d, baseline })) : [])];
  note(
    `updates at 10,000 tasks, 4 agents at work, without and with paths${
      baseline ? ", and on the baseline" : ""
    }`,
  );
  const updates = await updateLatency(teams, quick ? 10 : 60);
  note("view builds at 10,000 tasks");
  const builds = await viewBuilds(teams, quick ? 50 : 1000);
  note("first loads, 100 and 10,000 tasks, and 10,000 with 4 agents at work, without and with paths");
  const first = await firstLoads([
    { tasks: 100, doc: bigPlanDocument("bench", 1, 9, 10) },
    { tasks: 10_000, doc: bigPlanDocument("bench") },
    ...teams,
  ], loads);
  const name = (r: { tasks: number; label?: string; baseline?: string | undefined }) =>
    `${r.tasks.toLocaleString("en-US")}${r.label ? `, ${r.label}` : ""}${r.baseline ? " (baseline)" : ""}`;
  const commits = baseline ? [await commitOf(baseline), await commitOf(ROOT)] : [];
  const versus = baseline
    ? [team, paths].map((doc) => {
      const at = (base: boolean) => teams.findIndex((d) => d.label === doc.label && !!d.baseline === base);
      const loadOf = (base: boolean) => first.find((r) => r.label === doc.label && !!r.baseline === base)!;
      const cells = (pick: (base: boolean) => number, unit: (n: number) => string) =>
        `${unit(pick(true))} → ${unit(pick(false))} (${(pick(false) / pick(true)).toFixed(2)}×)`;
      const ms = (n: number) => fmt(n);
      const bytes = (n: number) => n.toLocaleString("en-US");
      return `| ${name(doc)} | ${cells((b) => percentile(builds[at(b)]!, 50), ms)} | ${
        cells((b) => percentile(updates[at(b)]!, 50), ms)
      } | ${cells((b) => percentile(loadOf(b).domReady, 50), ms)} | ${
        cells((b) => loadOf(b).viewBytes, bytes)
      } | ${cells((b) => loadOf(b).htmlBytes, bytes)} |`;
    })
    : [];
  const load = Deno.loadavg().map((l) => l.toFixed(2)).join(" ");
  const text = [
    HEADING,
    "",
    `- Command: \`deno task bench:dashboard${quick ? " --quick" : ""}${
      baseline ? " --baseline=DIR" : ""
    }\`; ${new Date().toISOString().slice(0, 16)}Z;` +
    ` ${navigator.hardwareConcurrency} CPUs, load average at the end ${load}; ${
      new TextDecoder().decode(
        (await new Deno.Command("/usr/bin/chromium", { args: ["--version"], stderr: "null" }).output())
          .stdout,
      ).trim()
    }.`,
    "- Event latency: from a tool call's reply reaching the MCP client (HTTP, memory store) to the `change`",
    "  event firing in an open Chromium page; with 50 pages, 49 more event streams are open on the server.",
    "  Negative: the event came before the reply (the store notifies as soon as the change is durable).",
    "",
    "| open pages | samples | p50 ms | p99 ms | max ms |",
    "| --- | --- | --- | --- | --- |",
    ...latency.map(([pages, s]) =>
      `| ${pages} | ${s.length} | ${fmt(percentile(s, 50))} | ${fmt(percentile(s, 99))} | ${
        fmt(Math.max(...s))
      } |`
    ),
    "",
    "- Update at 10,000 tasks: from an `updateTask`'s reply reaching the MCP client (HTTP, JSON file store) to",
    "  an open Chromium page having read the view again and redrawn it (`4 agents`: a team at work,",
    "  tests/support/dashboard.ts `bigTeamPlanDocument`; `paths`: with paths on phase 5, five on `agent-0`'s",
    "  leaf, a git record on each held leaf, and a parallel milestone whose other leaves wait on a",
    "  reservation), the sessions interleaved.",
    "",
    "| tasks | samples | p50 ms | p99 ms | max ms |",
    "| --- | --- | --- | --- | --- |",
    ...updates.map((s, i) =>
      `| ${name(teams[i]!)} | ${s.length} | ${fmt(percentile(s, 50))} | ${fmt(percentile(s, 99))} | ${
        fmt(Math.max(...s))
      } |`
    ),
    "",
    "- The view at 10,000 tasks: one session view built as `/api/view` builds it (folded rows with their",
    "  marks, the notes; no history) and written as JSON, in the benchmark's process (no browser, network",
    "  or store), the sessions interleaved call by call (each first in turn) after 20 warm-up calls each.",
    "",
    "| tasks | samples | p50 ms | p99 ms |",
    "| --- | --- | --- | --- |",
    ...builds.map((s, i) =>
      `| ${name(teams[i]!)} | ${s.length} | ${fmt(percentile(s, 50))} | ${fmt(percentile(s, 99))} |`
    ),
    "",
    "- First load: a fresh browser context per sample (nothing cached), JSON file store, the sessions",
    "  interleaved (`4 agents`: a team at work, tests/support/dashboard.ts `bigTeamPlanDocument`: four held",
    "  leaves with leases, a parallel phase, a blocked milestone and a blocked phase; `paths` as above); times are the browser's navigation timing from the start of the navigation to the first",
    "  byte of the answer, to the DOM being ready (the path in progress is in the HTML, so it shows then),",
    "  and to the end of the load event. A fresh context also starts a new renderer process (part of the",
    "  time between the first byte and the DOM being ready on this busy machine). Bytes are uncompressed.",
    "",
    "| tasks | samples | first byte p50 / p99 ms | DOM ready p50 / p99 ms | loaded p50 / p99 ms |",
    "| --- | --- | --- | --- | --- |",
    ...first.map((r) =>
      `| ${name(r)} | ${r.loaded.length} | ${
        [r.firstByte, r.domReady, r.loaded].map((s) =>
          `${fmt(percentile(s, 50))} / ${fmt(percentile(s, 99))}`
        )
          .join(" | ")
      } |`
    ),
    "",
    "| tasks | HTML bytes | script + styles + icon bytes | `/api/view` bytes | rows in the DOM |",
    "| --- | --- | --- | --- | --- |",
    ...first.map((r) =>
      `| ${name(r)} | ${r.htmlBytes.toLocaleString("en-US")} | ${r.assetBytes.toLocaleString("en-US")} | ${
        r.viewBytes.toLocaleString("en-US")
      } | ${r.rows} |`
    ),
    ...(baseline
      ? [
        "",
        `- Before/after: the baseline (${commits[0]}) against this checkout (${commits[1]}), the same`,
        "  sessions on servers of each, interleaved in the runs above (p50s; bytes of one read). On a shared",
        "  machine the times through a browser move by a quarter from run to run; the view build, in one",
        "  process with both checkouts' code, is the steadiest measure of what the server pays per read.",
        "",
        "| tasks | view build p50 ms | update p50 ms | DOM ready p50 ms | `/api/view` bytes | HTML bytes |",
        "| --- | --- | --- | --- | --- | --- |",
        ...versus,
      ]
      : []),
  ].join("\n");
  console.log(text);
  if (Deno.args.includes("--write")) {
    const file = new URL("../BENCHMARKS.md", import.meta.url);
    const document = await Deno.readTextFile(file).catch(() => undefined);
    await Deno.writeTextFile(file, replaceSection(document, await formatted(text)));
    note("BENCHMARKS.md updated");
  }
}
