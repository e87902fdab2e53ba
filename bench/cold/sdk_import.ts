/**
 * Cold-start limit: the SDK v2 server's `McpServer` and `serveStdio`, imported statically, serving
 * a server with no tool at all. No server built on SDK v2's server classes can answer its first
 * request sooner; the floor (`bench/floor_server.ts`) adds one tool and its zod schema.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

serveStdio(() => new McpServer({ name: "sdk-import", version: "0.0.0" }));
