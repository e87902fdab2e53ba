/**
 * MCP logging beside the stderr logs: each record a request's handler logs also goes to that
 * request's client as a `notifications/message` on the request's own response stream, so it reaches
 * the client that caused it and no other, and needs no standalone stream.
 *
 * Which records go depends on the era (docs/protocol.md "Logs to the client"):
 * - 2026-07-28: only when the request's `_meta` asks for a level (`io.modelcontextprotocol/logLevel`),
 *   at or above it; a request that asks for none gets none.
 * - The handshake era: at or above the level the connection chose with `logging/setLevel`; before
 *   that `warning`, so tool failures and warnings arrive unasked.
 * The client's level is independent of `LOG_LEVEL`: a client asking for `debug` gets debug records
 * even while stderr shows `info` and up.
 */
import type { LogFields, Logger, LogLevel } from "../log.ts";
import type { LoggingLevel, Server, ServerContext } from "./sdk.ts";

/** The level a handshake-era client gets until it sends `logging/setLevel`. */
export const DEFAULT_CLIENT_LOG_LEVEL: LoggingLevel = "warning";

/** The `logger` name in every notification. */
export const LOGGER_NAME = "checklist-mcp";

/** MCP's levels, least severe first (the specification's order, RFC 5424's names). */
export const LOGGING_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** The envelope key of the level a 2026-07-28 request asks for. */
const LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel";

const TO_MCP: Record<LogLevel, LoggingLevel> = {
  debug: "debug",
  info: "info",
  warn: "warning",
  error: "error",
};

/** The bridge of one MCP server (one connection, or one request). */
export interface LogBridge {
  /** A logger that writes through the base logger and forwards to the client of this request. */
  forRequest(ctx: ServerContext): Logger;
}

/**
 * The bridge of `server` (which declares the `logging` capability). In the handshake era it answers
 * `logging/setLevel` itself, so the level before any is {@link DEFAULT_CLIENT_LOG_LEVEL}.
 */
export function bridgeLogs(server: Server, base: Logger, era: "legacy" | "modern"): LogBridge {
  let level: LoggingLevel = DEFAULT_CLIENT_LOG_LEVEL;
  if (era === "legacy") {
    server.setRequestHandler("logging/setLevel", (request) => {
      level = request.params.level;
      return {};
    });
  }
  const thresholdOf = (ctx: ServerContext): LoggingLevel | undefined => {
    if (era === "legacy") return level;
    const asked: unknown = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
    return LOGGING_LEVELS.includes(asked as LoggingLevel) ? asked as LoggingLevel : undefined;
  };

  const make = (logger: Logger, ctx: ServerContext, bound: LogFields): Logger => {
    const threshold = thresholdOf(ctx);
    const emit = (lvl: LogLevel) => (msg: string, fields: LogFields = {}) => {
      logger[lvl](msg, fields);
      const mcpLevel = TO_MCP[lvl];
      if (threshold === undefined || LOGGING_LEVELS.indexOf(mcpLevel) < LOGGING_LEVELS.indexOf(threshold)) {
        return;
      }
      // A client that went away cannot be told; the record is on stderr all the same.
      ctx.mcpReq.notify({
        method: "notifications/message",
        params: { level: mcpLevel, logger: LOGGER_NAME, data: plain({ message: msg, ...bound, ...fields }) },
      }).catch(() => {});
    };
    return {
      debug: emit("debug"),
      info: emit("info"),
      warn: emit("warn"),
      error: emit("error"),
      child: (fields) => make(logger.child(fields), ctx, { ...bound, ...fields }),
    };
  };

  return {
    forRequest: (ctx) => make(base, ctx, {}),
  };
}

/** The record as plain JSON (errors as `{ name, message }`); just the message when it cannot be. */
function plain(data: LogFields): LogFields {
  try {
    return JSON.parse(
      JSON.stringify(
        data,
        (_key, value) =>
          value instanceof Error
            ? { name: value.name, message: value.message }
            : typeof value === "bigint"
            ? String(value)
            : value,
      ),
    );
  } catch {
    return { message: data.message };
  }
}
