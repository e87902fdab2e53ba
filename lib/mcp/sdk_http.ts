/**
 * The SDK's Streamable HTTP transport, typed (see sdk.ts), in a module of its own so that only the
 * HTTP path loads it.
 */
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
