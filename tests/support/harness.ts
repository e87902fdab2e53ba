/**
 * End-to-end helpers: a real SDK v2 `Client` connected in process, over a real stdio child process,
 * or over HTTP to a real `main.ts` process, in the era a test asks for; and {@link call}, which also
 * checks each reply against the tool's declared output schema. Every connection is an
 * async-disposable handle (`await using`). Processes, ports, environment and SSE live beside this
 * file (`processes.ts`, `server_process.ts`, `env.ts`, `sse.ts`), shared with the benchmarks.
 *
 * Eras: in process, `legacy` (the default) links the client and a server through the SDK's
 * `InMemoryTransport` (the handshake era only, as the SDK has it), and `modern` drives the SDK's
 * `createMcpHandler` through its `fetch`, no socket; stdio and HTTP pin 2026-07-28 by default.
 */
import assert from "node:assert/strict";
import { ERROR_CODES } from "../../lib/domain/errors.ts";
import { ALL_TOOLS, createServer, type ServerOptions } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { serverEnv } from "./env.ts";
import { quietLogger } from "./logs.ts";
import { NO_WORK_TREE, ROOT } from "./paths.ts";
import { freePort } from "./processes.ts";
import { mainArgs, mainCommand, startHttpProcess } from "./server_process.ts";
import {
  type Client,
  type ClientCapabilities,
  type ClientEra,
  InMemoryTransport,
  newClient,
  StdioClientTransport,
  StreamableHTTPClientTransport,
} from "./sdk_client.ts";
import { createMcpHandler, type Server } from "../../lib/mcp/sdk.ts";

/** A connected client; disposing it closes the connection and whatever it started. */
/**
 * What `tools/list` plus the `instructions` may cost an agent's context, in characters, for all groups
 * together (docs/requirements.md C8): every test of the budget reads it here.
 */
export const LISTING_BUDGET = 19_500;

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

function connection(client: Client, close: () => Promise<void>): Connection {
  let closing: Promise<void> | undefined;
  const once = () => (closing ??= close());
  return { client, close: once, [Symbol.asyncDispose]: once };
}

/** Options of {@link connectInMemory}: those of `createServer`, all optional, and the client's era. */
export type InMemoryOptions = Partial<Omit<ServerOptions, "era">> & {
  era?: "legacy" | "modern";
  /** What the client announces (e.g. the MCP Apps extension). */
  capabilities?: ClientCapabilities;
  /** The client's name. */
  name?: string;
};

/** A client connected to a fresh server in this process (a new memory store unless one is given). */
export async function connectInMemory(
  options: InMemoryOptions = {},
): Promise<Connection & { store: Store }> {
  const { era = "legacy", capabilities, name, ...rest } = options;
  const store = rest.store ?? new MemoryStore();
  const make = () => createServer({ log: quietLogger(), features: [PLAN_VIEW], ...rest, store, era });
  return { ...await connectServer(make, { era, capabilities, name }), store };
}

/**
 * A client connected in this process to the servers `make` makes: one for the connection (the
 * handshake era), or one per request behind the SDK's `createMcpHandler` (2026-07-28).
 */
export async function connectServer(
  make: () => Server,
  options: { era?: "legacy" | "modern"; capabilities?: ClientCapabilities; name?: string } = {},
): Promise<Connection> {
  const { era = "legacy", capabilities, name } = options;
  const client = newClient(era, { capabilities, name });
  if (era === "modern") {
    const handler = createMcpHandler(make, { legacy: "reject" });
    const transport = new StreamableHTTPClientTransport(new URL("http://in-process/mcp"), {
      fetch: (url, init) => handler.fetch(new Request(url, init)),
    });
    await client.connect(transport);
    return connection(client, async () => {
      await client.close();
      await handler.close();
    });
  }
  const server = make();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return connection(client, async () => {
    await client.close();
    await server.close();
  });
}

