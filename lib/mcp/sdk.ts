/**
 * The MCP SDK's server-side exports, typed. Deno types every `…/x.js` subpath of the SDK as `any`
 * (typescript-sdk issue 2701); the `@ts-types` directives point at the real declarations.
 *
 * Not the SDK's `Server` or `McpServer`: `Server` loads Ajv at import (protocol_server.ts says why).
 */
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export { mergeCapabilities, Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/shared/uriTemplate"
export { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
// @ts-types="@modelcontextprotocol/sdk/shared/uriTemplate"
export type { Variables } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
// The transport's class is in sdk_http.ts: stdio never loads it.
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  isInitializeRequest,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
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
  ServerRequest,
  ServerResult,
  Tool,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
