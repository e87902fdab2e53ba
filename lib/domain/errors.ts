/** The stable error codes a client can branch on (docs/tools.md; docs/requirements.md C1). */
export const ERROR_CODES = [
  "INVALID_INPUT",
  "NOT_FOUND",
  "DUPLICATE_ID",
  "EXECUTION_ORDER_VIOLATION",
  "UNFINISHED_SUBTASKS",
  "LIMIT_EXCEEDED",
  "FORBIDDEN",
  "CLAIMED",
  "RESERVED",
  "STORE_UNAVAILABLE",
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = typeof ERROR_CODES[number];

/**
 * A refusal by the domain: the operation changed nothing.
 *
 * The message says what failed and what state caused it; each edge (MCP, HTTP) translates the code.
 */
export class DomainError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = "DomainError";
    this.code = code;
  }
}

/** Shorthand for `new DomainError(code, message)` in expression position. */
export function fail(code: ErrorCode, message: string): never {
  throw new DomainError(code, message);
}
