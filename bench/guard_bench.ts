/**
 * What the commit guard costs a commit (issue 34; docs/guard.md). On its own, not part of `deno task bench`:
 *
 *   deno task bench:guard [--write] [--quick]      (deno run -A bench/guard_bench.ts)
 *
 * In a repository of 10,000 committed files, wall time of one real `git commit` of one changed file,
 * without a hook and with the hook `guard --install` writes (the `deno task --config deno.json guard`
 * form), reading a FILE_PATH store, a KV_PATH store, and a running HTTP server (`--url`), each with its
 * own `core.hooksPath`; every process-level row takes its turn in the same rounds, which goes first
 * rotating, so all share the moment's load. Every store holds one session of
 * 1,000 tasks (bench/shapes.ts) in which 12 agents hold leaves reserving 8 patterns each (96 patterns,
 * as bench:team), made by a real stdio server; the committed file is free, so every guarded commit goes
 * through after a full check. Before measuring, each hook must refuse a commit of a reserved path.
 * A fifth way is a hook that starts the guard through main.ts, as `deno task guard` did before it started
 * the guard's own module (lib/guard/guard_main.ts). Then where the time goes: the same check run directly;
 * the guard started with nothing to check (`--help`) through `deno task`, through `deno run` of its own
 * module, and through main.ts; Deno alone; and, in process, one session read from each store and the
 * decision.
 */
import { LIMITS } from "../lib/domain/limits.ts";
import { stagedConflicts } from "../lib/guard/guard_check.ts";
import { readFileTree, readKvTree } from "../lib/guard/store_read.ts";
import { hookScript, shellLine } from "../lib/guard/hook_install.ts";
import { serverEnv } from "../tests/support/env.ts";
import { gitPlace, type Repo } from "../tests/support/git_repos.ts";
import { CONFIG, MAIN, ROOT } from "../tests/support/paths.ts";
import { freePort } from "../tests/support/processes.ts";
import { taskPermissions } from "../tests/support/server_process.ts";
import { serverHttp, serverStdio, startHttpServer } from "./commands.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { BENCH_DIR } from "./peer.ts";
import { ms, table } from "./report.ts";
import { callTool, connectRawStdio } from "./rpc.ts";
import { fillSession, modulePaths, shapeFor } from "./shapes.ts";
import { type Stats, stats } from "./stats.ts";

/** The heading of this benchmark's section in `BENCHMARKS.md` (outside the generated block). */
export const GUARD_HEADING = "## The commit guard (issue 34)";

const FILES = 10_000;
const PER_DIR = 100;
const TASKS = 1000;
const HOLDERS = 12;
const SESSION = "bench";
/** What `deno task guard` starts: the guard's own module, without the server's that main.ts imports. */
const GUARD_ENTRY = `${ROOT}/lib/guard/guard_main.ts`;

