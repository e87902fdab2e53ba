/**
 * What the commit guard says and how it exits (docs/guard.md "Exit codes"), pure: a check's conflicts
 * become a list on stderr and exit 1 (0 with `--warn`); a check that could not be made is one line and
 * exit 0 (2 with `--strict`); bad flags are exit 2. A clean check says nothing.
 */
import { LIMITS } from "../domain/limits.ts";
import type { PathConflict } from "../domain/schemas.ts";
import type { StagedPath } from "./staged_paths.ts";

/** How a guard run ended, before it is put into words. */
export type GuardOutcome =
  | { kind: "checked"; conflicts: readonly PathConflict[]; staged: readonly StagedPath[] }
  | { kind: "unreachable"; reason: string }
  | { kind: "usage"; message: string };

/** Exit codes of `checklist-mcp guard` (docs/guard.md). */
export const GUARD_EXIT = {
  /** Nothing reserved by others (or `--warn`), or nothing could be checked without `--strict`. */
  ok: 0,
  /** Staged paths fall under other agents' live reservations. */
  conflicts: 1,
  /** Bad flags; or, with `--strict`, nothing could be checked. */
  notChecked: 2,
} as const;

/** What the guard prints on stderr (lines) and its exit code. */
export interface GuardVerdict {
  code: number;
  lines: string[];
}

/** Options of {@link guardVerdict}. */
export interface VerdictOptions {
  warn: boolean;
  strict: boolean;
  /** The session checked, named in the heading. */
  session: string;
  /** The clock that says how long each lease has left. */
  now: number;
}

const PREFIX = "checklist-mcp guard:";

/** The guard's exit code and words for `outcome`. */
export function guardVerdict(outcome: GuardOutcome, options: VerdictOptions): GuardVerdict {
  if (outcome.kind === "usage") return { code: GUARD_EXIT.notChecked, lines: [outcome.message] };
  if (outcome.kind === "unreachable") {
    return options.strict
      ? {
        code: GUARD_EXIT.notChecked,
        lines: [`${PREFIX} cannot check (${outcome.reason}); refusing, as --strict asks.`],
      }
      : { code: GUARD_EXIT.ok, lines: [`${PREFIX} cannot check (${outcome.reason}); nothing was checked.`] };
  }
  if (outcome.conflicts.length === 0) return { code: GUARD_EXIT.ok, lines: [] };
  const lines = conflictLines(outcome.conflicts, outcome.staged, options);
  const one = new Set(outcome.conflicts.map((c) => `${c.agent}\0${c.task_id}`)).size === 1;
  lines.push(
    options.warn
      ? "Going ahead anyway (--warn)."
      : `Commit refused: wait until ${one ? "that task is" : "those tasks are"} done or ${
        one ? "its lease runs" : "their leases run"
      } out, or leave the paths out (git restore --staged PATH). git commit --no-verify skips this check.`,
  );
  return { code: options.warn ? GUARD_EXIT.ok : GUARD_EXIT.conflicts, lines };
}

/** The heading and one line per conflict (the first {@link LIMITS}.guardLines; the rest counted). */
function conflictLines(
  conflicts: readonly PathConflict[],
  staged: readonly StagedPath[],
  options: VerdictOptions,
): string[] {
  const deleted = new Set(staged.filter((s) => s.status === "D").map((s) => s.path));
  const paths = new Set(conflicts.map((c) => c.path)).size;
  const agents = new Set(conflicts.map((c) => c.agent)).size;
  const heading = `${PREFIX} ${paths === 1 ? "1 staged path is" : `${paths} staged paths are`} reserved by ` +
    `${agents === 1 ? "another agent" : `${agents} other agents`} in session ${
      JSON.stringify(options.session)
    }:`;
  const lines = [heading];
  for (const c of conflicts.slice(0, LIMITS.guardLines)) {
    const what = `${shown(c.path)}${deleted.has(c.path) ? " (deleted)" : ""}`;
    lines.push(
      `  ${what}: agent "${c.agent}" reserves ${shown(c.pattern)} for task ${JSON.stringify(c.task_name)} (${
        shown(c.task_id)
      }), ${timeLeft(c.expires_at, options.now)}`,
    );
  }
  const more = conflicts.length - LIMITS.guardLines;
  if (more > 0) lines.push(`  … and ${more} more`);
  return lines;
}

/** A path or id as it is, or quoted when it holds a control character (a newline, an escape). */
function shown(text: string): string {
  // deno-lint-ignore no-control-regex
  return /[\u0000-\u001f\u007f-\u009f]/.test(text) ? JSON.stringify(text) : text;
}

/**
 * How long a lease ending at `expiresAt` has left at `now`, for people: `45 s left`, `12 min left`,
 * `2 h 5 min left`; `ending now` once it is due (a server's clock may run a little behind ours).
 */
export function timeLeft(expiresAt: string, now: number): string {
  const ms = Date.parse(expiresAt) - now;
  if (!(ms > 0)) return "ending now";
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${seconds} s left`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min left`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h left` : `${hours} h ${rest} min left`;
}
