/**
 * Under `deno serve main.ts` (and so on Deno Deploy) stderr carries only the structured log lines
 * (docs/requirements.md "Hostile input" I8), whichever era the requests speak: the SDK reads
 * `request.signal`, and Deno's warning about its legacy abort behaviour would otherwise be printed
 * (deno.json opts in to the new behaviour: a request's signal aborts when its client goes away).
 */
import assert from "node:assert/strict";
import { MCP_HEADERS, modernRequest } from "../support/http.ts";
import { spawnServer } from "../support/server_process.ts";

Deno.test("deno serve main.ts writes only JSON log lines to stderr, for handshake-era and 2026-07-28 requests", async () => {
  const server = await spawnServer({ mode: "serve", env: { LOG_LEVEL: "debug" } });
  const post = (headers: Record<string, string>, body: unknown) =>
    fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
  try {
    const legacy = await post({}, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    });
    assert.equal(legacy.status, 200);
    await legacy.body?.cancel();
    const send = (request: { headers: Record<string, string>; body: string }) =>
      fetch(`${server.url}/mcp`, { method: "POST", ...request });
    const modern = await send(modernRequest("tools/list"));
    assert.equal(modern.status, 200);
    await modern.text();
    const listen = await send(
      modernRequest("subscriptions/listen", { notifications: { resourcesListChanged: true } }),
    );
    const reader = listen.body!.getReader();
    await reader.read();
    await reader.cancel();
  } finally {
    const { stderr } = await server.stop();
    const lines = stderr.split("\n").filter((line) => line.trim() !== "");
    assert.ok(lines.length > 0);
    for (const line of lines) {
      assert.doesNotThrow(() => JSON.parse(line), `not a log line: ${line}`);
    }
  }
});