/** The environment of every child: no server settings of this shell, no global git config, no INIT_CWD. */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = serverEnv({ GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C", ...extra });
  delete env.INIT_CWD;
  return env;
}

async function run(command: string, args: string[], cwd: string, env?: Record<string, string>) {
  const out = await new Deno.Command(command, {
    args,
    cwd,
    env: childEnv(env),
    clearEnv: true,
    stdin: "null",
  })
    .output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** 10,000 committed files (100 directories of 100) and a README the commits change. */
async function repository(parent: string): Promise<Repo> {
  const place = await gitPlace({ parent });
  const repo = await place.init("big");
  for (let d = 0; d < FILES / PER_DIR; d++) {
    const dir = `${repo.dir}/src/m${String(d).padStart(2, "0")}`;
    await Deno.mkdir(dir, { recursive: true });
    await Promise.all(
      Array.from(
        { length: PER_DIR },
        (_, f) => Deno.writeTextFile(`${dir}/f${f}.ts`, `export const v = ${f};\n`),
      ),
    );
  }
  await repo.write("README.md", "big\n");
  await repo.commit("10,000 files");
  return repo;
}

/**
 * The plan of the module doc in the store `env` names, made through a real stdio server: 1,000 tasks,
 * parallel, the first 8 subtasks with modulePaths(k), 12 leaves of the last held by 12 agents with
 * modulePaths(100 + k) each, leases of a day.
 */
async function plan(env: Record<string, string>): Promise<void> {
  const rpc = await connectRawStdio(await serverStdio(env));
  try {
    const { ids } = await fillSession(rpc, { sessionId: SESSION, size: TASKS });
    for (const id of [...ids.roots, ...ids.mids]) {
      await callTool(rpc, "updateTask", { sessionId: SESSION, id, parallel: true });
    }
    const perRoot = shapeFor(TASKS).mids;
    for (let k = 0; k < perRoot - 1; k++) {
      await callTool(rpc, "updateTask", { sessionId: SESSION, id: ids.mids[k]!, paths: modulePaths(k) });
    }
    const held = ids.leaves.filter((id) => id.startsWith(`r0.m${perRoot - 1}.`)).slice(0, HOLDERS);
    for (const [k, id] of held.entries()) {
      await callTool(rpc, "updateTask", { sessionId: SESSION, id, paths: modulePaths(100 + k) });
      const reply = await callTool(rpc, "claimTask", {
        sessionId: SESSION,
        agent: `holder${k + 1}`,
        id,
        lease_seconds: 86_400,
      });
      if ((reply.structuredContent?.task as { id?: string } | null)?.id !== id) {
        throw new Error(`holder${k + 1} did not get ${id}`);
      }
    }
  } finally {
    await rpc.close();
  }
}

interface Way {
  label: string;
  /** The hooks directory its commits use (empty: no hook). */
  hooks: string;
}

/** Installs the hook with `flags` into `hooks` through the CLI, as a user would. */
async function install(repo: Repo, hooks: string, flags: string[]): Promise<void> {
  await repo.git("config", "--local", "core.hooksPath", hooks);
  try {
    const out = await run(
      Deno.execPath(),
      ["task", "-q", "--config", CONFIG, "guard", "--install", "--session", SESSION, ...flags],
      repo.dir,
    );
    if (out.code !== 0) throw new Error(`install failed: ${out.stderr}${out.stdout}`);
  } finally {
    await repo.git("config", "--local", "--unset", "core.hooksPath");
  }
}

/**
 * A hook as `deno task guard` ran it before it started the guard's own module: the guard through
 * main.ts (and its static imports), here by `deno run` directly, so without `deno task`'s own start.
 */
async function installThroughMain(hooks: string, flags: string[]): Promise<void> {
  await Deno.mkdir(hooks, { recursive: true });
  const perms = await taskPermissions("guard");
  const line = shellLine([Deno.execPath(), "run", ...perms, "--config", CONFIG, MAIN, "guard", ...flags]);
  await Deno.writeTextFile(`${hooks}/pre-commit`, hookScript(line));
  await Deno.chmod(`${hooks}/pre-commit`, 0o755);
}

function commit(repo: Repo, way: Way, message: string) {
  return run("git", ["-c", `core.hooksPath=${way.hooks}`, "commit", "-q", "-m", message], repo.dir);
}

/** Each hook must refuse a commit of a path holder1 reserves (src/mod100/**), and say so. */
async function checkRefusals(repo: Repo, ways: readonly Way[]): Promise<void> {
  await repo.write("src/mod100/held.ts", "export {};\n");
  await repo.git("add", "-A");
  try {
    for (const way of ways.slice(1)) {
      const out = await commit(repo, way, "reserved");
      if (out.code !== 1 || !out.stderr.includes('agent "holder1" reserves src/mod100/**')) {
        throw new Error(`${way.label} did not refuse a reserved path: ${out.code} ${out.stderr}`);
      }
    }
  } finally {
    await repo.git("reset", "-q");
    await Deno.remove(`${repo.dir}/src/mod100`, { recursive: true });
  }
}

/** Runs `steps` in turns (which goes first rotating), `n` rounds after 3 to warm up; each step times itself. */
async function takingTurns(steps: readonly (() => Promise<number>)[], n: number): Promise<Stats[]> {
  const samples: number[][] = steps.map(() => []);
  for (let round = 0; round < n + 3; round++) {
    for (let k = 0; k < steps.length; k++) {
      const w = (round + k) % steps.length;
      const took = await steps[w]!();
      if (round >= 3) samples[w]!.push(took);
    }
  }
  return samples.map(stats);
}

/** A commit of one changed README through `way`, timed (the change and `git add` are not). */
function commitStep(repo: Repo, way: Way, change: () => number): () => Promise<number> {
  return async () => {
    const i = change();
    await repo.write("README.md", `change ${i}\n`);
    await repo.git("add", "README.md");
    let out: { code: number; stderr: string } | undefined;
    const took = await timed(async () => (out = await commit(repo, way, `change ${i}`)));
    if (out?.code !== 0) throw new Error(`${way.label}: commit failed: ${out?.stderr}`);
    return took;
  };
}

/** Runs `deno …args` in `dir` to its end; how long it took. */
function denoRun(args: string[], dir: string): () => Promise<number> {
  return () => timed(() => run(Deno.execPath(), args, dir));
}

/** `fn` timed `n` times in process (ms). */
async function inProcess(n: number, fn: () => Promise<unknown> | unknown): Promise<Stats> {
  for (let i = 0; i < 3; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await timed(async () => await fn()));
  return stats(samples);
}

/** Runs the benchmark; the Markdown is the whole section. */
export async function guardBench(options: { quick: boolean; note: (line: string) => void }) {
  const before = await machine();
  await Deno.mkdir(`${BENCH_DIR}/tmp`, { recursive: true });
  const parent = await Deno.makeTempDir({ dir: `${BENCH_DIR}/tmp`, prefix: "guard-" });
  let http: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  try {
    const repo = await repository(parent);
    options.note(`guard: a repository of ${FILES} files ready in ${repo.dir}`);
    const file = `${parent}/tasks.json`;
    const kv = `${parent}/tasks.kv`;
    await plan({ FILE_PATH: file });
    await plan({ KV_PATH: kv });
    const served = `${parent}/served.json`;
    await Deno.copyFile(file, served);
    const port = freePort();
    http = await startHttpServer(await serverHttp(port, { FILE_PATH: served, LOG_LEVEL: "warn" }), port);
    options.note("guard: stores and the HTTP server ready");
    const ways: Way[] = [
      { label: "no hook", hooks: `${parent}/hooks-none` },
      { label: "hook, FILE_PATH", hooks: `${parent}/hooks-file` },
      { label: "hook, KV_PATH", hooks: `${parent}/hooks-kv` },
      { label: "hook, `--url` (a running HTTP server)", hooks: `${parent}/hooks-url` },
      {
        label:
          "hook, FILE_PATH, the guard through main.ts (as the task ran it before; `deno run`, no `deno task`)",
        hooks: `${parent}/hooks-main`,
      },
    ];
    await Deno.mkdir(ways[0]!.hooks);
    await install(repo, ways[1]!.hooks, ["--file", file]);
    await install(repo, ways[2]!.hooks, ["--kv", kv]);
    await install(repo, ways[3]!.hooks, ["--url", `${http.url}/mcp`]);
    await installThroughMain(ways[4]!.hooks, ["--session", SESSION, "--file", file]);
    await checkRefusals(repo, ways);
    const n = options.quick ? 5 : 30;
    options.note(`guard: ${n} rounds of commits and start-ups, taking turns`);
    const perms = await taskPermissions("guard");
    const task = ["task", "-q", "--config", CONFIG, "guard"];
    let changes = 0;
    const change = () => changes++;
    const direct = async () => {
      await repo.write("README.md", `change ${change()}\n`);
      await repo.git("add", "README.md");
      return await denoRun([...task, "--session", SESSION, "--file", file], repo.dir)();
    };
    await repo.write("README.md", "checked once\n");
    await repo.git("add", "README.md");
    const once = await run(Deno.execPath(), [...task, "--session", SESSION, "--file", file], repo.dir);
    if (once.code !== 0 || once.stderr !== "") throw new Error(`the direct check failed: ${once.stderr}`);
    const all = await takingTurns([
      ...ways.map((way) => commitStep(repo, way, change)),
      direct,
      denoRun([...task, "--help"], repo.dir),
      denoRun(["run", ...perms, "--config", CONFIG, MAIN, "guard", "--help"], repo.dir),
      denoRun(["run", ...perms, "--config", CONFIG, GUARD_ENTRY, "--help"], repo.dir),
      denoRun(["eval", "0"], repo.dir),
    ], n);
    const measured = all.slice(0, ways.length);
    const [directRun, started, ran, alone, hello] = all.slice(ways.length) as [
      Stats,
      Stats,
      Stats,
      Stats,
      Stats,
    ];
    const read = { namespace: "default", session: SESSION, timeoutMs: LIMITS.guardMs };
    const fileRead = await inProcess(n, () => readFileTree(file, read));
    const kvRead = await inProcess(n, () => readKvTree(kv, read));
    const tree = (await readFileTree(file, read))!;
    const decide = await inProcess(
      200,
      () => stagedConflicts(tree, ["README.md"], { now: Date.now(), self: {} }),
    );
    const fileBytes = (await Deno.stat(file)).size;
    const m = await machine();
    const base = measured[0]!;
    const loaded = [before, m].some((x) => Number(x.loadavg.split(" ")[0]) > Number(x.cpus) * 0.5);
    const rows = ways.map((way, k) => {
      const s = measured[k]!;
      return [
        `\`git commit\`, ${way.label}`,
        ms(s.p50),
        ms(s.p99),
        k === 0 ? "—" : `+${ms(s.p50 - base.p50)} ms`,
      ];
    });
    const markdown = [
      GUARD_HEADING,
      "",
      `\`deno task bench:guard${options.quick ? " --quick" : ""}\` (\`bench/guard_bench.ts\`). Date: ${
        new Date().toISOString().replace(/\.\d+Z$/, "Z")
      }. Machine: ${m.cpus} × ${m.cpu}, ${m.ram}, Deno ${m.deno}; load average (1, 5, 15 min) ${before.loadavg} ` +
      `at start, ${m.loadavg} at end.`,
      ...(loaded
        ? [
          "",
          "**Taken on a loaded machine** (the load average exceeded half the CPUs): the figures are " +
          "indicative; the ways take turns, so they share the load.",
        ]
        : []),
      ...(options.quick ? ["", "**Quick run**: fewer samples; not the figures to publish."] : []),
      "",
      `A repository of ${
        FILES.toLocaleString("en-US")
      } committed files; each sample is one real \`git commit\` ` +
      "of one changed file, the five ways taking turns (which goes first rotating), each with its own " +
      "`core.hooksPath`, the hooks written by `deno task --config deno.json guard --install` (so each runs " +
      "`deno task -q --config …/deno.json guard`, which starts lib/guard/guard_main.ts), and the fifth a hook " +
      "that starts the guard through main.ts by `deno run`, as the task did before. " +
      `Each store holds a session of ${TASKS.toLocaleString("en-US")} ` +
      `tasks in which ${HOLDERS} agents hold leaves reserving 8 patterns each (a ${
        Math.round(fileBytes / 1024)
      } KiB file), made by a real stdio server; the HTTP server reads a copy of the file. The committed file ` +
      `is free, so each guarded commit goes through after a full check (each hook refused a reserved path ` +
      `first). Every row but the in-process ones takes its turn in the same rounds (which goes first ` +
      `rotating): ${n} samples each, after 3 rounds to warm up.`,
      "",
      table(["what", "p50 ms", "p99 ms", "p50 − no hook"], [
        ...rows,
        [
          "where it goes: the same check run directly (`deno task guard --file …`, README staged)",
          ms(directRun.p50),
          ms(directRun.p99),
          "—",
        ],
        [
          "the guard started with nothing to check (`deno task guard --help`)",
          ms(started.p50),
          ms(started.p99),
          "—",
        ],
        [
          "the same without `deno task` (`deno run … lib/guard/guard_main.ts --help`, what the task runs)",
          ms(alone.p50),
          ms(alone.p99),
          "—",
        ],
        [
          "through main.ts, as the compiled binary and the task before (`deno run … main.ts guard --help`)",
          ms(ran.p50),
          ms(ran.p99),
          "—",
        ],
        ["Deno alone (`deno eval 0`)", ms(hello.p50), ms(hello.p99), "—"],
        ["in process: the session read from FILE_PATH", ms(fileRead.p50), ms(fileRead.p99), "—"],
        ["in process: the session read from KV_PATH", ms(kvRead.p50), ms(kvRead.p99), "—"],
        [
          "in process: the decision for one staged path against 96 reserved patterns",
          `${(decide.p50 * 1000).toFixed(0)} µs`,
          `${(decide.p99 * 1000).toFixed(0)} µs`,
          "—",
        ],
      ]),
    ].join("\n");
    return { markdown, targets: [] };
  } finally {
    await http?.stop();
    await Deno.remove(parent, { recursive: true });
  }
}

if (import.meta.main) {
  const result = await guardBench({
    quick: Deno.args.includes("--quick"),
    note: (line) => console.error(`[bench] ${line}`),
  });
  console.log(result.markdown);
  if (Deno.args.includes("--write")) {
    await updateBenchmarks((doc) => placeSection(doc, GUARD_HEADING, result.markdown));
  }
}
