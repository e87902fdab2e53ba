/**
 * Where the CPU of one HTTP request goes, by who asked for the work (issue 35): this server's app and
 * the floors' apps, each called in-process (no socket, no listener: what `deno run` and `deno serve`
 * add is part 3's) in a child process under V8's sampling profiler.
 *
 *   deno run -A bench/request_profile.ts [--era=handshake|2026-07-28] [--requests=N] [--rounds=R]
 *
 * checklist-mcp is main.ts's default export (the app `deno serve` and Deploy run, memory store,
 * told by `onListen` that it listens on 127.0.0.1)
 * answering getTask on a 100-task session, as in part 3; a floor answers its no-op tool. Handshake:
 * one MCP session, against SDK v1's floor (floor_v1_server.ts) and the same floor on SDK v2
 * (floor_sessions.ts). 2026-07-28: each request alone with its envelope and headers, against SDK v2's
 * `createMcpHandler` (floor_server.ts).
 *
 * A sample is charged to the first frame, from the sampled function up its stack, that has an owner:
 * one of our rooms (`lib/http`, `lib/mcp`, `lib/domain`, …), the MCP SDK, Hono, the floor's own code
 * or the client loop of this file. Zod and Deno's runtime (Request, Headers, streams, timers, URL)
 * have none: they are charged to whoever called them, so the SDK's row holds the zod it runs and
 * `lib/http` the headers it reads. Garbage collection and V8's own work are rows of their own. Only the
 * timed requests count (not start-up, filling or warm-up): the child spins in a marker function just
 * before and just after them, and only the samples between the two markers are charged. Each contender
 * runs R times (3 by default), the contenders taking turns, and each figure is the median of its runs:
 * on a shared machine one run can be slowed throughout.
 */
import { fileURLToPath } from "node:url";
import { ROOT } from "../tests/support/paths.ts";
import { serverEnv } from "../tests/support/env.ts";
import { modernEnvelope, modernHeaders } from "../tests/support/modern.ts";
import { table } from "./report.ts";
import { median } from "./stats.ts";

type Era = "handshake" | "2026-07-28";
type Contender = "checklist-mcp" | "v2 floor" | "v1 floor";

const ENDPOINT = "http://127.0.0.1:8585/mcp";
const SESSION = "bench";
const WARM_UP = 2000;

/** One line of a V8 `.cpuprofile`'s call tree. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Who a frame's script belongs to; undefined for zod, Deno's runtime and builtins (charged to their caller). */
export function ownerOf(url: string): string | undefined {
  if (url === "" || url.startsWith("ext:") || url.startsWith("node:")) return undefined;
  const npm = url.indexOf("/registry.npmjs.org/");
  if (npm >= 0) {
    const parts = url.slice(npm + "/registry.npmjs.org/".length).split("/");
    const name = parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
    if (name === "zod") return undefined;
    if (name.startsWith("@modelcontextprotocol/")) return "MCP SDK (and the zod it runs)";
    return name;
  }
  if (!url.startsWith("file://")) return undefined;
  const path = fileURLToPath(url);
  if (!path.startsWith(`${ROOT}/`)) return "other";
  const local = path.slice(ROOT.length + 1);
  if (local === "bench/request_profile.ts" || local.startsWith("tests/")) {
    return "the client loop (this bench)";
  }
  if (local.startsWith("bench/")) return "the floor's own code";
  const room = local.match(/^lib\/[^/]+/)?.[0];
  return room ? `checklist-mcp ${room}` : `checklist-mcp ${local}`;
}

/** The functions the child spins in just before and just after its timed requests. */
const MARKERS = { before: "markTimedRequestsBegin", after: "markTimedRequestsEnd" } as const;

/** Spins for `ms` in a function of its own, so that its samples mark a moment in the profile. */
function markTimedRequestsBegin(ms = 30): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* a marker in the profile */ }
}

/** See {@link markTimedRequestsBegin}. */
function markTimedRequestsEnd(ms = 30): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* a marker in the profile */ }
}

/**
 * Milliseconds of CPU per owner in one profile, between the last sample in the "before" marker and the
 * first in the "after" marker (idle time left out).
 */
