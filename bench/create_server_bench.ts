/**
 * Building one MCP server (`createServer`), as every 2026-07-28 HTTP request does (the SDK's
 * `createMcpHandler` calls the factory per request) and every handshake-era connection once.
 *
 *   deno bench bench/create_server_bench.ts
 */
import { createServer } from "../lib/mcp/server.ts";
import { PLAN_VIEW } from "../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../lib/store/memory_store.ts";
import { quietLogger } from "../tests/support/logs.ts";

const store = new MemoryStore();
const log = quietLogger();

Deno.bench("createServer, 2026-07-28 (per request)", () => {
  createServer({ store, log, era: "modern", features: [PLAN_VIEW] });
});

Deno.bench("createServer, handshake era (per connection)", () => {
  createServer({ store, log, era: "legacy", features: [PLAN_VIEW] });
});
