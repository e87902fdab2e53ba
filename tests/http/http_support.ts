/**
 * Helpers for the HTTP tests: a real SDK client driving a Hono app through `app.request()` (no
 * socket), raw JSON-RPC posts with their SSE replies decoded, and real server processes
 * (`deno run main.ts` or `deno serve main.ts`) on free loopback ports.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createApp, type HttpConfig } from "../../lib/http/app.ts";
import type { Logger } from "../../lib/log.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { CONFIG, freePort, MAIN, quietLogger, ROOT, terminate, waitForHealth } from "../support/harness.ts";
import { Client, StreamableHTTPClientTransport } from "../support/sdk_client.ts";

// @ts-types="@modelcontextprotocol/sdk/types"
export { EmptyResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

/** The MCP endpoint the in-process tests address (a loopback Host, so the guard lets it pass). */
export const ENDPOINT = "http://127.0.0.1:8585/mcp";

/** Headers of a well-formed MCP POST. */
export const MCP_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** An initialize request body. */
export function initializeBody(id: number | string = 1): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  };
}

/** An app over a fresh memory store (unless given one), with its `close`. */
export function makeApp(
  config: HttpConfig = {},
  options: { store?: Store; log?: Logger; now?: () => number } = {},
): { app: Hono; close: () => Promise<void>; store: Store } & AsyncDisposable {
  const store = options.store ?? new MemoryStore();
  const log = options.log ?? quietLogger();
  const { app, close } = createApp({
    store,
    log,
    config,
    now: options.now,
    makeServer: () => createServer({ store, log }),
  });
  return { app, close, store, [Symbol.asyncDispose]: close };
}

/** Sends one request to the app (no socket). */
export function send(app: Hono, init: RequestInit & { path?: string } = {}): Promise<Response> {
  const { path = "/mcp", ...rest } = init;
  return Promise.resolve(app.request(new URL(path, ENDPOINT).href, rest));
}

/** POSTs a JSON-RPC body (or raw text) with MCP headers plus `headers`. */
export function post(app: Hono, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return send(app, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The JSON-RPC messages of a reply: the JSON body, or each `data:` event of an SSE body. */
export async function messagesOf(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  if (text === "") return [];
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const parsed = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  const messages: Record<string, unknown>[] = [];
  for (const event of text.split(/\n\n/)) {
    const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join(
      "\n",
    );
    if (data) messages.push(JSON.parse(data));
  }
  return messages;
}

/** Initializes a raw session on the app; returns its `Mcp-Session-Id`. */
export async function openRawSession(app: Hono, headers: Record<string, string> = {}): Promise<string> {
  const response = await post(app, initializeBody(), headers);
  assert.equal(response.status, 200, await response.clone().text());
  const id = response.headers.get("mcp-session-id");
  assert.ok(id, "initialize returned no Mcp-Session-Id");
  await response.body?.cancel();
  return id;
}

/** A connected SDK client; disposing closes it. */
export interface ClientHandle extends AsyncDisposable {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/**
 * A real SDK client over Streamable HTTP. `fetch` defaults to the network; pass an app's
 * `request` (see {@link viaApp}) to stay in-process.
 */
export async function connectHttp(
  url: string,
  options: { headers?: Record<string, string>; fetch?: typeof fetch } = {},
): Promise<ClientHandle> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers ?? {} },
    fetch: options.fetch,
  });
  const client = new Client({ name: "checklist-mcp-http-tests", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport, [Symbol.asyncDispose]: () => client.close() };
}

/** A `fetch` that hands every request to one of the apps, in turn (one app: always that one). */
export function viaApp(...apps: Hono[]): typeof fetch {
  let next = 0;
  return (input, init) => {
    const app = apps[next++ % apps.length]!;
    const request = new Request(input, init);
    return Promise.resolve(app.request(request));
  };
}

/** A server process on a free loopback port. */
export interface ServerProcess extends AsyncDisposable {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  port: number;
  /** Stops the process (SIGTERM) and returns its exit status and stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/** Options of {@link spawnServer}. */
export interface SpawnServerOptions {
  /** `run` (default): `deno run -A main.ts`; `serve`: `deno serve -A --host 127.0.0.1 --port N main.ts`. */
  mode?: "run" | "serve";
  env?: Record<string, string>;
  /** Extra arguments after `main.ts`. */
  args?: string[];
}

/** The environment a child server gets: ours, minus settings that would change what it serves. */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (
    const name of ["FILE_PATH", "KV_PATH", "PORT", "HOST", "AUTH_TOKEN", "STATELESS", "DENO_DEPLOYMENT_ID"]
  ) {
    delete env[name];
  }
  return { ...env, NO_COLOR: "1", LOG_LEVEL: "info", ...extra };
}

/** Starts a server process and waits until `/healthz` answers. */
export async function spawnServer(options: SpawnServerOptions = {}): Promise<ServerProcess> {
  const port = freePort();
  const args = options.mode === "serve"
    ? ["serve", "-A", "--config", CONFIG, "--host", "127.0.0.1", "--port", String(port), MAIN]
    : ["run", "-A", "--config", CONFIG, MAIN];
  const child = new Deno.Command(Deno.execPath(), {
    args: [...args, ...(options.args ?? [])],
    env: serverEnv({ PORT: String(port), HOST: "127.0.0.1", ...options.env }),
    clearEnv: true,
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let stopped: Promise<{ code: number; stderr: string }> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      const status = await terminate(child);
      return { code: status.code, stderr: await stderr };
    })();
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, child);
  } catch (error) {
    const { stderr: text } = await stop();
    throw new Error(`server did not start: ${(error as Error).message}\n${text}`);
  }
  return { url, port, stop, [Symbol.asyncDispose]: async () => void await stop() };
}

/** Runs a command to its end and returns its exit code and output. */
export async function runToEnd(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    env: serverEnv(options.env),
    clearEnv: true,
    cwd: options.cwd ?? ROOT,
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}
