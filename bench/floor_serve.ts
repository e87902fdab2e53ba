/**
 * The SDK v2 floor (floor_server.ts) as a `deno serve` module: its `createMcpHandler` behind the
 * default export, `/mcp` and `/healthz` as over `deno run`. The floor of `deno serve main.ts`
 * (bench/throughput.ts, 2026-07-28 under `deno serve`).
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { createFloorServer, floorRoutes } from "./floor_server.ts";

export default {
  fetch: floorRoutes(createMcpHandler(() => createFloorServer())),
} satisfies Deno.ServeDefaultExport;
