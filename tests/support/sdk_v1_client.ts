/**
 * The maintenance line's client (`@modelcontextprotocol/sdk` 1.x, the handshake era only), typed:
 * Deno types every `…/x.js` subpath of that package as `any` (typescript-sdk issue 2701), and the
 * `@ts-types` directives point at the real declarations. Tests only: clients written on it must
 * keep connecting.
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
export { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
export { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
export { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
