/**
 * The MCP SDK's server-side exports, typed. Deno types every `…/x.js` subpath of the SDK as `any`
 * (typescript-sdk issue 2701); the `@ts-types` directives point at the real declarations.
 *
 * Types only, and the URI template class (a module that imports nothing): the stdio path loads
 * none of the SDK's runtime (lib/mcp/protocol_server.ts says why), nor does HTTP (its transport is
 * lib/http/mcp_transport.ts).
 */
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/shared/uriTemplate"
export { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
// @ts-types="@modelcontextprotocol/sdk/shared/uriTemplate"
export type { Variables } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export type {
  CallToolResult,
  ClientCapabilities,
  GetPromptResult,
  Implementation,
  JSONRPCMessage,
  LoggingLevel,
  LoggingMessageNotification,
  ReadResourceResult,
  Resource,
  ServerCapabilities,
  ServerNotification,
  Tool,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
