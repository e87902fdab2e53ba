/**
 * The HTTP/1.1 listener of `deno run` (lib/listener/serve.ts) against Deno's own (`deno serve`), both
 * serving the same echo app (tests/listener/fixtures/echo_server.ts), for issue 29:
 *
 * - CPU per dripped byte of a request head: many connections each send a head one byte at a time, at a
 *   fixed pace, so every byte is its own read on the server; the server's CPU time (all its threads,
 *   from each thread's `schedstat` in `/proc/PID/task`) divided by the bytes sent.
 * - Memory per idle connection: a fresh server answers one request on each of N keep-alive connections,
 *   which then stay open and silent; its resident memory (`VmRSS`) after a garbage collection, minus
 *   before, divided by N.
 * - Throughput: clients on keep-alive connections, one GET at a time, for a few seconds; requests per
 *   second and the server's CPU time per request.
 *
 * The servers take turns (A, B, B, A, …) so that a change in the machine's load hits both alike; every
 * figure is the median of its rounds, and the ratio the median of each round's ratio.
 *
 *   deno task bench:listener [--rounds=5] [--drip-connections=64] [--idle=1000] [--clients=1,4,16]
 *     [--seconds=1.5] [--only=drip,idle,throughput] [--other=DIR]
 *
 * `--other=DIR` adds the listener of another checkout (`DIR/lib/listener/serve.ts`, or
 * `DIR/lib/http/serve.ts` where it predates issue 36) as a third server, for a before/after.
 */
import { freePort } from "../tests/support/processes.ts";
import { ROOT } from "../tests/support/paths.ts";
import { serverEnv } from "../tests/support/env.ts";
import { type ServerProcess, startHttpProcess } from "../tests/support/server_process.ts";
import { sleep } from "../tests/support/time.ts";
import { cpuMs, rssKiB, threadCpuMs } from "./machine.ts";
import { table } from "./report.ts";
import { median } from "./stats.ts";