export function chargeByOwner(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const within = (id: number, name: string): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      if (byId.get(at)!.callFrame.functionName === name) return true;
    }
    return false;
  };
  const first = profile.samples.findLastIndex((id) => within(id, MARKERS.before)) + 1;
  const last = profile.samples.findIndex((id, i) => i >= first && within(id, MARKERS.after));
  if (first === 0 || last < 0) throw new Error("the profile lacks the markers around the timed requests");
  const owner = new Map<number, string>();
  const ownerOfNode = (id: number): string => {
    const known = owner.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const name = node.callFrame.functionName;
    let found: string;
    if (name === "(garbage collector)") found = "garbage collection";
    else if (name === "(program)") found = "V8 (program)";
    else if (name === "(idle)") found = "(idle)";
    else {
      // A frame without an owner is charged to its caller's; with none up to the root, the event loop's.
      const up = parent.get(id);
      found = ownerOf(node.callFrame.url) ??
        (up === undefined ? "the runtime's event loop" : ownerOfNode(up));
    }
    owner.set(id, found);
    return found;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    if (i < first || i >= last) return;
    const who = ownerOfNode(id);
    if (who === "(idle)") return;
    // A sample's time is the delta to the next sample.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    totals.set(who, (totals.get(who) ?? 0) + ms);
  });
  return totals;
}

/** The app a contender serves, called in-process. */
async function appOf(who: Contender, era: Era): Promise<(request: Request) => Response | Promise<Response>> {
  if (who === "checklist-mcp") {
    const main = await import("../main.ts");
    // As `deno serve --host 127.0.0.1` does: onListen builds the app for the address, then requests come.
    main.default.onListen({ transport: "tcp", hostname: "127.0.0.1", port: 8585 });
    return (request) => main.default.fetch(request);
  }
  if (who === "v1 floor") return await (await import("./floor_v1_server.ts")).floorV1App(false);
  if (era === "handshake") return (await import("./floor_sessions.ts")).floorSessionsApp();
  const [{ createMcpHandler }, { createFloorServer, floorRoutes }] = await Promise.all([
    import("@modelcontextprotocol/server"),
    import("./floor_server.ts"),
  ]);
  return floorRoutes(createMcpHandler(() => createFloorServer()));
}

