/**
 * MCP logging beside the stderr logs: each record a request's handler logs also goes to that
 * request's client as a `notifications/message`, at or above the level the client chose with
 * `logging/setLevel` (before that: `warning`, so tool failures and warnings arrive unasked).
 *
 * Records travel on the request's own response stream, so they reach the client that caused them
 * and no other (no client sees another's sessions or data), work in stateless mode, and need no
 * standalone SSE stream. The client's level is independent of `LOG_LEVEL`: a client asking for
 * `debug` gets debug records even while stderr shows `info` and up.
 */
import type { LogFields, Logger, LogLevel } from "../log.ts";
import type { LoggingLevel, LoggingMessageNotification } from "./sdk.ts";
import { LOGGING_LEVELS, SetLevelRequestSchema } from "./request_schemas.ts";
import type { ProtocolServer } from "./protocol_server.ts";

/** The level a client gets until it sends `logging/setLevel`. */
export const DEFAULT_CLIENT_LOG_LEVEL: LoggingLevel = "warning";

/** The `logger` name in every notification. */
export const LOGGER_NAME = "checklist-mcp";

const TO_MCP: Record<LogLevel, LoggingLevel> = {
  debug: "debug",
  info: "info",
  warn: "warning",
  error: "error",
};

/** Where a request's notifications go: the `extra` argument of an SDK request handler fits. */
export interface RequestChannel {
  sendNotification: (notification: LoggingMessageNotification) => Promise<void>;
}

/** The bridge of one MCP server (one connection, or one request when stateless). */
export interface LogBridge {
  /** A logger that writes through the base logger and forwards to the client of this request. */
  forRequest(channel: RequestChannel): Logger;
}

/** Answers `logging/setLevel` on `mcp` (which declares the `logging` capability) and returns the bridge. */
export function bridgeLogs(mcp: ProtocolServer, base: Logger): LogBridge {
  let level: LoggingLevel = DEFAULT_CLIENT_LOG_LEVEL;
  mcp.setRequestHandler(SetLevelRequestSchema, (request) => {
    level = request.params.level;
    return {};
  });
  const wanted = (recordLevel: LoggingLevel) =>
    LOGGING_LEVELS.indexOf(recordLevel) >= LOGGING_LEVELS.indexOf(level);

  const make = (logger: Logger, channel: RequestChannel, bound: LogFields): Logger => {
    const emit = (lvl: LogLevel) => (msg: string, fields: LogFields = {}) => {
      logger[lvl](msg, fields);
      const mcpLevel = TO_MCP[lvl];
      if (!wanted(mcpLevel)) return;
      const notification: LoggingMessageNotification = {
        method: "notifications/message",
        params: { level: mcpLevel, logger: LOGGER_NAME, data: plain({ message: msg, ...bound, ...fields }) },
      };
      // A client that went away cannot be told; the record is on stderr all the same.
      channel.sendNotification(notification).catch(() => {});
    };
    return {
      debug: emit("debug"),
      info: emit("info"),
      warn: emit("warn"),
      error: emit("error"),
      child: (fields) => make(logger.child(fields), channel, { ...bound, ...fields }),
    };
  };

  return {
    forRequest: (channel) => make(base, channel, {}),
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
