/**
 * Tenants under load on 200 namespaces (issue 37): this checkout against another one (e.g. the
 * version before, unpacked with `git archive`), side by side, the servers taking turns round after
 * round (A, B, then B, A). Each server runs as the `start` task runs it, with a tokens file and a JSON file store: a
 * `"*"` read credential sends 2026-07-28 `tools/list` to 200 namespaces from `--clients` concurrent
 * clients while another credential calls `createTask` in a loop, for `--seconds`. Reported, per
 * server (medians over the rounds): requests per second of each, how many failed (any answer but a
 * success: the SDK's `499` with an empty body, which a handler closed under a request in flight
 * gives), whether the tasks saved equal the successes, and the server's resident memory (VmRSS)
 * once it answers (idle), at the end, and at its highest (sampled every 100 ms).
 *
 *   deno run -A bench/tenants_bench.ts --other=/path/to/other/checkout [--rounds=3] [--seconds=5]
 *     [--clients=16] [--namespaces=200]
 *
 * Both servers run with this checkout's `deno.json` (the other's main.ts is started by path), so
 * they resolve the same package versions.
 */
import { tokensFile } from "../tests/support/auth.ts";
import { postModern } from "../tests/support/http.ts";
import { freePort } from "../tests/support/processes.ts";
import { type ServerCommand, serverHttp, startHttpServer } from "./commands.ts";
import { rssKiB } from "./machine.ts";
import { table } from "./report.ts";
import { median } from "./stats.ts";

