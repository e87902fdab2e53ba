/**
 * The MCP SDK's server-side exports, typed. Deno types every `…/x.js` subpath of the SDK as `any`
 * (typescript-sdk issue 2701); the `@ts-types` directives point at the real declarations.
 */
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
export { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
export type { ReadResourceCallback, ResourceMetadata } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// The transport's class is in sdk_http.ts: stdio never loads it.
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/validation/ajv"
export { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
// @ts-types="@modelcontextprotocol/sdk/validation"
export type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/completable"
export { completable } from "@modelcontextprotocol/sdk/server/completable.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export type {
  CallToolResult,
  JSONRPCMessage,
  LoggingLevel,
  LoggingMessageNotification,
  Resource,
  Tool,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
