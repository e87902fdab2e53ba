/**
 * The one home of the JSON-RPC error codes and error body our own edges send before the SDK sees a
 * message (stdio lines that are no message, HTTP refusals of the guards and the listener, `deno
 * serve` start-up failures). No other file under `lib/` or `main.ts` writes a code as a number;
 * `tests/mcp/rpc_errors_test.ts` keeps it so. Imports nothing.
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

/**
 * The reply to JSON that is no JSON-RPC message (what the SDK's `parseJSONRPCMessage` refuses), with
 * the value's id when it has a readable one.
 */
export function notAMessage(value: unknown): JsonRpcErrorReply {
  const id = (value as { id?: unknown } | null)?.id;
  return errorReply(
    INVALID_REQUEST,
    'Invalid Request: not a JSON-RPC 2.0 request, notification or response (expected {"jsonrpc":"2.0","id":…,"method":…})',
    typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null,
  );
}
