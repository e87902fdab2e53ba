/**
 * Why the commit guard stopped short of a verdict (docs/guard.md "Exit codes"): flags it cannot use
 * (`usage`, exit 2), or nothing it could check against (`unreachable`: no git work tree, no store, a
 * store or endpoint that did not answer in time; exit 0, or 2 with `--strict`).
 */

/** What kind of stop a {@link GuardError} is. */
export type GuardStop = "usage" | "unreachable";

/**
 * The guard could not check. A `usage` message is what it prints (the problem and the usage line); an
 * `unreachable` one is the reason alone, which guard_report.ts puts in its one line.
 */
export class GuardError extends Error {
  /** See {@link GuardStop}. */
  readonly kind: GuardStop;

  constructor(kind: GuardStop, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "GuardError";
    this.kind = kind;
  }
}
