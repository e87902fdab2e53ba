/**
 * Reading one JSON-RPC message from text, as a transport must before the protocol sees it: a
 * message, or the error reply the sender gets instead (JSON-RPC 2.0 section 5.1 codes).
 */
import { JSONRPCMessageSchema } from "./sdk.ts";
import type { JSONRPCMessage } from "./sdk.ts";

/** An error reply to a line or body that is not a message. */
export interface JsonRpcErrorReply {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string };
}

/** JSON-RPC's codes for input that is not a message. */
export const PARSE_ERROR = -32700;
/** See {@link PARSE_ERROR}. */
export const INVALID_REQUEST = -32600;

/** An error reply; `id` null when the request's id could not be read. */
export function errorReply(
  code: number,
  message: string,
  id: string | number | null = null,
): JsonRpcErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/**
 * The message `text` holds, or the reply it gets instead: `-32700` when it is not JSON, `-32600`
 * for a batch (one message per line) and for JSON that is not a request, notification or response.
 */
export function readMessage(text: string): { message: JSONRPCMessage } | { refused: JsonRpcErrorReply } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { refused: errorReply(PARSE_ERROR, "Parse error: not valid JSON") };
  }
  return checkMessage(value);
}

/** {@link readMessage} for a value already parsed. */
export function checkMessage(value: unknown): { message: JSONRPCMessage } | { refused: JsonRpcErrorReply } {
  if (Array.isArray(value)) {
    return {
      refused: errorReply(
        INVALID_REQUEST,
        "Invalid Request: batches are not supported; send one message at a time",
      ),
    };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data as JSONRPCMessage };
  const id = (value as { id?: unknown } | null)?.id;
  return {
    refused: errorReply(
      INVALID_REQUEST,
      'Invalid Request: not a JSON-RPC 2.0 request, notification or response (expected {"jsonrpc":"2.0","id":…,"method":…})',
      typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null,
    ),
  };
}
