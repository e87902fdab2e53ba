/**
 * What access checks cost per request (`deno task bench:access`; README "Hosting for a team").
 * Four apps over the same kind of store, each with one open MCP connection, take turns in rounds so
 * all meet the same machine load: no access control, `AUTH_TOKEN`, a tokens file (20 hashed
 * entries, the token the last one), and OAuth (a JWT from a real authorization server,
 * oauth2-mock-server, RS256, its key set fetched once and cached). Each request is a `tools/call`
 * of `listTasks` on a 20-task session through `app.request()` (the whole Hono app, no socket:
 * a socket's cost would only hide the difference). Besides, `authenticate()` alone is timed per call.
 *
 *   deno run -A bench/access_bench.ts [--write] [--quick]
 */
import { Authenticator } from "../lib/access/authenticator.ts";
import { createApp } from "../lib/http/app.ts";
import { createLogger } from "../lib/log.ts";
import { createServer } from "../lib/mcp/server.ts";
import { MemoryStore } from "../lib/store/memory_store.ts";
import { sha256Hex } from "../tests/access/access_support.ts";
import { startIssuer } from "../tests/support/oauth.ts";
import { placeSection, updateBenchmarks } from "./figures.ts";
import { machine } from "./machine.ts";
import { table } from "./report.ts";
import { median } from "./stats.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 5 : 20;
const PER_ROUND = quick ? 200 : 500;
const ENDPOINT = "http://127.0.0.1:8585/mcp";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const log = createLogger({ level: "error", write: () => {} });

type Kind = "none" | "AUTH_TOKEN" | "tokens file" | "JWT (OAuth)" | "none again (control)";

interface Subject {
  kind: Kind;
  app: { request: (url: string, init: RequestInit) => Response | Promise<Response> };
  headers: Record<string, string>;
  auth?: Authenticator;
  close: () => Promise<void>;
}

async function subject(
  kind: Kind,
  auth: Authenticator | undefined,
  token: string | undefined,
): Promise<Subject> {
  const store = new MemoryStore();
  const { app, close } = createApp({
    store,
    log,
    access: auth,
    makeServer: (scope) => createServer({ store, log, ...scope }),
  });
  const headers: Record<string, string> = {
    ...HEADERS,
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const init = await app.request(ENDPOINT, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "0" },
      },
    }),
  });
  if (init.status !== 200) throw new Error(`${kind}: initialize answered ${init.status}`);
  await init.body?.cancel();
  headers["mcp-session-id"] = init.headers.get("mcp-session-id")!;
  const s: Subject = { kind, app, headers, auth, close };
  await rpc(s, "notifications/initialized", undefined);
  await rpc(s, "tools/call", {
    name: "createTask",
    arguments: {
      sessionId: "bench",
      name: "bench",
      tasks: Array.from({ length: 19 }, (_, i) => ({ name: `step ${i}` })),
    },
  }, 1);
  return s;
}

async function rpc(s: Subject, method: string, params: unknown, id?: number): Promise<void> {
  const response = await s.app.request(ENDPOINT, {
    method: "POST",
    headers: s.headers,
    body: JSON.stringify(
      id === undefined ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", id, method, params },
    ),
  });
  const text = await response.text();
  if (response.status >= 300 || text.includes('"isError":true')) {
    throw new Error(`${s.kind}: ${method} answered ${response.status} ${text.slice(0, 200)}`);
  }
}

/**
 * Requests per second of each subject over `count` listTasks calls each, interleaved request by
 * request (the order turning each time), so every configuration meets the same machine load.
 */
async function round(subjects: readonly Subject[], count: number): Promise<number[]> {
  const spent = subjects.map(() => 0);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < subjects.length; j++) {
      const k = (i + j) % subjects.length;
      const started = performance.now();
      await rpc(subjects[k]!, "tools/call", { name: "listTasks", arguments: { sessionId: "bench" } }, i + 2);
      spent[k]! += performance.now() - started;
    }
  }
  return spent.map((ms) => count / (ms / 1000));
}