/** Options of {@link spawnStdio} and {@link startHttp}. */
export interface SpawnOptions {
  /** Added to the child's environment (which has no server settings of ours; `LOG_LEVEL=warn`). */
  env?: Record<string, string>;
  /** Extra arguments after `main.ts` (after `--stdio` for {@link spawnStdio}). */
  args?: string[];
  /**
   * Working directory of the child; the project root by default. {@link spawnStdio}: given neither this
   * nor `REPO_DIR` in `env`, the child records no git ({@link NO_WORK_TREE}); a test of git records names
   * its work tree by one or the other.
   */
  cwd?: string;
  /** {@link spawnStdio}: keep the child's stderr (its log, exit lines included) for `stderr()`; else dropped. */
  keepStderr?: boolean;
  /** The client's era: 2026-07-28 pinned (`modern`, the default), the handshake (`legacy`) or `auto`. */
  era?: ClientEra;
  /** {@link spawnStdio}: Deno's permission flags instead of `-A`. */
  permissions?: string[];
}

/** A connection to a stdio child process. */
export interface StdioConnection extends Connection {
  /** What the server logged so far (with `keepStderr`). */
  stderr(): string;
  /** The child's process id (to signal it, e.g. SIGKILL in a crash test). */
  pid: number;
}

/**
 * The SDK's stdio client transport, but probing the era on its own connection: the SDK runs a
 * 2026-07-28 probe of exactly `StdioClientTransport` on a sibling process (servers of some SDKs exit
 * on a request before `initialize`), which doubles every test's processes; a subclass probes in
 * place, as the SDK documents. tests/mcp/eras_test.ts uses the SDK's own, sibling probe included.
 */
class InPlaceStdioClientTransport extends StdioClientTransport {}

/** A client talking to `deno run -A main.ts --stdio` over the child's stdin and stdout. */
export async function spawnStdio(options: SpawnOptions = {}): Promise<StdioConnection> {
  const transport = new InPlaceStdioClientTransport({
    command: Deno.execPath(),
    args: mainArgs(["--stdio", ...(options.args ?? [])], options.permissions),
    env: serverEnv({
      LOG_LEVEL: "warn",
      ...(options.cwd === undefined ? { REPO_DIR: NO_WORK_TREE } : {}),
      ...options.env,
    }),
    cwd: options.cwd ?? ROOT,
    stderr: options.keepStderr ? "pipe" : "ignore",
  });
  let stderr = "";
  const decoder = new TextDecoder();
  (transport.stderr as { on?: (event: "data", fn: (chunk: Uint8Array) => void) => void } | null)?.on?.(
    "data",
    (chunk: Uint8Array) => (stderr += decoder.decode(chunk, { stream: true })),
  );
  const client = newClient(options.era ?? "modern");
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close();
    if (!options.keepStderr) throw error;
    throw new Error(`${(error as Error).message}; the server logged:\n${stderr}`, { cause: error });
  }
  return { ...connection(client, () => client.close()), stderr: () => stderr, pid: transport.pid! };
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
  const cmd = mainCommand(options.args ?? [], {
    LOG_LEVEL: "warn",
    PORT: String(port),
    HOST: "127.0.0.1",
    ...options.env,
  });
  const server = await startHttpProcess({ ...cmd, cwd: options.cwd ?? ROOT }, {
    port,
    label: "HTTP server",
  });
  let stderr = "";
  const stop = async () => void (stderr = (await server.stop()).stderr);
  try {
    const client = newClient(options.era ?? "modern");
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    const conn = connection(client, async () => {
      try {
        await client.close();
      } finally {
        await stop();
      }
    });
    return { ...conn, url: server.url, stderr: () => stderr };
  } catch (error) {
    await stop();
    throw new Error(`HTTP server did not start: ${(error as Error).message}\n${stderr}`);
  }
}

/**
 * Calls a tool and checks the reply against the tool rules (docs/requirements.md C1, C3): a success's `structuredContent` parses
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
