/**
 * The one door to the official MCP TypeScript SDK v2 on the server side (`@modelcontextprotocol/server`):
 * the protocol (JSON-RPC, both eras, versions, `initialize` and `server/discover`, the per-request
 * envelope, cancellation, `subscriptions/listen`) and its transports are the SDK's; everything
 * imported from it passes through here, so a reader finds where the SDK ends in one file.
 */
export {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  InMemoryTransport,
  isLegacyRequest,
  legacyStatelessFallback,
  parseJSONRPCMessage,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  UriTemplate,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
export type {
  AuthInfo,
  CallToolResult,
  ClientCapabilities,
  GetPromptResult,
  JSONRPCMessage,
  JSONRPCRequest,
  ListResourcesResult,
  LoggingLevel,
  McpHttpHandler,
  McpRequestContext,
  ReadResourceResult,
  Resource,
  ServerCapabilities,
  ServerContext,
  ServerEvent,
  ServerEventBus,
  Tool,
  ToolAnnotations,
  Transport,
  Variables,
} from "@modelcontextprotocol/server";
export { serveStdio } from "@modelcontextprotocol/server/stdio";
