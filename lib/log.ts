/**
 * Structured logs: one JSON object per line on stderr (stdout carries the stdio protocol).
 * MCP log notifications wrap a logger per request (`mcp/log_bridge.ts`).
 */

/** Log levels, least to most severe. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = typeof LOG_LEVELS[number];

/** A log record's fields besides level and message. */
export type LogFields = Record<string, unknown>;

/** A small structured logger. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every record and shares the sinks. */
  child(fields: LogFields): Logger;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; stderr by default. */
  write?: (line: string) => void;
}

/** A logger writing JSON lines at `level` and above. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const min = LOG_LEVELS.indexOf(options.level ?? "info");
  const encoder = new TextEncoder();
  const write = options.write ?? ((line: string) => {
    try {
      Deno.stderr.writeSync(encoder.encode(line + "\n"));
    } catch {
      // stderr is gone (its reader closed it): a log line is never worth the process.
    }
  });
  const make = (bound: LogFields): Logger => {
    const log = (level: LogLevel) => (msg: string, fields: LogFields = {}) => {
      if (LOG_LEVELS.indexOf(level) < min) return;
      const all = { ...bound, ...fields };
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...all }, errorReplacer));
    };
    return {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
      child: (fields) => make({ ...bound, ...fields }),
    };
  };
  return make({});
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
