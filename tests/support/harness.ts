/**
 * End-to-end helpers: a real SDK `Client` connected in memory, over a real stdio child process, or
 * over HTTP to a real `main.ts` process; and {@link call}, which also checks each reply against the
 * tool's declared output schema. Every helper returns an async-disposable handle (`await using`).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ERROR_CODES } from "../../lib/domain/errors.ts";
import { createLogger, type Logger } from "../../lib/log.ts";
import { ALL_TOOLS, createServer, type ServerOptions } from "../../lib/mcp/server.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import {
  Client,
  InMemoryTransport,
  StdioClientTransport,
  StreamableHTTPClientTransport,
} from "./sdk_client.ts";

/** The project root (holds `main.ts` and `deno.json`). */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
/** Absolute path of the entry. */
export const MAIN: string = `${ROOT}/main.ts`;
/** Absolute path of the project's config (children run with `--config` so any cwd works). */
export const CONFIG: string = `${ROOT}/deno.json`;

/** A connected client; disposing it closes the connection and whatever it started. */
export interface Connection extends AsyncDisposable {
  client: Client;
  close(): Promise<void>;
}

/** A tool call's result as the client sees it. */
export interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A logger that drops everything (tests read replies, not logs). */
export function quietLogger(): Logger {
  return createLogger({ level: "error", write: () => {} });
}

function newClient(): Client {
  return new Client({ name: "checklist-mcp-tests", version: "0.0.0" });
}

function connection(client: Client, close: () => Promise<void>): Connection {
  let closing: Promise<void> | undefined;
  const once = () => (closing ??= close());
  return { client, close: once, [Symbol.asyncDispose]: once };
}

/** Options of {@link connectInMemory}: those of `createServer`, all optional. */
export type InMemoryOptions = Partial<ServerOptions>;

/** A client linked to a fresh server in this process (a new memory store unless one is given). */
export async function connectInMemory(
  options: InMemoryOptions = {},
): Promise<Connection & { store: Store }> {
  const store = options.store ?? new MemoryStore();
  const server = createServer({ log: quietLogger(), ...options, store });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = newClient();
  await server.connect(serverSide);
  await client.connect(clientSide);
  const conn = connection(client, async () => {
    await client.close();
    await server.close();
  });
  return { ...conn, store };
}

/** Options of {@link spawnStdio}. */
export interface SpawnOptions {
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Extra arguments after `main.ts --stdio`. */
  args?: string[];
  /** Working directory of the child; the project root by default. */
  cwd?: string;
}

/** The child's environment: ours (so Deno finds its cache) plus `extra`, minus our own store settings. */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of ["FILE_PATH", "KV_PATH", "PORT", "HOST", "CHECKLIST_TOOLS", "AUTH_TOKEN"]) {
    delete env[name];
  }
  return { ...env, NO_COLOR: "1", LOG_LEVEL: "warn", ...extra };
}

/** A client talking to `deno run -A main.ts --stdio` over the child's stdin and stdout. */
export async function spawnStdio(options: SpawnOptions = {}): Promise<Connection> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "--config", CONFIG, MAIN, "--stdio", ...(options.args ?? [])],
    env: childEnv(options.env),
    cwd: options.cwd ?? ROOT,
    stderr: "ignore",
  });
  const client = newClient();
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close();
    throw error;
  }
  return connection(client, () => client.close());
}

/** How a run of {@link runMain} ended. */
export interface RunOutput {
  code: number;
  stderr: string;
}

/**
 * Runs `main.ts --stdio` with stdin closed and waits for it to exit: a server that starts ends at
 * once (end of input), one that cannot start exits non-zero with its reason on stderr.
 */
export async function runMain(options: SpawnOptions = {}): Promise<RunOutput> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, MAIN, "--stdio", ...(options.args ?? [])],
    env: childEnv(options.env),
    clearEnv: true,
    cwd: options.cwd ?? ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