function option(name: string, fallback: string): string {
  return Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

const ROUNDS = Number(option("rounds", "5"));
const DRIP_CONNECTIONS = Number(option("drip-connections", "64"));
const IDLE = Number(option("idle", "1000"));
const CLIENTS = option("clients", "1,4,16").split(",").map(Number);
const SECONDS = Number(option("seconds", "1.5"));
const ONLY = new Set(option("only", "drip,idle,throughput").split(","));
const OTHER = Deno.args.find((a) => a.startsWith("--other="))?.slice("--other=".length);
const ECHO = `${ROOT}/tests/listener/fixtures/echo_server.ts`;
const note = (line: string) => console.error(`[listener] ${line}`);
const encoder = new TextEncoder();

/** A listener under test: how to start it. */
interface Contender {
  label: string;
  start(): Promise<ServerProcess>;
}

function ours(label: string, listener?: string): Contender {
  return {
    label,
    start: () => {
      const port = freePort();
      const env = serverEnv({ PORT: String(port), ...(listener ? { LISTENER: listener } : {}) });
      return startHttpProcess({
        command: Deno.execPath(),
        args: ["run", "-A", "--v8-flags=--expose-gc", "--config", `${ROOT}/deno.json`, ECHO, "--own"],
        cwd: ROOT,
        env,
      }, { port, stderr: "null", graceMs: 2000, label });
    },
  };
}

const denoServe: Contender = {
  label: "Deno's listener (deno serve)",
  start: () => {
    const port = freePort();
    return startHttpProcess({
      command: Deno.execPath(),
      args: [
        "serve",
        "-A",
        "--v8-flags=--expose-gc",
        "--config",
        `${ROOT}/deno.json`,
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
        ECHO,
      ],
      cwd: ROOT,
      env: serverEnv(),
    }, { port, stderr: "null", graceMs: 2000, label: "deno serve" });
  },
};

const contenders: Contender[] = [ours("ours (this checkout)"), denoServe];
if (OTHER) contenders.push(ours(`ours at ${OTHER}`, otherListener(OTHER)));

/** A connection that sends one GET at a time and reads each answer (length-framed) to its end. */
class KeepAlive {
  #conn: Deno.TcpConn;
  #buf = new Uint8Array(64 * 1024);
  #have = 0;
  #request: Uint8Array;

  private constructor(conn: Deno.TcpConn, path: string) {
    this.#conn = conn;
    this.#request = encoder.encode(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  }

  static async open(port: number, path = "/bench"): Promise<KeepAlive> {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.setNoDelay(true);
    return new KeepAlive(conn, path);
  }

  /** Sends the GET and reads its answer; the status. */
  async get(): Promise<number> {
    await this.#conn.write(this.#request);
    while (true) {
      const text = latin1Head(this.#buf, this.#have);
      if (text !== undefined) {
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
        const total = text.length + length;
        if (this.#have >= total) {
          this.#buf.copyWithin(0, total, this.#have);
          this.#have -= total;
          return Number(text.slice(9, 12));
        }
      }
      const n = await this.#conn.read(this.#buf.subarray(this.#have));
      if (n === null) throw new Error("the server closed the connection");
      this.#have += n;
    }
  }

  close(): void {
    try {
      this.#conn.close();
    } catch {
      // closed already
    }
  }
}

/** The head of the response at the start of `buf[0, have)`, with its blank line; undefined until complete. */
function latin1Head(buf: Uint8Array, have: number): string | undefined {
  for (let i = 3; i < have; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) {
      return String.fromCharCode(...buf.subarray(0, i + 1));
    }
  }
  return undefined;
}

/** The head every dripping connection sends: about 1 KiB, 24 fields. */
const DRIPPED_HEAD = encoder.encode(
  "GET /drip?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
    Array.from({ length: 22 }, (_, i) => `X-Field-${String(i).padStart(2, "0")}: ${"v".repeat(24)}\r\n`)
      .join("") +
    "Accept: */*\r\n\r\n",
);

/** Drips {@link DRIPPED_HEAD} on `connections` connections; returns the server's CPU µs per byte. */
async function drip(server: ServerProcess, connections: number): Promise<number> {
  const conns = await Promise.all(
    Array.from({ length: connections }, () => Deno.connect({ hostname: "127.0.0.1", port: server.port })),
  );
  for (const conn of conns) conn.setNoDelay(true);
  const pid = server.child.pid;
  const before = await threadCpuMs(pid);
  const last = DRIPPED_HEAD.byteLength - 1;
  for (let i = 0; i < last; i++) {
    const byte = DRIPPED_HEAD.subarray(i, i + 1);
    await Promise.all(conns.map((conn) => conn.write(byte)));
    // A pace the server keeps up with: each byte arrives alone, and is read alone.
    await sleep(1);
  }
  const cpu = await threadCpuMs(pid) - before;
  // The head's last byte: every connection gets its answer, so both listeners parsed every head.
  const answers = await Promise.all(conns.map(async (conn) => {
    await conn.write(DRIPPED_HEAD.subarray(last));
    const buf = new Uint8Array(64);
    const n = await conn.read(buf);
    conn.close();
    return n === null ? "" : String.fromCharCode(...buf.subarray(0, n));
  }));
  const failed = answers.filter((a) => !a.startsWith("HTTP/1.1 200")).length;
  if (failed > 0) throw new Error(`${failed} dripped heads got no 200`);
  return cpu * 1000 / (connections * last);
}

/** Opens `count` keep-alive connections that each get one answer and then stay silent; RSS KiB per connection. */
async function idle(contender: Contender, count: number): Promise<number> {
  await using server = await contender.start();
  const pid = server.child.pid;
  const warm = await KeepAlive.open(server.port);
  for (let i = 0; i < 200; i++) await warm.get();
  const gc = await KeepAlive.open(server.port, "/gc");
  await gc.get();
  await sleep(300);
  const before = await rssKiB(pid);
  const conns: KeepAlive[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, () => KeepAlive.open(server.port)),
    );
    await Promise.all(batch.map((c) => c.get()));
    conns.push(...batch);
  }
  await sleep(300);
  await gc.get();
  await sleep(500);
  const after = await rssKiB(pid);
  for (const conn of [...conns, warm, gc]) conn.close();
  return (after - before) / count;
}

