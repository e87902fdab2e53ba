/**
 * What the app asks of the listener of `deno run` (lib/listener/serve.ts), which knows nothing of MCP:
 * the deadlines of a request's head and body ({@link BODY_TIMEOUT_MS}, the app's own), and the body of
 * the answers the listener gives itself, written as the app writes its refusals (a JSON-RPC error
 * body, the HTTP status saying which), so a client sees one kind of error whichever of them answered.
 */
import type { ServeOptions } from "../listener/serve.ts";
import type { RefusalAnswer } from "../listener/http1_refusal.ts";
import { errorReply, SERVER_ERROR } from "../mcp/rpc_errors.ts";
import { ProtocolErrorCode } from "../mcp/sdk.ts";
import { BODY_TIMEOUT_MS } from "./body.ts";

/** The listener's answer as a JSON-RPC error body: `500` is an internal error, anything else a refusal. */
export function jsonRpcRefusal(status: number, message: string): RefusalAnswer {
  const code = status === 500 ? ProtocolErrorCode.InternalError : SERVER_ERROR;
  return { type: "application/json", text: JSON.stringify(errorReply(code, message)) };
}

/** The options the app's listener is served with, beside its address, handler and log. */
export const LISTENER_OPTIONS: Readonly<
  Pick<ServeOptions, "bodyTimeoutMs" | "headersTimeoutMs" | "refusal">
> = {
  bodyTimeoutMs: BODY_TIMEOUT_MS,
  headersTimeoutMs: BODY_TIMEOUT_MS,
  refusal: jsonRpcRefusal,
};
