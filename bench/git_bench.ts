/**
 * What recording where the work lives costs (issue 34; docs/teams.md "Where the work lives"). On its own,
 * not part of `deno task bench`:
 *
 *   deno task bench:git [--write] [--quick]      (deno run -A bench/git_bench.ts)
 *
 * In a repository of 10,000 committed files (100 directories of 100) with an upstream one commit behind,
 * 30 changed files, a staged rename and 20 untracked files, a git record (`readWorkTree`: one
 * `git status --porcelain=v2 --branch -z` and one `git rev-parse --show-toplevel` at once, parsed, the
 * record built) against one `git status --porcelain=v2 --branch` alone, both started from Deno the same
 * way and taking turns (which goes first alternating). Two more rows say where the difference goes: the
 * two runs one after the other, and parsing and building the record from a captured output in process.
 * Then what an agent sees: a claimTask renewal through a stdio server recording that repository
 * (`REPO_DIR`) against the same server started without permission to run git, taking turns.
 */
import { readWorkTree, STATUS_ARGS, workTreeState } from "../lib/git/work_tree.ts";
import { parseStatus } from "../lib/git/status_parse.ts";
import { gitPlace, type Repo } from "../tests/support/git_repos.ts";
import { serverStdio } from "./commands.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, table, type Target, verdict } from "./report.ts";
import { callTool, connectRawStdio, type Rpc } from "./rpc.ts";
import { type Stats, stats } from "./stats.ts";

/** The heading of this benchmark's section in `BENCHMARKS.md` (outside the generated block). */
export const GIT_HEADING = "## Where the work lives (issue 34)";

const FILES = 10_000;
const PER_DIR = 100;
const CHANGED = 30;
const UNTRACKED = 20;

/** The one status run the target compares with, as a user would type it. */
const BASELINE_ARGS = ["status", "--porcelain=v2", "--branch"];

/** Runs git as the record does (the same environment), waiting for all its output. */
async function runPlain(args: readonly string[], cwd: string): Promise<Uint8Array> {
  const { success, stdout, stderr } = await new Deno.Command("git", {
    args: [...args],
    cwd,
    env: { GIT_OPTIONAL_LOCKS: "0" },
    stdin: "null",
  }).output();
  if (!success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(stderr)}`);
  return stdout;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** The repository of the module doc; returns the clone the records read. */
async function bigRepository(parent: string, note: (line: string) => void): Promise<Repo> {
  const place = await gitPlace({ parent });
  const repo = await place.init("big");
  const text = (d: number, f: number) => `export const v${d}_${f} = ${d * PER_DIR + f};\n`;
  for (let d = 0; d < FILES / PER_DIR; d++) {
    const dir = `${repo.dir}/src/m${String(d).padStart(2, "0")}`;
    await Deno.mkdir(dir, { recursive: true });
    await Promise.all(
      Array.from(
        { length: PER_DIR },
        (_, f) => Deno.writeTextFile(`${dir}/f${String(f).padStart(2, "0")}.ts`, text(d, f)),
      ),
    );
  }
  await repo.commit("10,000 files");
  const upstream = await place.bare();
  await repo.git("remote", "add", "origin", upstream);
  await repo.git("push", "-q", "-u", "origin", "main");
  await repo.write("CHANGELOG.md", "ahead of the upstream\n");
  await repo.commit("one ahead");
  for (let i = 0; i < CHANGED; i++) {
    await repo.write(`src/m${String(i).padStart(2, "0")}/f00.ts`, `// changed ${i}\n`);
  }
  await repo.git("mv", "src/m99/f99.ts", "src/m99/renamed.ts");
  for (let i = 0; i < UNTRACKED; i++) await repo.write(`new/u${i}.ts`, `// untracked ${i}\n`);
  note(`git: a repository of ${FILES} files ready in ${repo.dir}`);
  return repo;
}

interface GitBenchResult {
  baseline: Stats;
  record: Stats;
  sequential: Stats;
  /** Parsing and building the record from a captured output, in process (microseconds). */
  parseUs: Stats;
  dirtyCount: number;
  statusBytes: number;
}