/** `clients` keep-alive clients for `seconds`; requests per second and the server's CPU µs per request. */
async function throughput(
  server: ServerProcess,
  clients: number,
  seconds: number,
): Promise<{ rps: number; cpuUs: number }> {
  const conns = await Promise.all(Array.from({ length: clients }, () => KeepAlive.open(server.port)));
  for (const conn of conns) await conn.get();
  const cpuBefore = await cpuMs(server.child.pid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let requests = 0;
  await Promise.all(conns.map(async (conn) => {
    while (performance.now() < deadline) {
      const status = await conn.get();
      if (status !== 200) throw new Error(`status ${status}`);
      requests++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = await cpuMs(server.child.pid) - cpuBefore;
  for (const conn of conns) conn.close();
  return { rps: requests / elapsed, cpuUs: cpu * 1000 / requests };
}

/** The order of the contenders in round `r`: A B C, then C B A, … */
function turn<T>(items: readonly T[], r: number): T[] {
  return r % 2 === 0 ? [...items] : [...items].reverse();
}

function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "—";
}

/** Each round's ratio of contender `i` to contender `j` (Deno's listener unless given), then their median. */
function ratioToDeno(samples: number[][], i: number, j = contenders.indexOf(denoServe)): number {
  return median(samples[i]!.map((value, r) => value / samples[j]![r]!));
}

/** With `--other`, a line that says this checkout's figure ÷ the other's (the median of each round's ratio). */
function againstOther(what: string, samples: number[][]): string {
  return OTHER ? `\n\nThis checkout ÷ ${OTHER}, ${what}: ${fixed(ratioToDeno(samples, 0, 2))}×.` : "";
}

const sections: string[] = [];
const load = async () => (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
note(`load average at start: ${await load()}`);

if (ONLY.has("drip")) {
  const servers = await Promise.all(contenders.map((c) => c.start()));
  try {
    // One round of warm-up, not counted.
    for (const server of servers) await drip(server, 8);
    const samples = contenders.map(() => [] as number[]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of turn(contenders.map((_, i) => i), r)) {
        samples[i]!.push(await drip(servers[i]!, DRIP_CONNECTIONS));
      }
      note(`drip round ${r + 1}: ${samples.map((s) => fixed(s.at(-1)!)).join(" / ")} µs per byte`);
    }
    sections.push(
      `CPU per dripped byte of a request head (${DRIP_CONNECTIONS} connections, a ${DRIPPED_HEAD.byteLength}-byte ` +
        `head one byte per write, 1 ms apart; ${ROUNDS} rounds):\n\n` +
        table(
          ["listener", "server CPU µs per byte (median)", "÷ Deno's listener"],
          contenders.map((
            c,
            i,
          ) => [c.label, fixed(median(samples[i]!)), `${fixed(ratioToDeno(samples, i))}×`]),
        ) + againstOther("CPU per byte", samples),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

if (ONLY.has("idle")) {
  const samples = contenders.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const i of turn(contenders.map((_, i) => i), r)) samples[i]!.push(await idle(contenders[i]!, IDLE));
    note(`idle round ${r + 1}: ${samples.map((s) => fixed(s.at(-1)!, 1)).join(" / ")} KiB per connection`);
  }
  sections.push(
    `Memory per idle keep-alive connection (${IDLE} connections, one request each, then silent; a fresh ` +
      `server per round; VmRSS after a garbage collection; ${ROUNDS} rounds):\n\n` +
      table(
        ["listener", "KiB per idle connection (median)", "÷ Deno's listener"],
        contenders.map((
          c,
          i,
        ) => [c.label, fixed(median(samples[i]!), 1), `${fixed(ratioToDeno(samples, i))}×`]),
      ) + againstOther("memory per idle connection", samples),
  );
}

if (ONLY.has("throughput")) {
  const servers = await Promise.all(contenders.map((c) => c.start()));
  try {
    for (const server of servers) await throughput(server, 4, 0.5);
    const rows: string[][] = [];
    const others: string[] = [];
    for (const clients of CLIENTS) {
      const rps = contenders.map(() => [] as number[]);
      const cpu = contenders.map(() => [] as number[]);
      for (let r = 0; r < ROUNDS; r++) {
        for (const i of turn(contenders.map((_, i) => i), r)) {
          const result = await throughput(servers[i]!, clients, SECONDS);
          rps[i]!.push(result.rps);
          cpu[i]!.push(result.cpuUs);
        }
      }
      note(`throughput at ${clients}: ${rps.map((s) => fixed(median(s), 0)).join(" / ")} req/s`);
      if (OTHER) {
        others.push(
          `${clients} clients: req/s ${fixed(ratioToDeno(rps, 0, 2))}×, CPU per request ${
            fixed(ratioToDeno(cpu, 0, 2))
          }×`,
        );
      }
      contenders.forEach((c, i) =>
        rows.push([
          String(clients),
          c.label,
          fixed(median(rps[i]!), 0),
          `${fixed(ratioToDeno(rps, i))}×`,
          fixed(median(cpu[i]!), 1),
          `${fixed(ratioToDeno(cpu, i))}×`,
        ])
      );
    }
    sections.push(
      `Throughput of the echo app (keep-alive, one GET at a time per client, ${ROUNDS} rounds of ${SECONDS} s ` +
        `per client count):\n\n` +
        table(
          ["clients", "listener", "req/s (median)", "÷ Deno's", "server CPU µs/req", "÷ Deno's"],
          rows,
        ) +
        (OTHER ? `\n\nThis checkout ÷ ${OTHER} (medians of each round's ratio): ${others.join("; ")}.` : ""),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

note(`load average at end: ${await load()}`);
console.log(sections.join("\n\n"));

/** The listener of the checkout at `dir`: in lib/listener/ since issue 36, in lib/http/ before. */
function otherListener(dir: string): string {
  try {
    Deno.statSync(`${dir}/lib/listener/serve.ts`);
    return `${dir}/lib/listener/serve.ts`;
  } catch {
    return `${dir}/lib/http/serve.ts`;
  }
}
