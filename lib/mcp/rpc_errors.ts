/**
 * What the SDK lacks of the JSON-RPC errors our own edges send before the SDK sees a message (stdio
 * lines that are no message, the app's HTTP refusals, `deno serve` start-up failures): the two
 * implementation-defined codes below, and the error body. The codes JSON-RPC 2.0 defines are the SDK's
 * `ProtocolErrorCode` (sdk.ts). No other file under `lib/` or `main.ts` writes a code as a number, and
 * none here repeats one of the SDK's; `tests/mcp/rpc_errors_test.ts` keeps it so.
 */
import { ProtocolErrorCode } from "./sdk.ts";

/**
 * The implementation-defined server error the SDK's HTTP transport answers refusals with (bad
 * request, forbidden, too large, unavailable): the HTTP status says which.
 */
export const SERVER_ERROR = -32000;
/**
 * The `Mcp-Session-Id` names no live session (as the SDK's transport answers): the client initializes again.
 */
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
    ProtocolErrorCode.InvalidRequest,
    'Invalid Request: not a JSON-RPC 2.0 request, notification or response (expected {"jsonrpc":"2.0","id":…,"method":…})',
    typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null,
  );
}
