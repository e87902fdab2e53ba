/**
 * Plan view speed (`deno task bench:app`): the view document's size, the time from a tool result
 * reaching the view to the active path shown, and the largest read the view makes.
 *
 *   deno run -A bench/app_bench.ts [--write] [--quick]
 *
 * The view runs in the test host of tests/support/plan_view.ts (the official MCP Apps host side, Debian's Chromium),
 * its reads relayed through the SDK client to a server in this process over a JSON file store. Each
 * sample hands the view a fresh `startTask` result; the time is the view's own, between the
 * performance marks it sets when the result arrives and when the redrawn tree is in the DOM (its
 * reads through the host and the server included). Sizes alternate sample by sample. The largest
 * read is over every call the view made, unfolding a folded part and loading "more" rows included.
 * `--write` replaces the "## Plan view" section of BENCHMARKS.md.
 */
import { PLAN_HTML } from "../lib/plan_view/assets/plan_html.ts";
import { JsonFileStore } from "../lib/store/json_file_store.ts";
import { connectUi, openPlanHost, type PlanHost } from "../tests/support/plan_view.ts";
import { launchBrowser } from "../tests/support/browser.ts";
import type { ToolResult } from "../tests/support/harness.ts";
import { bigPlanDocument, bigTeamPlanDocument } from "../tests/support/dashboard.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { stats } from "./stats.ts";

const HEADING = "## Plan view";
const note = (line: string) => console.error(`[bench:app] ${line}`);

/** The view's own time from the last result to the last redraw, in ms. */
function lastUpdate(host: PlanHost): Promise<number> {
  return host.view.evaluate(() => {
    const result = performance.getEntriesByName("checklist:result").at(-1)!;
    const shown = performance.getEntriesByName("checklist:shown").at(-1)!;
    return shown.startTime - result.startTime;
  });
}

async function gzipBytes(text: string): Promise<number> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const int = (n: number) => n.toLocaleString("en-US");

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const samples = quick ? 10 : 50;
  const dir = await Deno.makeTempDir();
  try {
    const sizes: {
      tasks: number;
      label?: string;
      doc: Record<string, unknown>;
      active: string;
      agent?: string;
    }[] = [
      { tasks: 100, doc: bigPlanDocument("bench", 1, 9, 10), active: "s0-4-0" },
      { tasks: 10_000, doc: bigPlanDocument("bench"), active: "s5-4-50" },
      // A team at work (tests/support/dashboard.ts): agent-0's own startTask on the leaf it holds.
      {
        tasks: 10_000,
        label: "4 agents",
        doc: bigTeamPlanDocument("bench"),
        active: "s5-4-50",
        agent: "agent-0",
      },
    ];
    await using browser = await launchBrowser();
    const runs: {
      tasks: number;
      name: string;
      host: PlanHost;
      args: Record<string, unknown>;
      result: ToolResult;
      times: number[];
      close: () => Promise<void>;
    }[] = [];
    for (const [i, size] of sizes.entries()) {
      const file = `${dir}/tasks${i}.json`;
      await Deno.writeTextFile(file, JSON.stringify(size.doc));
      const conn = await connectUi({ store: await JsonFileStore.open(file) });
      const host = await openPlanHost(browser, conn.client);
      const args = { sessionId: "bench", id: size.active, ...(size.agent ? { agent: size.agent } : {}) };
      const result = await conn.client.callTool({ name: "startTask", arguments: args }) as ToolResult;
      await host.show(args, result); // warm-up
      runs.push({
        tasks: size.tasks,
        name: `${int(size.tasks)}${size.label ? `, ${size.label}` : ""}`,
        host,
        args,
        result,
        times: [],
        close: async () => {
          await host[Symbol.asyncDispose]();
          await conn[Symbol.asyncDispose]();
        },
      });
    }
    note(`${samples} updates per size`);
    for (let n = 0; n < samples; n++) {
      for (const run of runs) {
        await run.host.show(run.args, run.result);
        run.times.push(await lastUpdate(run.host));
      }
    }
    // The largest read: what the view read for the updates, then a folded part opened and paged.
    const rowCounts: number[] = [];
    for (const run of runs.slice(1)) {
      const big = run.host;
      await big.view.click('li[data-id="p7"] button.fold');
      await big.view.click('li[data-id="m7-2"] button.fold');
      await big.view.waitForSelector('li[data-id="s7-2-0"]');
      await big.view.click('li[data-kind=more][data-parent="m7-2"] button.load');
      await big.view.waitForSelector('li[data-id="s7-2-109"]');
      rowCounts.push(await big.view.locator("#session .tree > li").count());
    }
    const largest = runs.map((run) => Math.max(...run.host.calls.map((c) => c.bytes)));
    const rows = rowCounts.join(" (with 4 agents: ") + ")";
    for (const run of runs) await run.close();

    const docBytes = new TextEncoder().encode(PLAN_HTML).length;
    const m = await machine();
    const chromium = new TextDecoder().decode(
      (await new Deno.Command("/usr/bin/chromium", { args: ["--version"], stderr: "null" }).output()).stdout,
    ).trim();
    const table = runs.map((run, i) => {
      const s = stats(run.times);
      return `| ${run.name} | ${s.n} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.max)} | ${int(largest[i]!)} |`;
    });
    const section = [
      HEADING,
      "",
      `- Command: \`deno task bench:app${quick ? " --quick" : ""}\`; ${
        new Date().toISOString().slice(0, 16)
      }Z; ${m.cpus} CPUs (${m.cpu}), load average at the end ${m.loadavg}; Deno ${m.deno}; ${chromium}.`,
      `- View document (\`ui://checklist/plan.html\`, script and styles inline): ${int(docBytes)} bytes, ${
        int(await gzipBytes(PLAN_HTML))
      } gzipped (issue 35's target: ≤ 400 KB; 619,883 bytes before it). Most of it is the MCP Apps client library the view bundles (\`@modelcontextprotocol/ext-apps\` with the SDK and the parts of zod it uses: \`deno task build:app\` bundles zod tree-shaken, see scripts/build_app.ts); the renderer it shares with the dashboard is about 10 KB.`,
      "- Update: a `startTask` result handed to the view by the test host (official MCP Apps host side, sandboxed cross-origin iframe) until the redrawn tree with the active path is in the DOM, measured by the view's own performance marks; it includes the `view_session` read relayed through the host and the SDK client (in memory) to the server (JSON file store). Largest read: the biggest reply (bytes of JSON) among every call the view made, at 10,000 tasks after also opening a folded milestone and loading its \"more\" row; replies are capped at 64 KiB. `4 agents`: a team at work (tests/support/dashboard.ts `bigTeamPlanDocument`: four held leaves with leases, a parallel phase, a blocked milestone and a blocked phase), the result agent-0's own `startTask`.",
      "",
      "| tasks | samples | update p50 ms | p99 ms | max ms | largest read bytes |",
      "| --- | --- | --- | --- | --- | --- |",
      ...table,
      "",
      `- Rows in the view's DOM at 10,000 tasks after those reads: ${rows}.`,
      `- Targets (contract, "Plan view in chat clients"): the active path within 1 s of the result at 10,000 tasks (p99 here ${
        fmt(stats(runs[1]!.times).p99)
      } ms); no read over 65,536 bytes (largest here ${int(Math.max(...largest.slice(1)))}).`,
    ].join("\n");
    console.log(section);
    if (Deno.args.includes("--write")) {
      await updateBenchmarks((doc) => placeSection(doc, HEADING, section));
      note("BENCHMARKS.md updated");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
