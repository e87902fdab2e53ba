/**
 * Helpers for the HTTP tests: a real SDK client driving a Hono app through `app.request()` (no
 * socket), and raw JSON-RPC posts. Server processes, free ports and SSE replies: `tests/support/`.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import type { Authenticator } from "../../lib/auth/authenticator.ts";
import { createApp, type HttpConfig } from "../../lib/http/app.ts";
import type { Logger } from "../../lib/log.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { quietLogger } from "./logs.ts";
import { type Client, type ClientEra, newClient, StreamableHTTPClientTransport } from "./sdk_client.ts";
import { modernEnvelope, modernHeaders } from "./modern.ts";
import { jsonRpcMessages } from "./sse.ts";

/** The MCP endpoint the in-process tests address (a loopback Host, so the guard lets it pass). */
export const ENDPOINT = "http://127.0.0.1:8585/mcp";

/** Headers of a well-formed MCP POST. */
export const MCP_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/**
 * A raw 2026-07-28 request: its standard headers (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name`
 * for a named tool, prompt or resource) and its body with the `_meta` envelope (modern.ts, which the
 * benchmarks share), `meta` keys added to it.
 */
export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  options: { meta?: Record<string, unknown>; id?: number } = {},
): { headers: Record<string, string>; body: string } {
  return {
    headers: { ...MCP_HEADERS, ...modernHeaders(method, params) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: options.id ?? 1,
      method,
      params: { ...params, _meta: modernEnvelope("raw", options.meta) },
    }),
  };
}

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
  options: { store?: Store; log?: Logger; now?: () => number; access?: Authenticator } = {},
): { app: Hono; close: () => Promise<void>; store: Store } & AsyncDisposable {
  const store = options.store ?? new MemoryStore();
  const log = options.log ?? quietLogger();
  const { app, close } = createApp({
    store,
    log,
    config,
    now: options.now,
    access: options.access,
    makeServer: (scope) => createServer({ store, log, features: [PLAN_VIEW], ...scope }),
  });
  return { app, close, store, [Symbol.asyncDispose]: close };
}

/** Sends one request to the app (no socket). */
export function send(app: Hono, init: RequestInit & { path?: string } = {}): Promise<Response> {
  const { path = "/mcp", ...rest } = init;
  return Promise.resolve(app.request(new URL(path, ENDPOINT).href, rest));
}

/** POSTs a JSON-RPC body (or raw text) with MCP headers plus `headers`, to `/mcp` unless `path` says otherwise. */
export function post(
  app: Hono,
  body: unknown,
  headers: Record<string, string> = {},
  path = "/mcp",
): Promise<Response> {
  return send(app, {
    path,
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Opens a raw MCP connection on the app (initialize); returns its `Mcp-Session-Id`. */
export async function openRawConnection(app: Hono, headers: Record<string, string> = {}): Promise<string> {
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
 * A real SDK client over Streamable HTTP, of the handshake era unless `era` says otherwise. `fetch`
 * defaults to the network; pass an app's `request` (see {@link viaApp}) to stay in-process.
 */
export async function connectHttp(
  url: string,
  options: { headers?: Record<string, string>; fetch?: typeof fetch; era?: ClientEra } = {},
): Promise<ClientHandle> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers ?? {} },
    fetch: options.fetch,
  });
  const client = newClient(options.era ?? "legacy", { name: "checklist-mcp-http-tests" });
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

/** A reply of a real server: its HTTP status and its JSON-RPC messages (a JSON body, or SSE events). */
export interface ModernReply {
  status: number;
  messages: Record<string, unknown>[];
}

/**
 * POSTs one 2026-07-28 request to a real server at `url` (its `/mcp` or `/mcp/NAME`) with `headers`
 * (e.g. a bearer token) and reads the whole reply; a body that is not JSON-RPC gives no messages. A
 * reply that has not ended within `timeoutMs` (10 s) rejects.
 */
export async function postModern(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<ModernReply> {
  const request = modernRequest(method, params);
  const signal = AbortSignal.timeout(timeoutMs);
  const response = await fetch(url, {
    method: "POST",
    headers: { ...request.headers, ...headers },
    body: request.body,
    signal,
  });
  const text = await response.text();
  let messages: Record<string, unknown>[] = [];
  try {
    messages = jsonRpcMessages(text, response.headers.get("content-type") ?? "");
  } catch {
    // An empty or non-JSON body (the SDK's 499): no messages.
  }
  return { status: response.status, messages };
}
