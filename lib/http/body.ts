/**
 * Reading a `/mcp` request body: within a time limit, as one JSON-RPC message (or a batch of
 * them, which the SDK then answers), answering everything else with a JSON-RPC error of our own
 * wording (the SDK's transport would answer a non-message with the validator's text).
 */
import { LIMITS } from "../domain/limits.ts";
import { errorReply, notAMessage, SERVER_ERROR } from "../mcp/rpc_errors.ts";
import { parseJSONRPCMessage, ProtocolErrorCode } from "../mcp/sdk.ts";

/** How long a body may take to arrive by default: {@link LIMITS}.bodySeconds. */
export const BODY_TIMEOUT_MS = LIMITS.bodySeconds * 1000;

/** A body read as JSON-RPC, or the response that refuses it. */
export type BodyRead = { body: unknown; refused?: undefined } | { refused: Response };

/**
 * Reads `request`'s body as JSON-RPC within `timeoutMs`. Too slow: `408` (under `deno run` the
 * listener, lib/listener/serve.ts, has already answered and closed the connection by then). Not JSON:
 * `400` with a parse error; JSON that is not a message (or an empty batch): `400`, invalid request.
 * Other read errors (the body limit's) are thrown on.
 */
export async function readJsonRpcBody(
  request: Request,
  timeoutMs: number = BODY_TIMEOUT_MS,
): Promise<BodyRead> {
  let text: string | undefined;
  try {
    text = await readText(request, timeoutMs);
  } catch (error) {
    // The client went away mid-body (its connection broke): nobody reads this answer.
    if (request.signal.aborted) {
      return {
        refused: Response.json(errorReply(SERVER_ERROR, "Bad Request: the body was cut off"), {
          status: 400,
        }),
      };
    }
    throw error;
  }
  if (text === undefined) {
    return {
      refused: Response.json(
        errorReply(SERVER_ERROR, `Request Timeout: the body did not arrive within ${timeoutMs / 1000} s`),
        { status: 408, headers: { connection: "close" } },
      ),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      refused: Response.json(
        errorReply(ProtocolErrorCode.ParseError, "Parse error: the body is not valid JSON"),
        {
          status: 400,
        },
      ),
    };
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0) {
    return {
      refused: Response.json(
        errorReply(ProtocolErrorCode.InvalidRequest, "Invalid Request: an empty batch"),
        { status: 400 },
      ),
    };
  }
  for (const message of messages) {
    try {
      parseJSONRPCMessage(message);
    } catch {
      return { refused: Response.json(notAMessage(message), { status: 400 }) };
    }
  }
  return { body: value };
}

/** The body as text, or undefined when it has not fully arrived within `timeoutMs`. */
async function readText(request: Request, timeoutMs: number): Promise<string | undefined> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (true) {
      const chunk = await Promise.race([reader.read(), late]);
      if (chunk === "late") {
        reader.cancel().catch(() => {});
        return undefined;
      }
      if (chunk.done) return text + decoder.decode();
      text += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
}