/** The comparison of the module doc, `n` samples of each. */
async function measure(repo: Repo, n: number): Promise<GitBenchResult> {
  const record = () => readWorkTree(repo.dir);
  const baseline = () => runPlain(BASELINE_ARGS, repo.dir);
  const sequential = async () => {
    const status = await runPlain(["-c", "core.fsmonitor=false", ...STATUS_ARGS], repo.dir);
    const top = await runPlain(["-c", "core.fsmonitor=false", "rev-parse", "--show-toplevel"], repo.dir);
    const decoder = new TextDecoder();
    return workTreeState(parseStatus(decoder.decode(status)), decoder.decode(top).replace(/\n$/, ""));
  };
  for (let i = 0; i < 10; i++) for (const warm of [record, baseline, sequential]) await warm();
  const samples = { baseline: [] as number[], record: [] as number[], sequential: [] as number[] };
  for (let i = 0; i < n; i++) {
    const steps: [keyof typeof samples, () => Promise<unknown>][] = [
      ["baseline", baseline],
      ["record", record],
      ["sequential", sequential],
    ];
    // Rotate which goes first, so none always meets the others' aftermath.
    for (let k = 0; k < steps.length; k++) {
      const [name, fn] = steps[(i + k) % steps.length]!;
      samples[name].push(await timed(fn));
    }
  }
  const output = new TextDecoder().decode(await runPlain(STATUS_ARGS, repo.dir));
  const parse: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    workTreeState(parseStatus(output), repo.dir);
    parse.push((performance.now() - t) * 1000);
  }
  const state = await record();
  return {
    baseline: stats(samples.baseline),
    record: stats(samples.record),
    sequential: stats(samples.sequential),
    parseUs: stats(parse),
    dirtyCount: state.dirty_count ?? 0,
    statusBytes: output.length,
  };
}

/** claimTask renewals through two stdio servers (memory store), one recording `repo`, one not allowed to run git. */
async function renewals(repo: Repo, n: number): Promise<{ recording: Stats; not: Stats; status: Stats }> {
  const recording = await serverStdio({ REPO_DIR: repo.dir });
  const without = { ...recording, args: recording.args.filter((arg) => arg !== "--allow-run=git") };
  const servers: Rpc[] = [];
  try {
    for (const cmd of [recording, without]) servers.push(await connectRawStdio(cmd));
    for (const rpc of servers) {
      await callTool(rpc, "createTask", { id: "a", name: "A" });
      await callTool(rpc, "claimTask", { agent: "bench" });
    }
    // The two servers and a status alone (in this process, for the same moments' load) take turns.
    const steps = [
      () => callTool(servers[0]!, "claimTask", { agent: "bench" }),
      () => callTool(servers[1]!, "claimTask", { agent: "bench" }),
      () => runPlain(BASELINE_ARGS, repo.dir),
    ];
    const samples: number[][] = steps.map(() => []);
    for (let i = 0; i < n + 10; i++) {
      for (let k = 0; k < steps.length; k++) {
        const w = (i + k) % steps.length;
        const took = await timed(steps[w]!);
        if (i >= 10) samples[w]!.push(took);
      }
    }
    const recorded = (await callTool(servers[0]!, "getTask", { id: "a" })).structuredContent?.task as {
      git?: unknown;
    };
    if (!recorded.git) throw new Error("the recording server recorded nothing");
    return { recording: stats(samples[0]!), not: stats(samples[1]!), status: stats(samples[2]!) };
  } finally {
    for (const rpc of servers) await rpc.close();
  }
}

