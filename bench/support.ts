/**
 * What every benchmark part shares: the commands that start each server, a raw JSON-RPC client
 * over stdio and over Streamable HTTP (no SDK client, so the client side costs the same for every
 * server), statistics, the task-tree shapes used to fill a session, and Markdown helpers.
 *
 * Only 127.0.0.1 is contacted; every loop is bounded by a count or a deadline.
 */
import { fileURLToPath } from "node:url";

/** The project root. */
export const ROOT: string = fileURLToPath(new URL("../", import.meta.url)).replace(/\/$/, "");
/** The floor server (same SDK, one no-op tool). */
export const FLOOR: string = `${ROOT}/bench/floor_server.ts`;
/** Where the npm comparison server is installed (gitignored). */
export const BENCH_DIR: string = `${ROOT}/.bench`;

/** Protocol version the raw clients announce. */
export const PROTOCOL_VERSION = "2025-06-18";

/** A benchmark target: met, missed, or not measurable on this run. */
export interface Target {
  name: string;
  met: boolean | undefined;
  detail: string;
}

/** What each part returns to `run.ts`. */
export interface PartResult {
  /** Markdown, starting with its `##` heading. */
  markdown: string;
  targets: Target[];
  /** Figures other parts may reuse (e.g. RSS with 100k tasks). */
  figures?: Record<string, number>;
}

/** Options every part takes. */
export interface PartOptions {
  /** Fewer samples and smaller sizes, for trying the harness. */
  quick: boolean;
  /** Progress lines go here (stderr). */
  note: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

/** Summary of a sample of durations in milliseconds. */
export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** p50, p99, mean, min, max of `samples`. */
export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : NaN,
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** Milliseconds with a sensible number of digits. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return "—";
  if (value < 1) return value.toFixed(3);
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

/** A ratio as `1.23×`. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "—";
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** "met" / "missed" / "not measured". */
export function verdict(met: boolean | undefined): string {
  return met === undefined ? "not measured" : met ? "met" : "**missed**";
}

/** Waits `ms` milliseconds. */
export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

// ---------------------------------------------------------------------------------------------
// Machine

/** The machine the figures were taken on. */
export interface Machine {
  cpus: string;
  cpu: string;
  ram: string;
  os: string;
  deno: string;
  node: string;
  loadavg: string;
}

/** Describes this machine (Linux `/proc`). */
export async function machine(): Promise<Machine> {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  const meminfo = await Deno.readTextFile("/proc/meminfo").catch(() => "");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? "unknown";
  const memKb = Number(/^MemTotal:\s*(\d+)/m.exec(meminfo)?.[1] ?? NaN);
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  const node = await output("node", ["--version"]);
  return {
    cpus: String(navigator.hardwareConcurrency),
    cpu: model,
    ram: `${(memKb / 1024 / 1024).toFixed(1)} GiB`,
    os: `${Deno.build.os} ${Deno.build.arch}, kernel ${Deno.osRelease()}`,
    deno: Deno.version.deno,
    node: node.trim() || "not found",
    loadavg: load.split(" ").slice(0, 3).join(" "),
  };
}

async function output(command: string, args: string[]): Promise<string> {
  try {
    const result = await new Deno.Command(command, { args, stdout: "piped", stderr: "null" }).output();
    return new TextDecoder().decode(result.stdout);
  } catch {
    return "";
  }
}

/** Resident memory of a process in KiB (`VmRSS` in `/proc/PID/status`). */
export async function rssKiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/^VmRSS:\s*(\d+)/m.exec(status)?.[1] ?? NaN);
}

// ---------------------------------------------------------------------------------------------
// Commands

