/**
 * The SDK's low-level `Server` with two edges of ours, both on the hook the SDK gives subclasses for
 * wrapping request handlers (`_wrapHandler`); server.ts builds every server on it.
 *
 * - `tools/call` with arguments that are not an object (or without a tool name) reaches the tool,
 *   which refuses them with an `INVALID_INPUT` result as it refuses any bad argument (no name: invalid
 *   params in one line), where the SDK would refuse them unread with its validator's dump. The call
 *   still passes through the SDK's own wrapper with the arguments set aside, so the SDK checks the
 *   request and validates the result on this path as on every other.
 * - An error a handler throws reaches the client in one plain line: a validator's dump (the SDK's
 *   message, which {@link validatorIssue} reads) becomes invalid params naming the first field, and an
 *   exception that is not a protocol error becomes "Internal error" with its text in the log only
 *   (docs/requirements.md I8: no reply carries an exception's text); in the handshake era its message
 *   starts `MCP error CODE: `, as SDK v1 wrote it.
 *
 * tests/mcp/sdk_pins_test.ts fails if the SDK rewords the dump or stops validating results here.
 */
import type { Logger } from "../log.ts";
import { invalidParams } from "./catalog.ts";
import {
  type CallToolResult,
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
} from "./sdk.ts";

/**
 * Which era a server serves: `modern` (2026-07-28) or `legacy` (the handshake era, 2024-11-05 to
 * 2025-11-25).
 */
export type Era = "legacy" | "modern";

/** A JSON-RPC request id, as the SDK hands it to a handler. */
type RequestId = ServerContext["mcpReq"]["id"];

/** See the module doc. */
export class ChecklistServer extends Server {
  readonly #log: Logger;
  readonly #era: Era;
  /** Arguments that are not an object, set aside by request while their `tools/call` runs. */
  readonly #setAside = new Map<RequestId, unknown>();
  /** Answers a `tools/call` (set by server.ts). */
  answerCall: (name: string, args: unknown, ctx: ServerContext) => Promise<CallToolResult> = () =>
    Promise.reject(new Error("no tools"));

  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1] & { log: Logger; era: Era },
  ) {
    const { log, era, ...rest } = options;
    super(info, rest);
    this.#log = log;
    this.#era = era;
  }

  /** The arguments of the `tools/call` of `ctx` as its client sent them (`parsed`, unless set aside). */
  argumentsOf(ctx: ServerContext, parsed: unknown): unknown {
    return this.#setAside.has(ctx.mcpReq.id) ? this.#setAside.get(ctx.mcpReq.id) : parsed;
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Record<string, unknown>>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Record<string, unknown>> {
    const wrapped = super._wrapHandler(method, handler);
    const tools = method === "tools/call";
    return async (request, ctx) => {
      try {
        if (tools) {
          const params = request.params as { name?: unknown; arguments?: unknown } | undefined;
          if (typeof params?.name !== "string") {
            throw invalidParams("tools/call needs params.name, a tool name from tools/list");
          }
          const args = params.arguments;
          if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
            // The SDK would refuse them unread; the tool refuses them as it refuses any bad argument.
            this.#setAside.set(request.id, args);
            try {
              return await wrapped({ ...request, params: { ...params, arguments: {} } }, ctx);
            } finally {
              this.#setAside.delete(request.id);
            }
          }
        }
        return await wrapped(request, ctx);
      } catch (error) {
        throw this.#plain(error);
      }
    };
  }

  /** See the module doc: the error as the client gets it. */
  #plain(error: unknown): ProtocolError {
    const message = error instanceof Error ? error.message : String(error);
    const issue = validatorIssue(message);
    if (issue) return invalidParams(invalidParamsText(issue));
    if (error instanceof ProtocolError && error.code !== ProtocolErrorCode.InternalError) {
      // The handshake era's messages read as SDK v1's McpError wrote them: 2025 clients see no difference.
      const prefix = this.#era === "legacy" ? `MCP error ${error.code}: ` : "";
      if (!/\n/.test(error.message) && prefix === "") return error;
      return new ProtocolError(error.code, prefix + oneLine(error.message), error.data);
    }
    this.#log.error("request failed", { error });
    return new ProtocolError(
      ProtocolErrorCode.InternalError,
      "Internal error; the server log has the details",
    );
  }
}

/**
 * The first issue of a validator's dump in an SDK error message: the message ends with the issues as
 * JSON (`[{ "path": [...], "message": "..." }, ...]`), as the SDK writes a request or result its schema
 * refuses; undefined for any other message.
 */
export function validatorIssue(text: string): { path: unknown[]; message: string } | undefined {
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

function invalidParamsText(issue: { path: readonly unknown[]; message: string }): string {
  const path = issue.path.filter((p, i) => !(i === 0 && p === "params")).map(String).join(".");
  return `Invalid params: ${path === "" ? "params" : `\`${path}\``}: ${oneLine(issue.message)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