/** Microseconds per `authenticate()` call. */
async function authCost(s: Subject, count: number): Promise<number> {
  if (!s.auth) return 0;
  const request = new Request(ENDPOINT, { headers: s.headers });
  for (let i = 0; i < 50; i++) await s.auth.authenticate(request);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const outcome = await s.auth.authenticate(request);
    if (!outcome.ok) throw new Error(`${s.kind}: ${outcome.message}`);
  }
  return ((performance.now() - started) * 1000) / count;
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-access-bench-" });
  await using issuer = await startIssuer();
  try {
    const staticToken = "bench-static-token-0123456789abcdef";
    const fileToken = "bench-file-token-19-0123456789abcdef";
    const entries = await Promise.all(Array.from({ length: 20 }, async (_, i) => ({
      name: `token-${i}`,
      token: `sha256:${await sha256Hex(i === 19 ? fileToken : `other-token-${i}-0123456789`)}`,
      namespaces: ["default"],
      access: "write",
    })));
    await Deno.writeTextFile(`${dir}/tokens.json`, JSON.stringify(entries));
    const jwt = await issuer.server.issuer.buildToken({
      scopesOrTransform: (_h, p) =>
        Object.assign(p, { sub: "default", scope: "checklist:write", aud: ENDPOINT }),
    });
    const subjects = [
      await subject("none", undefined, undefined),
      await subject(
        "AUTH_TOKEN",
        await Authenticator.fromSettings({ authToken: staticToken }, log),
        staticToken,
      ),
      await subject(
        "tokens file",
        await Authenticator.fromSettings({ authTokensFile: `${dir}/tokens.json` }, log),
        fileToken,
      ),
      await subject("JWT (OAuth)", await Authenticator.fromSettings({ oauthIssuer: issuer.url }, log), jwt),
      // A second app without access control, made last: how far apart two identical apps come out.
      await subject("none again (control)", undefined, undefined),
    ];
    await round(subjects, 500); // warm up
    const rates = new Map<Kind, number[]>(subjects.map((s) => [s.kind, []]));
    for (let r = 0; r < ROUNDS; r++) {
      const rps = await round(subjects, PER_ROUND);
      subjects.forEach((s, k) => rates.get(s.kind)!.push(rps[k]!));
    }
    const costs = new Map<Kind, number>();
    for (const s of subjects) costs.set(s.kind, await authCost(s, quick ? 1000 : 5000));
    for (const s of subjects) await s.close();

    const base = median(rates.get("none")!);
    // Paired: each round's rate against no auth's in the same round (the same machine load).
    const paired = (kind: Kind) => median(rates.get(kind)!.map((rps, r) => rps / rates.get("none")![r]!));
    const rows = subjects.map((s) => {
      const rps = median(rates.get(s.kind)!);
      const extra = (1 / (base * paired(s.kind)) - 1 / base) * 1e6;
      return [
        s.kind,
        Math.round(rps).toLocaleString("en-US"),
        `${(paired(s.kind) * 100).toFixed(1)} %`,
        s.kind === "none" ? "—" : `${extra.toFixed(1)} µs`,
        s.auth ? `${costs.get(s.kind)!.toFixed(1)} µs` : "—",
      ];
    });
    const m = await machine();
    const worst = Math.min(...subjects.filter((s) => s.auth).map((s) => paired(s.kind)));
    const control = paired("none again (control)");
    const section = [
      "## Access checks",
      "",
      "`deno task bench:access` (`bench/access_bench.ts`): one MCP connection per configuration, all in one " +
      "process, taking turns request by request (the order turning each time) in " +
      `${ROUNDS} rounds of ${PER_ROUND} sequential \`tools/call listTasks\` each ` +
      "(20-task session, memory store) through the whole Hono app (`app.request`, no socket). Median " +
      "requests/s over the rounds; \"of no auth\" is the median of each round's rate over no auth's rate " +
      "in the same round; the extra time per request derived " +
      "from it; and `authenticate()` alone, timed per call. The JWT is RS256 from oauth2-mock-server, its " +
      "key set fetched once and cached.",
      "",
      table(["access", "requests/s", "of no auth", "extra per request", "authenticate() alone"], rows),
      "",
      `Machine: ${m.cpus} × ${m.cpu}, ${m.ram}, Deno ${m.deno}, load ${m.loadavg}.`,
      "",
      `Target: within 5 % of the unauthenticated throughput. Slowest access check: ${
        (worst * 100).toFixed(1)
      } % ` +
      `of no auth (${worst >= 0.95 ? "met" : "not met"}); the control, an identical app without access ` +
      `control, came out at ${
        (control * 100).toFixed(1)
      } %, which is how much of the gap is this machine's ` +
      "noise and the order the apps were made in rather than the check. `authenticate()` alone is the direct " +
      "measure of what a check costs; against the time of one request it is " +
      `${
        (Math.max(...subjects.filter((s) => s.auth).map((s) => costs.get(s.kind)!)) * base / 1e4).toFixed(1)
      } % ` +
      "at most.",
    ].join("\n");
    console.log(section);
    if (Deno.args.includes("--write")) {
      await updateBenchmarks((doc) => placeSection(doc, "## Access checks", section));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

await main();