/** Runs the benchmark; the Markdown is the whole section. */
export async function gitBench(options: { quick: boolean; note: (line: string) => void }) {
  const before = await machine();
  await Deno.mkdir(`${BENCH_DIR}/tmp`, { recursive: true });
  const parent = await Deno.makeTempDir({ dir: `${BENCH_DIR}/tmp`, prefix: "git-" });
  try {
    const repo = await bigRepository(parent, options.note);
    const n = options.quick ? 30 : 200;
    const r = await measure(repo, n);
    options.note("git: renewals through two stdio servers");
    const claims = await renewals(repo, n);
    const m = await machine();
    const ratio = r.record.p50 / r.baseline.p50;
    const targets: Target[] = [{
      name: `a git record in a ${FILES.toLocaleString("en-US")}-file repository: p50 ≤ 1.2× one ` +
        "`git status --porcelain=v2 --branch` alone",
      met: ratio <= 1.2,
      detail: `${ms(r.record.p50)} ms vs ${ms(r.baseline.p50)} ms = ${ratio.toFixed(2)}×`,
    }];
    const loaded = [before, m].some((x) => Number(x.loadavg.split(" ")[0]) > Number(x.cpus) * 0.5);
    const row = (label: string, s: Stats) => [
      label,
      ms(s.p50),
      ms(s.p99),
      `${(s.p50 / r.baseline.p50).toFixed(2)}×`,
    ];
    const markdown = [
      GIT_HEADING,
      "",
      `\`deno task bench:git${options.quick ? " --quick" : ""}\` (\`bench/git_bench.ts\`). Date: ${
        new Date().toISOString().replace(/\.\d+Z$/, "Z")
      }. Machine: ${m.cpus} × ${m.cpu}, ${m.ram}, Deno ${m.deno}, ${await gitVersion()}; load average ` +
      `(1, 5, 15 min) ${before.loadavg} at start, ${m.loadavg} at end.`,
      ...(loaded
        ? [
          "",
          "**Taken on a loaded machine** (the load average exceeded half the CPUs): the figures are " +
          "indicative; the ratios come from runs taking turns and suffer less.",
        ]
        : []),
      ...(options.quick ? ["", "**Quick run**: fewer samples; not the figures to publish."] : []),
      "",
      ...targets.map((t) => `- ${t.name}: ${verdict(t.met)} (${t.detail})`),
      "",
      `A repository of ${FILES.toLocaleString("en-US")} committed files (${FILES / PER_DIR} directories of ` +
      `${PER_DIR}), one commit ahead of its upstream (a bare repository), with ${CHANGED} changed files, a ` +
      `staged rename and ${UNTRACKED} untracked files in a new directory: ${r.dirtyCount} dirty entries, ` +
      `${
        r.statusBytes.toLocaleString("en-US")
      } bytes of status. ${n} samples of each, taking turns (which goes ` +
      "first rotating), after 10 to warm up; every run is a `Deno.Command` with `GIT_OPTIONAL_LOCKS=0`.",
      "",
      table(["what", "p50 ms", "p99 ms", "p50 ÷ status alone"], [
        row("`git status --porcelain=v2 --branch` alone", r.baseline),
        row("a git record: status (`-z`) and rev-parse at once, parsed (what ships)", r.record),
        row("the same two runs one after the other (not shipped)", r.sequential),
        [
          "parsing and building the record from the captured output, in process",
          `${r.parseUs.p50.toFixed(0)} µs`,
          `${r.parseUs.p99.toFixed(0)} µs`,
          "—",
        ],
      ]),
      "",
      `What an agent sees: \`claimTask\` renewals (the agent holds its leaf, so each call renews the lease and ` +
      "records where the work lives, with no revision) through two `main.ts --stdio` servers started as the " +
      "`stdio` task starts them (memory store): one with `REPO_DIR` set to that repository, the other without " +
      `permission to run git, so it records nothing and runs nothing; and, taking turns with them for the ` +
      `same moments' load, \`git status --porcelain=v2 --branch\` alone. ${n} calls each.`,
      "",
      table(["call", "p50 ms", "p99 ms", "p50 − not recording"], [
        [
          "claimTask renewal, recording the 10,000-file repository",
          ms(claims.recording.p50),
          ms(claims.recording.p99),
          `+${ms(claims.recording.p50 - claims.not.p50)} ms`,
        ],
        [
          "claimTask renewal, not recording (no `--allow-run=git`)",
          ms(claims.not.p50),
          ms(claims.not.p99),
          "—",
        ],
        [
          "`git status --porcelain=v2 --branch` alone, in between",
          ms(claims.status.p50),
          ms(claims.status.p99),
          "—",
        ],
      ]),
    ].join("\n");
    return { markdown, targets };
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
}

async function gitVersion(): Promise<string> {
  return new TextDecoder().decode(await runPlain(["--version"], ".")).trim();
}

if (import.meta.main) {
  const result = await gitBench({
    quick: Deno.args.includes("--quick"),
    note: (line) => console.error(`[bench] ${line}`),
  });
  console.log(result.markdown);
  if (Deno.args.includes("--write")) {
    await updateBenchmarks((doc) => placeSection(doc, GIT_HEADING, result.markdown));
  }
}
