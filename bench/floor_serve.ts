/**
 * The SDK v2 floor (floor_server.ts) as a `deno serve` module: its `createMcpHandler` behind the
 * default export, `/mcp` and `/healthz` as over `deno run`. The floor of `deno serve main.ts`
 * (bench/throughput.ts, 2026-07-28 under `deno serve`).
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { createFloorServer } from "./floor_server.ts";

const mcp = createMcpHandler(() => createFloorServer());

export default {
  fetch(request: Request): Response | Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/mcp") return mcp.fetch(request);
    if (pathname === "/healthz") return Response.json({ status: "ok" });
    return new Response("Not Found", { status: 404 });
  },
} satisfies Deno.ServeDefaultExport;