/** A free TCP port on 127.0.0.1 (listen on 0, read the port, close). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A running HTTP server process with a connected client. */
export interface HttpServer extends Connection {
  /** Base URL, e.g. `http://127.0.0.1:41234`; the MCP endpoint is `${url}/mcp`. */
  url: string;
  /** Whatever the process wrote on stderr, available after close. */
  stderr(): string;
}

/** Starts `main.ts` as an HTTP server on a free port, waits for `/healthz`, and connects a client. */
export async function startHttp(options: SpawnOptions = {}): Promise<HttpServer> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, MAIN, ...(options.args ?? [])],
    env: childEnv({ PORT: String(port), HOST: "127.0.0.1", ...options.env }),
    clearEnv: true,
    cwd: options.cwd ?? ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderrText = new Response(child.stderr).text();
  let stderr = "";
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await terminate(child);
    stderr = await stderrText;
  };
  try {
    await waitForHealth(url, child);
    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const conn = connection(client, async () => {
      try {
        await client.close();
      } finally {
        await stop();
      }
    });
    return { ...conn, url, stderr: () => stderr };
  } catch (error) {
    await stop();
    throw new Error(`HTTP server did not start: ${(error as Error).message}\n${stderr}`);
  }
}

/**
 * Sends SIGTERM and waits for the exit; a process still alive after `graceMs` is killed (status
 * 137), so a server that ignores SIGTERM fails its test instead of hanging the suite.
 */
export async function terminate(child: Deno.ChildProcess, graceMs = 10_000): Promise<Deno.CommandStatus> {
  try {
    child.kill("SIGTERM");
  } catch {
    // Already exited.
  }
  const killer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Exited meanwhile.
    }
  }, graceMs);
  try {
    return await child.status;
  } finally {
    clearTimeout(killer);
  }
}

/** Polls `/healthz` until it answers 200; fails when the child exits first or after 30 s. */
export async function waitForHealth(url: string, child: Deno.ChildProcess): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  for (let attempt = 0; attempt < 600; attempt++) {
    if (exited) throw new Error("the process exited");
    try {
      const response = await fetch(`${url}/healthz`);
      const body = await response.text();
      if (response.ok) return void JSON.parse(body);
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no answer on /healthz after 30 s");
}

/**
 * Calls a tool and checks the reply against the contract: a success's `structuredContent` parses
 * with the tool's output schema; a failure carries `structuredContent.error` with a known code.
 */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolResult> {
  const def = ALL_TOOLS.find((t) => t.name === name);
  assert.ok(def, `no tool named ${name} in ALL_TOOLS`);
  const result = await client.callTool({ name, arguments: args }) as ToolResult;
  assert.ok(Array.isArray(result.content) && result.content.length > 0, `${name} returned no content`);
  if (result.isError) {
    const error = (result.structuredContent as { error?: { code?: unknown; message?: unknown } } | undefined)
      ?.error;
    assert.ok(error, `${name} failed without structuredContent.error: ${textOf(result)}`);
    assert.ok((ERROR_CODES as readonly unknown[]).includes(error.code), `unknown error code ${error.code}`);
    assert.equal(typeof error.message, "string");
  } else {
    def.output.parse(result.structuredContent);
  }
  return result;
}

/** Calls a tool that must succeed; returns its structured content. */
export async function ok<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T & Record<string, unknown>> {
  const result = await call(client, name, args);
  assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
  return result.structuredContent as T & Record<string, unknown>;
}

/** Calls a tool that must fail with `code`; returns the error message. */
export async function fails(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  code: string,
): Promise<string> {
  const result = await call(client, name, args);
  assert.equal(result.isError, true, `${name} should have failed with ${code}: ${textOf(result)}`);
  const error = (result.structuredContent as { error: { code: string; message: string } }).error;
  assert.equal(error.code, code, `${name}: ${error.message}`);
  return error.message;
}

/** The text of a result's content. */
export function textOf(result: ToolResult): string {
  return result.content.map((c) => c.text ?? "").join("\n");
}