function option(name: string, fallback?: string): string | undefined {
  return Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

const other = option("other");
if (!other) throw new Error("usage: deno run -A bench/tenants_bench.ts --other=/path/to/other/checkout");
const rounds = Number(option("rounds", "3"));
const seconds = Number(option("seconds", "5"));
const clients = Number(option("clients", "16"));
const namespaces = Number(option("namespaces", "200"));
const note = (line: string) => console.error(`[tenants] ${line}`);

const SECRETS = { everywhere: "bench-everywhere-0123456789abcdef", writer: "bench-writer-0123456789abcdef" };
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** What one run of one server measured. */
interface Run {
  listPerSecond: number;
  listFailed: number;
  createPerSecond: number;
  createCalls: number;
  createFailed: number;
  /** Tasks saved less successes answered (0: every success saved once, nothing saved unanswered). */
  unanswered: number;
  rssIdleMiB: number;
  rssEndMiB: number;
  rssPeakMiB: number;
}

/** `cmd` with the other checkout's main.ts in place of this one's. */
function theirs(cmd: ServerCommand): ServerCommand {
  return { ...cmd, label: "before", args: cmd.args.map((a) => (a === "main.ts" ? `${other}/main.ts` : a)) };
}

async function measure(
  make: (port: number, env: Record<string, string>) => Promise<ServerCommand>,
): Promise<Run> {
  await using file = await tokensFile([
    { name: "everywhere", token: SECRETS.everywhere, namespaces: "*", access: "read" },
    { name: "writer", token: SECRETS.writer, namespaces: ["team"], access: "write" },
  ]);
  const port = freePort();
  const cmd = await make(port, {
    AUTH_TOKENS_FILE: file.path,
    FILE_PATH: `${file.path}.store.json`,
    LOG_LEVEL: "error",
  });
  await using server = await startHttpServer(cmd, port);
  const url = `${server.url}/mcp`;
  const pid = server.child.pid;
  const idle = await rssKiB(pid);
  let peak = idle;
  const sampler = setInterval(() => rssKiB(pid).then((kib) => (peak = Math.max(peak, kib)), () => {}), 100);
  const end = performance.now() + seconds * 1000;
  let listed = 0;
  let listFailed = 0;
  let created = 0;
  let createFailed = 0;
  const readers = Array.from({ length: clients }, async (_, client) => {
    for (let i = 0; performance.now() < end; i++) {
      const namespace = `tenant-${(client * 37 + i * clients) % namespaces}`;
      const reply = await postModern(`${url}/${namespace}`, "tools/list", {}, bearer(SECRETS.everywhere))
        .catch(() => ({ status: 0, messages: [] }));
      if (reply.status === 200 && reply.messages.at(-1)?.result) listed++;
      else listFailed++;
    }
  });
  const writer = (async () => {
    for (let i = 0; performance.now() < end; i++) {
      const reply = await postModern(url, "tools/call", {
        name: "createTask",
        arguments: { sessionId: "plan", name: `task ${i}` },
      }, bearer(SECRETS.writer)).catch(() => ({ status: 0, messages: [] }));
      const result = reply.messages.at(-1)?.result as { isError?: boolean } | undefined;
      if (reply.status === 200 && result && !result.isError) created++;
      else createFailed++;
    }
  })();
  const started = performance.now();
  await Promise.all([...readers, writer]);
  const elapsed = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const rssEnd = await rssKiB(pid);
  const saved = await postModern(url, "tools/call", {
    name: "listTasks",
    arguments: { sessionId: "plan" },
  }, bearer(SECRETS.writer));
  const tasks = (saved.messages.at(-1)?.result as { structuredContent?: { tasks?: unknown[] } } | undefined)
    ?.structuredContent?.tasks?.length ?? NaN;
  return {
    listPerSecond: listed / elapsed,
    listFailed,
    createPerSecond: created / elapsed,
    createCalls: created + createFailed,
    createFailed,
    unanswered: tasks - created,
    rssIdleMiB: idle / 1024,
    rssEndMiB: rssEnd / 1024,
    rssPeakMiB: Math.max(peak, rssEnd) / 1024,
  };
}

const contenders: {
  label: string;
  make: (port: number, env: Record<string, string>) => Promise<ServerCommand>;
}[] = [
  { label: `before (${other})`, make: async (port, env) => theirs(await serverHttp(port, env)) },
  { label: "after (this checkout)", make: (port, env) => serverHttp(port, env) },
];
const runs = contenders.map(() => [] as Run[]);
for (let round = 0; round < rounds; round++) {
  // Turns alternate (before, after, then after, before): neither always runs on a warmer machine.
  const order = round % 2 === 0 ? [0, 1] : [1, 0];
  for (const i of order) {
    const contender = contenders[i]!;
    const run = await measure(contender.make);
    runs[i]!.push(run);
    note(`round ${round + 1}/${rounds} ${contender.label}: ${JSON.stringify(run)}`);
  }
}
const med = (i: number, key: keyof Run) => median(runs[i]!.map((r) => r[key]));
const sum = (i: number, key: keyof Run) => runs[i]!.reduce((total, r) => total + r[key], 0);
console.log(table(
  [
    "server",
    "tools/list req/s",
    "tools/list failed",
    "createTask successes/s",
    "createTask failed",
    "saved − answered",
    "RSS idle (MiB)",
    "RSS at end (MiB)",
    "RSS peak (MiB)",
  ],
  contenders.map((c, i) => [
    c.label,
    med(i, "listPerSecond").toFixed(0),
    sum(i, "listFailed"),
    med(i, "createPerSecond").toFixed(1),
    `${sum(i, "createFailed")} of ${sum(i, "createCalls")}`,
    sum(i, "unanswered"),
    med(i, "rssIdleMiB").toFixed(1),
    med(i, "rssEndMiB").toFixed(1),
    med(i, "rssPeakMiB").toFixed(1),
  ]),
));
/** After ÷ before of `key`, the median of each round's ratio (robust to a round on a busier machine). */
const ratioOf = (key: keyof Run) =>
  median(runs[1]!.map((after, round) => after[key] / runs[0]![round]![key]));
console.log(
  `\nafter ÷ before, median of each round's ratio: tools/list req/s ${
    ratioOf("listPerSecond").toFixed(2)
  }×, ` +
    `createTask successes/s ${ratioOf("createPerSecond").toFixed(2)}×, RSS at end ${
      ratioOf("rssEndMiB").toFixed(2)
    }×`,
);
console.log(
  `\n${rounds} rounds of ${seconds} s, ${clients} tools/list clients over ${namespaces} namespaces and one createTask client; ` +
    "rates and memory are medians, failures and saved − answered are totals over the rounds.",
);
