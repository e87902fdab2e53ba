/**
 * `git status --porcelain=v2 --branch -z`, parsed: the branch headers and one entry per changed,
 * renamed, unmerged, untracked or ignored path. Pure: text in, values out (the run is run_git.ts's).
 *
 * With `-z` every header and entry ends with NUL and paths are written as they are (no quoting), so a
 * path may hold spaces or newlines; a rename or copy is followed by its original path as one more
 * NUL-terminated field. Paths are relative to the work tree's top, whatever the directory git ran in.
 */

/** What kind of entry a line is: `1` changed, `2` renamed or copied, `u` unmerged, `?` untracked, `!` ignored. */
export type StatusKind = "changed" | "renamed" | "unmerged" | "untracked" | "ignored";

/** One path git status reports. */
export interface StatusEntry {
  kind: StatusKind;
  /** The path now (for a rename, the new name). */
  path: string;
  /** The staged and unstaged states (`XY`, e.g. `.M`, `R.`, `UU`); absent for untracked and ignored paths. */
  xy?: string;
  /** A rename or copy: the path it came from. */
  from?: string;
}

/** The parsed output. */
export interface GitStatus {
  /** The commit HEAD names; absent before the first commit (`(initial)`). */
  head?: string;
  /** The branch checked out; absent when HEAD is detached. */
  branch?: string;
  /** The branch's upstream (`origin/main`), when one is set. */
  upstream?: string;
  /** Commits on the branch and not on its upstream; absent when the upstream is gone or unset. */
  ahead?: number;
  /** Commits on the upstream and not on the branch. */
  behind?: number;
  /** The entries in git's order: changed, renamed and unmerged paths in path order, then untracked, then ignored. */
  entries: StatusEntry[];
}

/** Fields before the path, per entry type (`1 XY sub mH mI mW hH hI path`, …). */
const FIELDS_BEFORE_PATH: Record<string, number> = { "1": 8, "2": 9, "u": 10 };
const KINDS: Record<string, StatusKind> = {
  "1": "changed",
  "2": "renamed",
  "u": "unmerged",
  "?": "untracked",
  "!": "ignored",
};

/** A malformed output: git said something this parser does not know. */
export class StatusParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StatusParseError";
  }
}

/**
 * Parses the output of `git status --porcelain=v2 --branch -z`. Unknown headers (`# stash`, those of
 * a later git) are skipped; an entry of an unknown type, or one cut short, is a {@link StatusParseError}.
 */
export function parseStatus(output: string): GitStatus {
  const status: GitStatus = { entries: [] };
  const fields = output.split("\0");
  // The output ends with NUL, so the last field is empty.
  if (fields.at(-1) === "") fields.pop();
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.startsWith("# ")) {
      header(status, field.slice(2));
      continue;
    }
    const type = field.slice(0, 1);
    const kind = KINDS[type];
    if (!kind || field[1] !== " ") {
      throw new StatusParseError(`unknown status entry ${JSON.stringify(field)}`);
    }
    if (kind === "untracked" || kind === "ignored") {
      status.entries.push({ kind, path: field.slice(2) });
      continue;
    }
    const { xy, path } = splitPath(field, FIELDS_BEFORE_PATH[type]!);
    const entry: StatusEntry = { kind, path, xy };
    if (kind === "renamed") {
      const from = fields[++i];
      if (from === undefined) {
        throw new StatusParseError(`rename of ${JSON.stringify(path)} without its origin`);
      }
      entry.from = from;
    }
    status.entries.push(entry);
  }
  return status;
}

/** A branch header: `branch.oid`, `branch.head`, `branch.upstream`, `branch.ab`. */
function header(status: GitStatus, text: string): void {
  const space = text.indexOf(" ");
  const name = space === -1 ? text : text.slice(0, space);
  const value = space === -1 ? "" : text.slice(space + 1);
  if (name === "branch.oid") {
    if (value !== "(initial)") status.head = value;
  } else if (name === "branch.head") {
    if (value !== "(detached)") status.branch = value;
  } else if (name === "branch.upstream") {
    status.upstream = value;
  } else if (name === "branch.ab") {
    const match = /^\+(\d+) -(\d+)$/.exec(value);
    if (!match) throw new StatusParseError(`malformed branch.ab ${JSON.stringify(value)}`);
    status.ahead = Number(match[1]);
    status.behind = Number(match[2]);
  }
}

/** The `XY` field and the path after `count` space-separated fields (the path may hold spaces). */
function splitPath(field: string, count: number): { xy: string; path: string } {
  let at = 0;
  for (let n = 0; n < count; n++) {
    at = field.indexOf(" ", at) + 1;
    if (at === 0) throw new StatusParseError(`status entry cut short: ${JSON.stringify(field)}`);
  }
  const path = field.slice(at);
  if (path === "") throw new StatusParseError(`status entry without a path: ${JSON.stringify(field)}`);
  return { xy: field.slice(2, 4), path };
}