/** How to start one server. */
export interface ServerCommand {
  label: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A `deno.json` task `deno run FLAGS ENTRY ARGS` split into its parts. */
async function taskParts(task: string): Promise<{ flags: string[]; entry: string; args: string[] }> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`)) as {
    tasks: Record<string, string>;
  };
  const words = (config.tasks[task] ?? "").split(/\s+/).filter(Boolean);
  const entry = words.findIndex((w, i) => i >= 2 && !w.startsWith("-"));
  if (words[0] !== "deno" || words[1] !== "run" || entry < 0) {
    throw new Error(`task ${task} is not "deno run … FILE"`);
  }
  return { flags: words.slice(2, entry), entry: words[entry]!, args: words.slice(entry + 1) };
}

/** This process's environment without the server settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (
    const name of [
      "FILE_PATH",
      "KV_PATH",
      "PORT",
      "HOST",
      "CHECKLIST_TOOLS",
      "AUTH_TOKEN",
      "STATELESS",
      "LOG_LEVEL",
      "WORK_CACHE_SIZE",
    ]
  ) delete env[name];
  return { ...env, NO_COLOR: "1", ...extra };
}

/** `run` and the words of a task after `deno run`. */
async function taskArgs(task: string): Promise<string[]> {
  const { flags, entry, args } = await taskParts(task);
  return ["run", ...flags, entry, ...args];
}

/** This server over stdio, exactly as the `stdio` task starts it. */
export async function serverStdio(env: Record<string, string> = {}): Promise<ServerCommand> {
  return {
    label: "checklist-mcp",
    command: Deno.execPath(),
    args: await taskArgs("stdio"),
    cwd: ROOT,
    env: cleanEnv(env),
  };
}

/** The floor over stdio, with the permissions of the `stdio` task. */
export async function floorStdio(): Promise<ServerCommand> {
  return {
    label: "floor",
    command: Deno.execPath(),
    args: ["run", ...(await taskParts("stdio")).flags, FLOOR, "--stdio"],
    cwd: ROOT,
    env: cleanEnv(),
  };
}

/** This server over HTTP on `port`, exactly as the `start` task starts it. */
export async function serverHttp(port: number, env: Record<string, string> = {}): Promise<ServerCommand> {
  return {
    label: "checklist-mcp",
    command: Deno.execPath(),
    args: await taskArgs("start"),
    cwd: ROOT,
    env: cleanEnv({ PORT: String(port), HOST: "127.0.0.1", ...env }),
  };
}

/** The floor over HTTP on `port`, with the permissions of the `start` task. */
export async function floorHttp(port: number, env: Record<string, string> = {}): Promise<ServerCommand> {
  return {
    label: "floor",
    command: Deno.execPath(),
    args: ["run", ...(await taskParts("start")).flags, FLOOR],
    cwd: ROOT,
    env: cleanEnv({ PORT: String(port), ...env }),
  };
}

const ORCHESTRATOR = "task-orchestrator-mcp";
const ORCHESTRATOR_VERSION = "1.1.0";

/**
 * `task-orchestrator-mcp` 1.1.0 (a Node server) over stdio; installed into `.bench/` with npm on
 * first use. Runs in a scratch directory so it writes nothing into the project.
 */
export async function orchestratorStdio(note: (line: string) => void): Promise<ServerCommand> {
  const pkgDir = `${BENCH_DIR}/node_modules/${ORCHESTRATOR}`;
  const pkgJson = `${pkgDir}/package.json`;
  const installed = await Deno.readTextFile(pkgJson).then((t) => JSON.parse(t).version).catch(() =>
    undefined
  );
  if (installed !== ORCHESTRATOR_VERSION) {
    note(`installing ${ORCHESTRATOR}@${ORCHESTRATOR_VERSION} into .bench/ with npm`);
    await Deno.mkdir(BENCH_DIR, { recursive: true });
    const result = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        BENCH_DIR,
        "--no-audit",
        "--no-fund",
        `${ORCHESTRATOR}@${ORCHESTRATOR_VERSION}`,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!result.success) throw new Error(`npm install failed: ${new TextDecoder().decode(result.stderr)}`);
  }
  const pkg = JSON.parse(await Deno.readTextFile(pkgJson)) as { bin: string | Record<string, string> };
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin[ORCHESTRATOR] ?? Object.values(pkg.bin)[0]!;
  const scratch = await Deno.makeTempDir({ prefix: "bench-orchestrator-" });
  return {
    label: `${ORCHESTRATOR} ${ORCHESTRATOR_VERSION}`,
    command: "node",
    args: [`${pkgDir}/${bin}`],
    cwd: scratch,
    env: cleanEnv(),
  };
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC clients

/** A JSON-RPC error from the server. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(`JSON-RPC error ${code}: ${message}`);
  }
}

/** The part of a tool call's result the benchmarks look at. */
export interface ToolResult {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A connected raw client. */
export interface Rpc extends AsyncDisposable {
  /** Process id of the server (stdio, or the HTTP server process when known). */
  readonly pid: number | undefined;
  request(method: string, params?: unknown): Promise<unknown>;
  notify(method: string, params?: unknown): Promise<void>;
  close(): Promise<void>;
}

/** The `initialize` request body's params. */
export function initializeParams(): Record<string, unknown> {
  return {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "checklist-mcp-bench", version: "0.0.0" },
  };
}

/** Calls a tool; a tool error (`isError`) throws with its text, so a benchmark never times a refusal. */
export async function callTool(rpc: Rpc, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const result = await rpc.request("tools/call", { name, arguments: args }) as ToolResult;
  if (result.isError) {
    throw new Error(`${name} failed: ${result.content?.map((c) => c.text).join(" ") ?? "no text"}`);
  }
  return result;
}

/** Splits a byte stream into text lines. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
    }
  }
  if (buffer) yield buffer;
}

/** Spawns a server speaking stdio; stderr is discarded unless piped (then the caller must drain it). */
export function spawn(
  cmd: ServerCommand,
  stdout: "piped" | "null" = "piped",
  stderr: "piped" | "null" = "null",
): Deno.ChildProcess {
  return new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd: cmd.cwd,
    env: cmd.env,
    clearEnv: true,
    stdin: "piped",
    stdout,
    stderr,
  }).spawn();
}

/** Reads a stream to its end, keeping only its last `keep` characters. */
async function tail(stream: ReadableStream<Uint8Array>, keep: number, into: { text: string }): Promise<void> {
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    into.text = (into.text + chunk).slice(-keep);
  }
}

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(child: Deno.ChildProcess, graceMs = 2000): Promise<void> {
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, graceMs);
  try {
    child.kill("SIGTERM");
  } catch {
    // Already gone.
  }
  await child.status;
  clearTimeout(timer);
}

/** Starts a stdio server and completes the MCP handshake over raw JSON-RPC lines. */
export async function connectStdio(cmd: ServerCommand): Promise<Rpc> {
  const child = spawn(cmd, "piped", "piped");
  const stderr = { text: "" };
  const stderrDone = tail(child.stderr, 2000, stderr).catch(() => {});
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closed = false;
  const reader = (async () => {
    for await (const line of lines(child.stdout)) {
      if (!line.trim()) continue;
      const message = JSON.parse(line) as {
        id?: number;
        result?: unknown;
        error?: { code: number; message: string };
      };
      if (typeof message.id !== "number") continue;
      const waiter = pending.get(message.id);
      if (!waiter) continue;
      pending.delete(message.id);
      if (message.error) waiter.reject(new RpcError(message.error.code, message.error.message));
      else waiter.resolve(message.result);
    }
    for (const waiter of pending.values()) waiter.reject(new Error(`${cmd.label} closed its stdout`));
    pending.clear();
  })();
  const send = (message: unknown) => writer.write(encoder.encode(JSON.stringify(message) + "\n"));
  const rpc: Rpc = {
    pid: child.pid,
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        send({ jsonrpc: "2.0", id, method, params }).catch(reject);
      });
    },
    notify: (method, params) => send({ jsonrpc: "2.0", method, params }),
    async close() {
      if (closed) return;
      closed = true;
      await writer.close().catch(() => {});
      const exited = await Promise.race([child.status.then(() => true), sleep(3000).then(() => false)]);
      if (!exited) await stop(child);
      await reader.catch(() => {});
      await stderrDone;
    },
    [Symbol.asyncDispose]: () => rpc.close(),
  };
  try {
    await withTimeout(rpc.request("initialize", initializeParams()), 60_000, `${cmd.label} initialize`);
    await rpc.notify("notifications/initialized");
  } catch (error) {
    await stop(child);
    await stderrDone;
    const said = stderr.text.trim().split("\n").filter((l) => !l.startsWith("warning:")).slice(-2).join(" ");
    throw new Error(`${(error as Error).message}${said ? `; stderr: ${said}` : ""}`);
  }
  return rpc;
}

/** Rejects when `promise` takes longer than `timeoutMs`. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A server process listening on HTTP. */
export interface HttpProcess extends AsyncDisposable {
  child: Deno.ChildProcess;
  /** The MCP endpoint. */
  url: string;
  stop(): Promise<void>;
}

/** Starts an HTTP server and waits until `GET /healthz` answers (at most 30 s). */
export async function startHttpServer(cmd: ServerCommand, port: number): Promise<HttpProcess> {
  const child = new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd: cmd.cwd,
    env: cmd.env,
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  child.status.then(() => (exited = true));
  const base = `http://127.0.0.1:${port}`;
  const halt = () => stop(child);
  for (let attempt = 0; attempt < 300; attempt++) {
    if (exited) throw new Error(`${cmd.label} exited before listening on ${base}`);
    try {
      const response = await fetch(`${base}/healthz`);
      await response.body?.cancel();
      if (response.ok) return { child, url: `${base}/mcp`, stop: halt, [Symbol.asyncDispose]: halt };
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  await halt();
  throw new Error(`${cmd.label} did not answer on ${base}/healthz within 30 s`);
}

/** A raw Streamable HTTP client: one session (stateful server) or none (stateless server). */
export interface HttpRpc extends Rpc {
  /** The `Mcp-Session-Id` the server gave at initialize; undefined from a stateless server. */
  readonly sessionId: string | undefined;
}

/** Initializes over HTTP and returns a client that sends every later request with the session id. */
export async function connectHttp(url: string, pid?: number): Promise<HttpRpc> {
  let sessionId: string | undefined;
  let nextId = 1;
  const post = async (body: Record<string, unknown>): Promise<Response> => {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
    };
    if (sessionId) headers["mcp-session-id"] = sessionId;
    return await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  };
  const request = async (method: string, params?: unknown): Promise<unknown> => {
    const id = nextId++;
    const response = await post({ jsonrpc: "2.0", id, method, params });
    if (method === "initialize") sessionId = response.headers.get("mcp-session-id") ?? undefined;
    const text = await response.text();
    const message = parseHttpReply(text, response.headers.get("content-type") ?? "", id);
    if (!message) throw new Error(`HTTP ${response.status} without a JSON-RPC answer: ${text.slice(0, 200)}`);
    if (message.error) throw new RpcError(message.error.code, message.error.message);
    return message.result;
  };
  const rpc: HttpRpc = {
    pid,
    get sessionId() {
      return sessionId;
    },
    request,
    async notify(method, params) {
      const response = await post({ jsonrpc: "2.0", method, params });
      await response.body?.cancel();
    },
    async close() {
      if (!sessionId) return;
      const response = await fetch(url, {
        method: "DELETE",
        headers: { "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL_VERSION },
      }).catch(() => undefined);
      await response?.body?.cancel();
      sessionId = undefined;
    },
    [Symbol.asyncDispose]: () => rpc.close(),
  };
  await request("initialize", initializeParams());
  await rpc.notify("notifications/initialized");
  return rpc;
}

interface JsonRpcReply {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
}

/** The answer with `id` in a JSON body or an SSE stream. */
function parseHttpReply(text: string, contentType: string, id: number): JsonRpcReply | undefined {
  if (contentType.includes("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (!data) continue;
      const message = JSON.parse(data) as JsonRpcReply;
      if (message.id === id) return message;
    }
    return undefined;
  }
  try {
    const message = JSON.parse(text) as JsonRpcReply;
    return message.id === id || message.error ? message : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Session shapes

/** A tree shape: `roots` roots × `mids` subtasks × `leaves` leaves each. */
export interface Shape {
  roots: number;
  mids: number;
  leaves: number;
}

/** Tasks in a shape. */
export function shapeSize(shape: Shape): number {
  return shape.roots * (1 + shape.mids * (1 + shape.leaves));
}

/**
 * The shape used for a session of `size` tasks: depth 3, at most 110 siblings, built with calls of
 * at most 500 tasks. 100 = 1×9×10, 1,000 = 1×9×110, 10,000 = 10×9×110, 100,000 = 100×9×110.
 */
export function shapeFor(size: number): Shape {
  if (size === 100) return { roots: 1, mids: 9, leaves: 10 };
  if (size % 1000 === 0) return { roots: size / 1000, mids: 9, leaves: 110 };
  throw new Error(`no shape for ${size} tasks`);
}

/** Ids in a shape, in tree order. */
export interface ShapeIds {
  roots: string[];
  mids: string[];
  /** Leaves in tree order: starting and completing them in this order is always valid. */
  leaves: string[];
}

/** Deterministic ids of a shape: `r3`, `r3.m2`, `r3.m2.l17`. */
export function shapeIds(shape: Shape): ShapeIds {
  const ids: ShapeIds = { roots: [], mids: [], leaves: [] };
  for (let r = 0; r < shape.roots; r++) {
    ids.roots.push(`r${r}`);
    for (let m = 0; m < shape.mids; m++) {
      ids.mids.push(`r${r}.m${m}`);
      for (let l = 0; l < shape.leaves; l++) ids.leaves.push(`r${r}.m${m}.l${l}`);
    }
  }
  return ids;
}

interface NewTask {
  id: string;
  name: string;
  description?: string;
  tasks?: NewTask[];
}

function midTask(r: number, m: number, leaves: number): NewTask & { id: string } {
  const tasks: NewTask[] = [];
  for (let l = 0; l < leaves; l++) tasks.push({ id: `r${r}.m${m}.l${l}`, name: `Leaf ${r}.${m}.${l}` });
  return { id: `r${r}.m${m}`, name: `Step ${r}.${m}`, tasks };
}

/** One `createTask` call of a build: a root, or subtask `mid` under root `underRoot` (by index). */
export interface BuildCall {
  args: Record<string, unknown>;
  underRoot?: number;
  mid?: number;
}

/**
 * The `createTask` calls that build a shape, each within the limits (≤ 500 tasks a call): per
 * root, one call with the root and as many whole subtasks as fit, then one call per subtask left.
 * The top task of a call gets a generated id (createTask keeps given ids only for nested tasks).
 */
export function buildCalls(shape: Shape, sessionId: string): BuildCall[] {
  const calls: BuildCall[] = [];
  const perMid = 1 + shape.leaves;
  if (perMid + 1 > 500) throw new Error("a subtask with its leaves must fit in one call");
  const firstMids = Math.min(shape.mids, Math.floor((500 - 1) / perMid));
  for (let r = 0; r < shape.roots; r++) {
    const first: NewTask[] = [];
    for (let m = 0; m < firstMids; m++) first.push(midTask(r, m, shape.leaves));
    calls.push({ args: { sessionId, name: `Goal ${r}`, description: `Root ${r}`, tasks: first } });
    for (let m = firstMids; m < shape.mids; m++) {
      calls.push({ args: { sessionId, ...midTask(r, m, shape.leaves) }, underRoot: r, mid: m });
    }
  }
  return calls;
}

/** Fills a session with `createTask` calls; returns the ids (as generated where so) and how long it took. */
export async function fillSession(
  rpc: Rpc,
  options: { sessionId: string; size: number; deadlineMs?: number },
): Promise<{ ids: ShapeIds; ms: number }> {
  const shape = shapeFor(options.size);
  const limit = options.deadlineMs ?? 300_000;
  const started = performance.now();
  const ids = shapeIds(shape);
  const roots: string[] = [];
  for (const call of buildCalls(shape, options.sessionId)) {
    if (performance.now() - started > limit) {
      throw new Error(`filling ${options.size} tasks took longer than ${limit} ms`);
    }
    const args = call.underRoot === undefined ? call.args : { ...call.args, parentId: roots[call.underRoot] };
    const result = await callTool(rpc, "createTask", args);
    const task = result.structuredContent?.task as { id?: string } | undefined;
    if (!task?.id) throw new Error("createTask answered without structuredContent.task.id");
    if (call.underRoot === undefined) roots.push(task.id);
    else ids.mids[call.underRoot * shape.mids + call.mid!] = task.id;
  }
  return { ids: { ...ids, roots }, ms: performance.now() - started };
}

/** The store document (`FILE_PATH` format) of a shape, every task todo, in session `sessionId`. */
export function shapeDocument(shape: Shape, sessionId: string): Record<string, unknown> {
  const leaf = (id: string, name: string) => ({ id, name, description: "", status: "todo", tasks: [] });
  const roots = [];
  for (let r = 0; r < shape.roots; r++) {
    const mids = [];
    for (let m = 0; m < shape.mids; m++) {
      const leaves = [];
      for (let l = 0; l < shape.leaves; l++) leaves.push(leaf(`r${r}.m${m}.l${l}`, `Leaf ${r}.${m}.${l}`));
      mids.push({ ...leaf(`r${r}.m${m}`, `Step ${r}.${m}`), tasks: leaves });
    }
    roots.push({ ...leaf(`r${r}`, `Goal ${r}`), description: `Root ${r}`, tasks: mids });
  }
  return { version: 1, sessions: { [sessionId]: roots }, works: [], progress: {} };
}

/** Times one async call in milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}
