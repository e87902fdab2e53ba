/**
 * The benchmark floor (issue 28): a minimal server on the official SDK v2
 * (`@modelcontextprotocol/server`) with one no-op tool and nothing else, served as the SDK's docs
 * show. Over stdio (`--stdio`) `serveStdio` serves both eras on one process, picking one from the
 * connection's first message; over HTTP (`127.0.0.1:$PORT/mcp`) `createMcpHandler` on `Deno.serve`
 * answers 2026-07-28 requests and, by its default, 2025 requests statelessly (one instance per
 * request). What any server built on SDK v2 pays before doing real work. The handshake era's
 * stateful HTTP floor is SDK v1's (`floor_v1_server.ts`).
 */
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

/** A server with the one tool `noop`, which answers `ok`. */
export function createFloorServer(): McpServer {
  const server = new McpServer({ name: "floor", version: "0.0.0" });
  server.registerTool("noop", {
    description: "Does nothing.",
    inputSchema: z.object({ id: z.string().optional().describe("Ignored") }),
  }, () => ({ content: [{ type: "text", text: "ok" }] }));
  return server;
}

/** The floor's HTTP routes around its MCP handler: `/mcp`, `/healthz`, else 404 (`deno run` and `deno serve`). */
export function floorRoutes(
  mcp: { fetch(request: Request): Promise<Response> },
): (request: Request) => Response | Promise<Response> {
  return (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/mcp") return mcp.fetch(request);
    if (pathname === "/healthz") return Response.json({ status: "ok" });
    return new Response("Not Found", { status: 404 });
  };
}

async function serveStdio(): Promise<void> {
  const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
  // The connection ends when stdin does; nothing else keeps the process alive.
  serveStdio(() => createFloorServer());
}

async function serveHttp(): Promise<void> {
  const { createMcpHandler } = await import("@modelcontextprotocol/server");
  const mcp = createMcpHandler(() => createFloorServer());
  const port = Number(Deno.env.get("PORT") ?? "8586");
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, floorRoutes(mcp));
  const stop = () => void mcp.close().finally(() => server.shutdown());
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await server.finished;
}

if (import.meta.main) {
  if (Deno.args.includes("--stdio")) await serveStdio();
  else await serveHttp();
}
