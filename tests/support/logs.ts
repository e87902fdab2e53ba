/** Loggers for tests: one that drops everything, one that keeps every record it is given. */
import { createLogger, type Logger } from "../../lib/log.ts";

/** A log record as written (one JSON line). */
export type LogRecord = { level: string; msg: string } & Record<string, unknown>;

/** A logger that drops everything (tests read replies, not logs). */
export function quietLogger(): Logger {
  return createLogger({ level: "error", write: () => {} });
}

/** The real logger at debug level, writing into `records` instead of stderr. */
export function recordingLogger(): { log: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const log = createLogger({ level: "debug", write: (line) => records.push(JSON.parse(line)) });
  return { log, records };
}
