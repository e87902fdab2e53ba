/**
 * Raw JSON-RPC clients over stdio and over Streamable HTTP: no SDK client, so the client side costs
 * the same for every server measured. Each speaks one era: `legacy` opens with the 2025 `initialize`
 * handshake (and over HTTP keeps the `Mcp-Session-Id` it is given); `modern` speaks 2026-07-28,
 * every request carrying the `_meta` envelope (and over HTTP the standard headers), and opens with
 * `server/discover`, as the SDK's client does. Only 127.0.0.1 is contacted; every wait is bounded.
 */
import { modernHeaders, withEnvelope } from "../tests/support/modern.ts";
import { spawnChild, terminate } from "../tests/support/processes.ts";
import { jsonRpcMessages } from "../tests/support/sse.ts";
import { lines, tail } from "../tests/support/streams.ts";
import { sleep, withTimeout } from "../tests/support/time.ts";
import type { ServerCommand } from "./commands.ts";

/** Protocol version the raw clients announce in the handshake era. */
export const PROTOCOL_VERSION = "2025-06-18";

/** The era a raw client speaks: the 2025 handshake (`legacy`) or 2026-07-28 (`modern`). */
export type Era = "legacy" | "modern";

/** The name the raw clients give. */
const CLIENT_NAME = "checklist-mcp-bench";

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

interface JsonRpcReply {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
}

/** The `initialize` request body's params. */
export function initializeParams(): Record<string, unknown> {
  return {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: CLIENT_NAME, version: "0.0.0" },
  };
}

/**
 * The first request of a connection in `era`: `initialize`, or a 2026-07-28 client's
 * `server/discover` with its envelope.
 */
export function openingRequest(era: Era): { method: string; params: Record<string, unknown> } {
  return era === "legacy"
    ? { method: "initialize", params: initializeParams() }
    : { method: "server/discover", params: withEnvelope({}, CLIENT_NAME) };
}

/** Params as sent in `era`: with the envelope in the modern one. */
export function paramsIn(era: Era, params: unknown): unknown {
  return era === "modern" ? withEnvelope(params as Record<string, unknown> | undefined, CLIENT_NAME) : params;
}

/** Calls a tool; a tool error (`isError`) throws with its text, so a benchmark never times a refusal. */
export async function callTool(rpc: Rpc, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const result = await rpc.request("tools/call", { name, arguments: args }) as ToolResult;
  if (result.isError) {
    throw new Error(`${name} failed: ${result.content?.map((c) => c.text).join(" ") ?? "no text"}`);
  }
  return result;
}

/**
 * Starts a stdio server and opens an MCP connection in `era` over raw JSON-RPC lines: the
 * handshake (`initialize`, `notifications/initialized`), or 2026-07-28's `server/discover`.
 */
export async function connectRawStdio(cmd: ServerCommand, era: Era = "legacy"): Promise<Rpc> {
  const child = spawnChild(cmd, { stdin: "piped", stdout: "piped", stderr: "piped" });
  const stderr = { text: "" };
  const stderrDone = tail(child.stderr, 2000, stderr).catch(() => {});
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closed = false;
  const stop = () => terminate(child, 2000);
  const reader = (async () => {
    for await (const line of lines(child.stdout)) {
      if (!line.trim()) continue;
      const message = JSON.parse(line) as JsonRpcReply;
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
        send({ jsonrpc: "2.0", id, method, params: paramsIn(era, params) }).catch(reject);
      });
    },
    notify: (method, params) => send({ jsonrpc: "2.0", method, params: paramsIn(era, params) }),
    async close() {
      if (closed) return;
      closed = true;
      await writer.close().catch(() => {});
      const exited = await Promise.race([child.status.then(() => true), sleep(3000).then(() => false)]);
      if (!exited) await stop();
      await reader.catch(() => {});
      await stderrDone;
    },
    [Symbol.asyncDispose]: () => rpc.close(),
  };
  try {
    const opening = openingRequest(era);
    await withTimeout(rpc.request(opening.method, opening.params), 60_000, `${cmd.label} ${opening.method}`);
    if (era === "legacy") await rpc.notify("notifications/initialized");
  } catch (error) {
    await stop();
    await stderrDone;
    const said = stderr.text.trim().split("\n").filter((l) => !l.startsWith("warning:")).slice(-2).join(" ");
    throw new Error(`${(error as Error).message}${said ? `; stderr: ${said}` : ""}`);
  }
  return rpc;
}

/**
 * A raw Streamable HTTP client: one connection (stateful server), or none (a stateless server, and
 * every 2026-07-28 client).
 */
export interface HttpRpc extends Rpc {
  /** The `Mcp-Session-Id` the server gave at initialize; undefined from a stateless server. */
  readonly sessionId: string | undefined;
}

/**
 * Opens an MCP client over HTTP in `era`: the handshake era initializes and sends every later
 * request with the `Mcp-Session-Id` it got; 2026-07-28 sends `server/discover` and then each
 * request alone, with the envelope and the standard headers.
 */
export async function connectRawHttp(url: string, pid?: number, era: Era = "legacy"): Promise<HttpRpc> {
  let sessionId: string | undefined;
  let nextId = 1;
  const post = async (method: string, params: unknown, id?: number): Promise<Response> => {
    const sent = paramsIn(era, params) as Record<string, unknown> | undefined;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(era === "modern" ? modernHeaders(method, sent) : { "mcp-protocol-version": PROTOCOL_VERSION }),
    };
    if (sessionId) headers["mcp-session-id"] = sessionId;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      ...(id === undefined ? {} : { id }),
      method,
      params: sent,
    });
    return await fetch(url, { method: "POST", headers, body });
  };
  const request = async (method: string, params?: unknown): Promise<unknown> => {
    const id = nextId++;
    const response = await post(method, params, id);
    if (method === "initialize") sessionId = response.headers.get("mcp-session-id") ?? undefined;
    const text = await response.text();
    const message = replyTo(id, text, response.headers.get("content-type") ?? "");
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
      const response = await post(method, params);
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
  const opening = openingRequest(era);
  await request(opening.method, opening.params);
  if (era === "legacy") await rpc.notify("notifications/initialized");
  return rpc;
}

/** The answer to request `id` in a reply body (JSON or SSE); a bare JSON error answers any id. */
function replyTo(id: number, text: string, contentType: string): JsonRpcReply | undefined {
  let messages: JsonRpcReply[];
  try {
    messages = jsonRpcMessages(text, contentType) as JsonRpcReply[];
  } catch {
    return undefined;
  }
  const answer = messages.find((m) => m.id === id);
  if (answer || contentType.includes("text/event-stream")) return answer;
  return messages.find((m) => m.error);
}
