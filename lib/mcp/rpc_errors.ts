/**
 * The one home of JSON-RPC error codes and of the error body every edge sends (stdio lines, HTTP
 * refusals, `deno serve` start-up failures, resource errors). No other file under `lib/` or `main.ts`
 * writes a code as a number; `tests/mcp/rpc_errors_test.ts` keeps it so. Imports nothing, so the
 * lightest entry (stdio, `main.ts`) can use it.
 */

/** Text that is not JSON (JSON-RPC 2.0, section 5.1). */
export const PARSE_ERROR = -32700;
/** JSON that is not a request, notification or response, or a batch (which this server refuses). */
export const INVALID_REQUEST = -32600;
/** A method the server does not know (the SDK sends it; named here for tests and documents). */
export const METHOD_NOT_FOUND = -32601;
/** Parameters the method refuses. */
export const INVALID_PARAMS = -32602;
/** A failure inside the server; its text goes to the log, never to the caller. */
export const INTERNAL_ERROR = -32603;
/**
 * The implementation-defined server error the SDK's HTTP transport answers refusals with (bad
 * request, forbidden, too large, unavailable): the HTTP status says which.
 */
export const SERVER_ERROR = -32000;
/** The `Mcp-Session-Id` names no live session (the SDK's code): the client initializes again. */
export const SESSION_NOT_FOUND = -32001;
/** A resource URI that names nothing (MCP specification). */
export const RESOURCE_NOT_FOUND = -32002;

/** A JSON-RPC error body. */
export interface JsonRpcErrorReply {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string };
}

/** An error body; `id` null when the request's id could not be read (or there was no request). */
export function errorReply(
  code: number,
  message: string,
  id: string | number | null = null,
): JsonRpcErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** An error a request handler throws to be answered with `code`, `message` and `data`. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }
}

/** An {@link RpcError} whose message reads `MCP error CODE: message`, as the SDK's `McpError` wrote it. */
export function mcpError(code: number, message: string, data?: unknown): RpcError {
  return new RpcError(code, `MCP error ${code}: ${message}`, data);
}