/** A client of one app: JSON-RPC requests as POSTs, in the era's form, each reply read to its end. */
async function clientOf(app: (request: Request) => Response | Promise<Response>, era: Era) {
  let id = 0;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const post = async (method: string, params?: Record<string, unknown>, notify = false) => {
    const body = JSON.stringify(
      era === "2026-07-28"
        ? { jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: modernEnvelope("bench") } }
        : notify
        ? { jsonrpc: "2.0", method, params }
        : { jsonrpc: "2.0", id: ++id, method, params },
    );
    const extra = era === "2026-07-28" ? modernHeaders(method, params) : {};
    const response = await app(
      new Request(ENDPOINT, {
        method: "POST",
        headers: { ...headers, ...extra, "content-length": String(new TextEncoder().encode(body).length) },
        body,
      }),
    );
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method}: ${response.status} ${text.slice(0, 200)}`);
    return { response, text };
  };
  if (era === "handshake") {
    const { response } = await post("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "bench", version: "0.0.0" },
    });
    const session = response.headers.get("mcp-session-id");
    if (!session) throw new Error("initialize gave no session id");
    headers["mcp-session-id"] = session;
    headers["mcp-protocol-version"] = "2025-11-25";
    await post("notifications/initialized", undefined, true);
  }
  return (name: string, args: Record<string, unknown>) => post("tools/call", { name, arguments: args });
}

/** The child: builds one app, warms it up, answers `requests` calls, prints the wall time per call. */
async function child(who: Contender, era: Era, requests: number): Promise<void> {
  const call = await clientOf(await appOf(who, era), era);
  let next: (i: number) => Promise<unknown>;
  if (who === "checklist-mcp") {
    const tasks = Array.from({ length: 9 }, (_, m) => ({
      id: `m${m}`,
      name: `Step ${m}`,
      tasks: Array.from({ length: 10 }, (_, l) => ({ id: `m${m}.l${l}`, name: `Leaf ${m}.${l}` })),
    }));
    await call("createTask", { sessionId: SESSION, name: "Goal", tasks });
    const leaves = tasks.flatMap((t) => t.tasks.map((leaf) => leaf.id));
    next = (i) => call("getTask", { sessionId: SESSION, id: leaves[i % leaves.length] });
  } else {
    next = () => call("noop", { id: "x" });
  }
  for (let i = 0; i < WARM_UP; i++) await next(i);
  markTimedRequestsBegin();
  const started = performance.now();
  for (let i = 0; i < requests; i++) await next(i);
  const ended = performance.now();
  markTimedRequestsEnd();
  console.log(JSON.stringify({ wallUs: (ended - started) * 1000 / requests }));
  Deno.exit(0);
}

/** Runs one child under the profiler; its profile's charges and its wall time per request. */
async function profiled(
  who: Contender,
  era: Era,
  requests: number,
): Promise<{ charges: Map<string, number>; wallUs: number }> {
  const dir = await Deno.makeTempDir({ prefix: "request-profile-" });
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--cpu-prof",
        `--cpu-prof-dir=${dir}`,
        "--cpu-prof-interval=100",
        fileURLToPath(import.meta.url),
        `--child=${who}`,
        `--era=${era}`,
        `--requests=${requests}`,
      ],
      cwd: ROOT,
      clearEnv: true,
      env: serverEnv({ LOG_LEVEL: "warn" }),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    if (!output.success) {
      throw new Error(`${who}: the child failed: ${new TextDecoder().decode(output.stderr).slice(-2000)}`);
    }
    const file = [...Deno.readDirSync(dir)].find((entry) => entry.name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`${who}: no profile was written`);
    const profile = JSON.parse(await Deno.readTextFile(`${dir}/${file.name}`)) as CpuProfile;
    return { charges: chargeByOwner(profile), wallUs: JSON.parse(stdout.trim().split("\n").at(-1)!).wallUs };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What {@link measure} gives for one contender. */
interface Measured {
  perRequest: Map<string, number>;
  wallUs: number;
}

/** A contender's µs of CPU per request by owner in one run, and its wall µs per request (profiler on). */
async function measure(who: Contender, era: Era, requests: number): Promise<Measured> {
  const { charges, wallUs } = await profiled(who, era, requests);
  const perRequest = new Map([...charges].map(([owner, ms]) => [owner, ms * 1000 / requests]));
  return { perRequest, wallUs };
}

/** Per owner, the median of the runs (an owner a run did not charge counts 0 there); the median wall time. */
function medianOfRuns(runs: readonly Measured[]): Measured {
  const owners = new Set(runs.flatMap((run) => [...run.perRequest.keys()]));
  const perRequest = new Map(
    [...owners].map((owner) => [owner, median(runs.map((run) => run.perRequest.get(owner) ?? 0))]),
  );
  return { perRequest, wallUs: median(runs.map((run) => run.wallUs)) };
}

function flag(name: string): string | undefined {
  return Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

if (import.meta.main) {
  const era = (flag("era") ?? "handshake") as Era;
  if (era !== "handshake" && era !== "2026-07-28") throw new Error("--era is handshake or 2026-07-28");
  const requests = Number(flag("requests") ?? "10000");
  const rounds = Number(flag("rounds") ?? "3");
  const asChild = flag("child") as Contender | undefined;
  if (asChild) await child(asChild, era, requests);
  const contenders: Contender[] = era === "handshake"
    ? ["checklist-mcp", "v2 floor", "v1 floor"]
    : ["checklist-mcp", "v2 floor"];
  const runs: Measured[][] = contenders.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + round) % contenders.length;
      console.error(
        `[request-profile] round ${round + 1}/${rounds}: ${contenders[i]}, ${era}, ${requests} requests`,
      );
      runs[i]!.push(await measure(contenders[i]!, era, requests));
    }
  }
  const results = runs.map(medianOfRuns);
  const owners = [...new Set(results.flatMap((r) => [...r.perRequest.keys()]))]
    .sort((a, b) => (results[0]!.perRequest.get(b) ?? 0) - (results[0]!.perRequest.get(a) ?? 0));
  const cell = (us: number | undefined) => us === undefined ? "—" : us.toFixed(1);
  const rows = owners.map((owner) => [owner, ...results.map((r) => cell(r.perRequest.get(owner)))]);
  const total = (r: Measured) => [...r.perRequest.values()].reduce((sum, us) => sum + us, 0);
  rows.push(["**CPU in all**", ...results.map((r) => `**${total(r).toFixed(1)}**`)]);
  rows.push(["wall time per request (profiler on)", ...results.map((r) => r.wallUs.toFixed(1))]);
  rows.push([
    "checklist-mcp req/s ÷ this one's (in-process)",
    ...results.map((r) => `${(r.wallUs / results[0]!.wallUs).toFixed(2)}×`),
  ]);
  console.log(
    `${era}: µs of CPU per request by who asked for the work, medians of ${rounds} runs of ${requests} requests ` +
      `(\`deno run -A bench/request_profile.ts --era=${era} --requests=${requests} --rounds=${rounds}\`)\n`,
  );
  console.log(table(["charged to", ...contenders.map((c) => `${c} µs/req`)], rows));
}
