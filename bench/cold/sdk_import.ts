/**
 * Cold-start limit: the MCP SDK's `McpServer` and its stdio transport, imported statically and
 * connected with no tool at all. No server built on the SDK's server classes can answer `initialize`
 * sooner (checklist-mcp uses its own, lib/mcp/protocol_server.ts).
 */
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "sdk-import", version: "0.0.0" });
await server.connect(new StdioServerTransport());
