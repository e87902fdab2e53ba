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

/** What {@link guardErrorReplies} wraps: any SDK transport. */
interface Sender {
  send(message: JSONRPCMessage, options?: unknown): Promise<void>;
}

/**
 * Makes every error reply `transport` sends say what was wrong in one plain line, never an
 * exception's text: the SDK answers parameters its schemas refuse with `-32603` and the validator's
 * JSON dump as the message, and any exception a handler throws with its message. A validator dump
 * becomes `-32602` naming the first field; any other internal error becomes "Internal error", its
 * text going to `log` only. Call before `connect()`.
 */
export function guardErrorReplies(
  transport: Sender,
  log: { error(msg: string, fields?: object): void },
): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const error = (message as { error?: { code: number; message: string; data?: unknown } }).error;
    if (!error) return send(message, options);
    const plain = plainError(error);
    if (plain.code === -32603 && error.message !== plain.message) {
      log.error("request failed", { error: error.message });
    }
    return send({ ...message, error: plain } as JSONRPCMessage, options);
  };
}

/** See {@link guardErrorReplies}. */
export function plainError(error: { code: number; message: string }): { code: number; message: string } {
  const issue = validatorIssue(error.message);
  if (issue) {
    const path = issue.path.filter((p, i) => !(i === 0 && p === "params")).map(String).join(".");
    return {
      code: -32602,
      message: `Invalid params: ${path === "" ? "params" : `\`${path}\``}: ${oneLine(issue.message)}`,
    };
  }
  if (error.code === -32603) {
    return { code: -32603, message: "Internal error; the server log has the details" };
  }
  return { code: error.code, message: oneLine(error.message) };
}

function validatorIssue(text: string): { path: unknown[]; message: string } | undefined {
  const start = text.indexOf("[");
  if (start === -1) return undefined;
  try {
    const issues = JSON.parse(text.slice(start));
    const first = Array.isArray(issues) ? issues[0] : undefined;
    if (first && Array.isArray(first.path) && typeof first.message === "string") return first;
  } catch {
    // Not a validator's dump.
  }
  return undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
