/**
 * Tenants under load on the 2026-07-28 path (docs/hosting.md "Tenants never crowd each other out"),
 * each against a real server process on 127.0.0.1 with a real tokens file: a busy tenant on 200
 * namespaces never turns into failed requests of another; every loop is bounded in count and time.
 */
import assert from "node:assert/strict";
import type { TokenEntry } from "../../lib/auth/tokens_file.ts";
import { tokensFile } from "../support/auth.ts";
import { initializeBody, MCP_HEADERS, postModern } from "../support/http.ts";
import { jsonRpcMessages } from "../support/sse.ts";
import { spawnServer } from "../support/server_process.ts";

const SECRETS = {
  everywhere: "everywhere-secret-0123456789abcdef",
  writer: "writer-secret-0123456789abcdef",
} as const;

const ENTRIES: TokenEntry[] = [
  { name: "everywhere", token: SECRETS.everywhere, namespaces: "*", access: "read" },
  { name: "writer", token: SECRETS.writer, namespaces: ["team"], access: "write" },
];

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

Deno.test("under load on 200 namespaces another tenant's createTask never fails, and each success is saved once", async () => {
  await using file = await tokensFile(ENTRIES);
  // A JSON file store: a change takes a write to disk, so it is in flight while others arrive.
  await using server = await spawnServer({
    env: { AUTH_TOKENS_FILE: file.path, FILE_PATH: `${file.path}.store.json`, LOG_LEVEL: "error" },
  });
  const deadline = Date.now() + 20_000;
  let writing = true;
  // 16 clients of the "*" credential send tools/list to 200 namespaces, round after round, until
  // the writer is done (or the deadline).
  const listed: number[] = [];
  const readers = Array.from({ length: 16 }, async (_, client) => {
    for (let i = 0; writing && i < 2_000 && Date.now() < deadline; i++) {
      const namespace = `tenant-${(client * 37 + i * 16) % 200}`;
      const reply = await postModern(
        `${server.url}/mcp/${namespace}`,
        "tools/list",
        {},
        bearer(SECRETS.everywhere),
      );
      listed.push(reply.status);
    }
  });
  const answers: string[] = [];
  try {
    for (let i = 0; i < 150 && Date.now() < deadline; i++) {
      const reply = await postModern(`${server.url}/mcp`, "tools/call", {
        name: "createTask",
        arguments: { sessionId: "plan", name: `task ${i}` },
      }, bearer(SECRETS.writer)).catch(() => ({ status: 0, messages: [] })); // no reply within 10 s
      const result = reply.messages.at(-1)?.result as { isError?: boolean } | undefined;
      answers.push(reply.status === 200 && result && !result.isError ? "ok" : `HTTP ${reply.status}`);
    }
  } finally {
    writing = false;
    await Promise.all(readers);
  }
  const failed = answers.filter((a) => a !== "ok");
  assert.deepEqual(failed, [], `${failed.length} of ${answers.length} createTask calls failed`);
  assert.ok(listed.length > 1_000, `the readers sent only ${listed.length} requests: no load`);
  assert.deepEqual(listed.filter((s) => s !== 200), [], "every tools/list of the reader is answered too");
  const saved = await postModern(`${server.url}/mcp`, "tools/call", {
    name: "listTasks",
    arguments: { sessionId: "plan" },
  }, bearer(SECRETS.writer));
  const tasks =
    (saved.messages.at(-1)?.result as { structuredContent: { tasks: unknown[] } }).structuredContent
      .tasks;
  assert.equal(tasks.length, answers.length, "as many tasks saved as successes answered");
});

/**
 * POSTs a handshake-era JSON-RPC body to a real server; its status, session id and messages. A reply
 * that has not ended within 5 s rejects.
 */
async function postLegacy(url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  let messages: Record<string, unknown>[] = [];
  try {
    messages = jsonRpcMessages(text, response.headers.get("content-type") ?? "");
  } catch {
    // An empty or cut-off body: no messages.
  }
  return { status: response.status, session: response.headers.get("mcp-session-id"), messages };
}

Deno.test("handshake era: a connection with a call in flight is never closed to make room; each success is saved once", async () => {
  await using file = await tokensFile(ENTRIES);
  // 8 connections at most: the writer's share is 2, and 4 workers of it each open their own.
  await using server = await spawnServer({
    env: {
      AUTH_TOKENS_FILE: file.path,
      FILE_PATH: `${file.path}.store.json`,
      MAX_CONNECTIONS: "8",
      LOG_LEVEL: "error",
    },
  });
  const url = `${server.url}/mcp`;
  // Until 80 calls have succeeded (or a minute has passed): on a busy machine more rounds are refused
  // or closed to make room before then, and the run goes on longer rather than ending short.
  const deadline = Date.now() + 60_000;
  const outcomes: string[] = [];
  const enough = () => outcomes.filter((o) => o === "ok").length >= 80 || Date.now() >= deadline;
  let calls = 0;
  await Promise.all(Array.from({ length: 4 }, async (_, worker) => {
    for (let round = 0; !enough(); round++) {
      const opened = await postLegacy(url, initializeBody(), bearer(SECRETS.writer));
      if (opened.status === 503 || !opened.session) {
        outcomes.push(`initialize ${opened.status}`); // refused before anything was made
        continue;
      }
      const headers = { ...bearer(SECRETS.writer), "mcp-session-id": opened.session };
      await postLegacy(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
      for (let i = 0; i < 3; i++) {
        calls++;
        const reply = await postLegacy(url, {
          jsonrpc: "2.0",
          id: 2 + i,
          method: "tools/call",
          params: {
            name: "createTask",
            arguments: { sessionId: "plan", name: `w${worker} r${round} c${i}` },
          },
        }, headers).catch(() => ({ status: 0, messages: [] })); // no reply within 5 s
        const result = reply.messages.at(-1)?.result as { isError?: boolean } | undefined;
        if (reply.status === 404) {
          outcomes.push("closed before the call"); // nothing was made: a retry is safe
          break;
        }
        outcomes.push(
          reply.status === 200 && result && !result.isError ? "ok" : `cut off (HTTP ${reply.status})`,
        );
      }
    }
  }));
  const cut = outcomes.filter((o) => o.startsWith("cut off"));
  assert.deepEqual(cut, [], `${cut.length} of ${calls} calls lost their reply`);
  const successes = outcomes.filter((o) => o === "ok").length;
  assert.ok(successes > 50, `only ${successes} calls succeeded: ${JSON.stringify(outcomes.slice(0, 20))}`);
  assert.ok(outcomes.includes("closed before the call"), "connections were closed to make room meanwhile");
  const saved = await postModern(url, "tools/call", {
    name: "listTasks",
    arguments: { sessionId: "plan" },
  }, bearer(SECRETS.writer));
  const tasks =
    (saved.messages.at(-1)?.result as { structuredContent: { tasks: unknown[] } }).structuredContent
      .tasks;
  assert.equal(tasks.length, successes, "as many tasks saved as successes answered");
});
