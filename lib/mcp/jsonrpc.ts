/**
 * Reading one JSON-RPC message from text, as a transport must before the protocol sees it: a
 * message, or the error reply the sender gets instead (JSON-RPC 2.0 section 5.1 codes).
 */
import {
  errorReply,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcErrorReply,
  PARSE_ERROR,
  RpcError,
} from "./rpc_errors.ts";
import type { JSONRPCMessage } from "./sdk.ts";

/**
 * The message `text` holds, or the reply it gets instead: {@link PARSE_ERROR} when it is not JSON,
 * {@link INVALID_REQUEST} for a batch (one message per line) and for JSON that is not a request, notification or response.
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
  if (isMessage(value)) return { message: value };
  const id = (value as { id?: unknown } | null)?.id;
  return {
    refused: errorReply(
      INVALID_REQUEST,
      'Invalid Request: not a JSON-RPC 2.0 request, notification or response (expected {"jsonrpc":"2.0","id":…,"method":…})',
      typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null,
    ),
  };
}

/**
 * Whether `value` is a JSON-RPC 2.0 message as MCP has them: a request, a notification, a result or
 * an error, with no other member. Checked by hand, not with the SDK's `JSONRPCMessageSchema` (its
 * module builds every MCP schema at load); tests/mcp/jsonrpc_test.ts holds the two to the same
 * answers over arbitrary values.
 */
export function isMessage(value: unknown): value is JSONRPCMessage {
  if (!isObject(value) || value.jsonrpc !== "2.0") return false;
  const has = (...members: string[]) => Object.keys(value).every((key) => members.includes(key));
  if ("method" in value) {
    if (typeof value.method !== "string" || !("params" in value ? isMetaHolder(value.params) : true)) {
      return false;
    }
    return "id" in value
      ? isId(value.id) && has("jsonrpc", "id", "method", "params")
      : has("jsonrpc", "method", "params");
  }
  if ("result" in value) {
    return isId(value.id) && isMetaHolder(value.result) && has("jsonrpc", "id", "result");
  }
  if ("error" in value) {
    const error = value.error;
    return (!("id" in value) || isId(value.id)) && isObject(error) && Number.isSafeInteger(error.code) &&
      typeof error.message === "string" && has("jsonrpc", "id", "error");
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is string | number {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** A request's or notification's `params`, or a result: an object whose `_meta`, if any, is MCP's. */
function isMetaHolder(value: unknown): boolean {
  return isObject(value) && (!("_meta" in value) || isMeta(value._meta));
}

function isMeta(value: unknown): boolean {
  if (!isObject(value)) return false;
  if ("progressToken" in value && !isId(value.progressToken)) return false;
  const task = value["io.modelcontextprotocol/related-task"];
  return task === undefined || (isObject(task) && typeof task.taskId === "string");
}

/** What {@link guardErrorReplies} wraps: any SDK transport. */
interface Sender {
  send(message: JSONRPCMessage, options?: unknown): Promise<void>;
}

/**
 * Makes every error reply `transport` sends say what was wrong in one plain line, never an
 * exception's text: the SDK answers parameters its schemas refuse with {@link INTERNAL_ERROR} and the
 * validator's JSON dump as the message, and any exception a handler throws with its message. A validator
 * dump becomes {@link INVALID_PARAMS} naming the first field; any other internal error becomes "Internal error", its
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
    if (plain.code === INTERNAL_ERROR && error.message !== plain.message) {
      log.error("request failed", { error: error.message });
    }
    return send({ ...message, error: plain } as JSONRPCMessage, options);
  };
}

/** The reply to params a request's schema refused: {@link INVALID_PARAMS} naming the first field. */
export function invalidParams(issue: { path: readonly PropertyKey[]; message: string }): RpcError {
  return new RpcError(INVALID_PARAMS, invalidParamsText(issue));
}

function invalidParamsText(issue: { path: readonly unknown[]; message: string }): string {
  const path = issue.path.filter((p, i) => !(i === 0 && p === "params")).map(String).join(".");
  return `Invalid params: ${path === "" ? "params" : `\`${path}\``}: ${oneLine(issue.message)}`;
}

/** See {@link guardErrorReplies}. */
export function plainError(error: { code: number; message: string }): { code: number; message: string } {
  const issue = validatorIssue(error.message);
  if (issue) return { code: INVALID_PARAMS, message: invalidParamsText(issue) };
  if (error.code === INTERNAL_ERROR) {
    return { code: INTERNAL_ERROR, message: "Internal error; the server log has the details" };
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
