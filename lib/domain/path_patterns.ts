/**
 * Path patterns (docs/teams.md "Paths and reservations"): what a pattern may be, its normal form,
 * and whether a path matches one.
 *
 * A pattern is a repo-relative path with `/` between segments; `*` matches any characters inside one
 * segment, `?` one character, and a segment that is exactly `**` matches zero or more whole segments.
 * A trailing `/` means everything below (`docs/` is `docs/**`), a leading `./` is dropped, matching is
 * case-sensitive, and nothing else is special (no escapes, no classes, no braces): a `*` or `?` in a
 * file name is a wildcard here. Whether two patterns overlap is path_overlap.ts.
 */
import { fail } from "./errors.ts";
import { LIMITS } from "./limits.ts";

/** The segment that matches zero or more whole segments. */
export const GLOBSTAR = "**";

/** What a pattern is, in words (messages). */
export const PATTERN_RULE =
  "a pattern is a repo-relative path with / between segments: * matches within a segment, ? one character, ** as a whole segment any depth, a trailing / everything below";

/** Why `pattern` (as given) is not a valid pattern, or undefined when it is. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return "it is empty";
  if (pattern.includes("\\")) return "it holds a \\ (use / between segments)";
  if (pattern.startsWith("/")) return "it starts with / (patterns are relative to the repository's top)";
  const body = stripDotSlash(pattern);
  if (body.length === 0) return "it names no path (write ** for everything)";
  const segments = body.split("/");
  if (body.endsWith("/")) segments.pop();
  for (const segment of segments) {
    if (segment === "") return "it has an empty segment (//)";
    if (segment === "." || segment === "..") return `it has a "${segment}" segment`;
    if (segment !== GLOBSTAR && segment.includes(GLOBSTAR)) {
      return `"${segment}" holds ** inside a longer segment (** stands alone between slashes)`;
    }
  }
  return undefined;
}

/**
 * The normal form of a valid pattern: leading `./` dropped, a trailing `/` written `/**`, runs of `**`
 * segments written once (`a/**\/**` is `a/**`: the same paths). Throws `INVALID_INPUT` naming the
 * pattern when it is not valid, `LIMIT_EXCEEDED` when its normal form is longer than `maxLength`
 * ({@link LIMITS}.patternLength for a task's paths; a path asked about may be longer).
 */
export function normalizePattern(pattern: string, maxLength: number = LIMITS.patternLength): string {
  const problem = patternProblem(pattern);
  if (problem) {
    fail("INVALID_INPUT", `Invalid path pattern ${JSON.stringify(pattern)}: ${problem}; ${PATTERN_RULE}.`);
  }
  let body = stripDotSlash(pattern);
  if (body.endsWith("/")) body += GLOBSTAR;
  const out: string[] = [];
  for (const segment of body.split("/")) {
    if (segment === GLOBSTAR && out.at(-1) === GLOBSTAR) continue;
    out.push(segment);
  }
  const normal = out.join("/");
  if (normal.length > maxLength) {
    fail(
      "LIMIT_EXCEEDED",
      `Path pattern ${JSON.stringify(pattern)} is ${normal.length} characters once normalised (${
        JSON.stringify(normal.slice(0, 40))
      }…); at most ${LIMITS.patternLength}. Name a directory above it with a trailing /.`,
    );
  }
  return normal;
}

/**
 * A task's `paths` as stored: each pattern normalised (see {@link normalizePattern}), duplicates
 * dropped, order kept. More than {@link LIMITS}.pathsPerTask is `LIMIT_EXCEEDED`; `owner` names the
 * task in messages (`"api"`).
 */
export function normalizePaths(patterns: readonly string[], owner: string): string[] {
  if (patterns.length > LIMITS.pathsPerTask) {
    fail(
      "LIMIT_EXCEEDED",
      `paths of ${owner} lists ${patterns.length} patterns; at most ${LIMITS.pathsPerTask}. Name directories (src/api/) instead of files.`,
    );
  }
  const out: string[] = [];
  for (const pattern of patterns) {
    const normal = normalizePattern(pattern);
    if (!out.includes(normal)) out.push(normal);
  }
  return out;
}

/** Whether the segment of a valid pattern has a wildcard (`*` or `?`); `**` has. */
export function isGlob(segment: string): boolean {
  return segment.includes("*") || segment.includes("?");
}

/**
 * Whether `path` (a repo-relative path, `/` between its segments) matches the normalised `pattern`.
 * Nothing in `path` is special: a `*` in it is the character. Linear in the path for the usual
 * patterns; a pattern with several `**` segments is matched by dynamic programming, never exponentially.
 */
export function matchesPath(path: string, pattern: string): boolean {
  const parts = path.split("/");
  const globs = pattern.split("/");
  // reach[i]: pattern segments 0..j-1 can match path segments 0..i-1; one row per pattern segment.
  let reach: boolean[] = new Array(parts.length + 1).fill(false);
  reach[0] = true;
  for (const glob of globs) {
    const next: boolean[] = new Array(parts.length + 1).fill(false);
    if (glob === GLOBSTAR) {
      let any = false;
      for (let i = 0; i <= parts.length; i++) {
        any ||= reach[i]!;
        next[i] = any;
      }
    } else {
      for (let i = 0; i < parts.length; i++) {
        if (reach[i] && segmentMatches(parts[i]!, glob)) next[i + 1] = true;
      }
    }
    reach = next;
  }
  return reach[parts.length]!;
}

/**
 * Whether one path segment matches one segment of a pattern (`*` any run of characters, `?` one):
 * the greedy matcher that backtracks only to the last `*`, linear in practice, quadratic at worst.
 * A character is a code point (`?` matches one emoji).
 */
export function segmentMatches(segmentText: string, globText: string): boolean {
  const segment = characters(segmentText);
  const glob = characters(globText);
  let s = 0;
  let g = 0;
  let star = -1;
  let resume = 0;
  while (s < segment.length) {
    const c = glob[g];
    if (c === "*") {
      star = g++;
      resume = s;
    } else if (c !== undefined && (c === "?" || c === segment[s])) {
      s++;
      g++;
    } else if (star >= 0) {
      g = star + 1;
      s = ++resume;
    } else {
      return false;
    }
  }
  while (glob[g] === "*") g++;
  return g === glob.length;
}

function stripDotSlash(pattern: string): string {
  let body = pattern;
  while (body.startsWith("./")) body = body.slice(2);
  return body;
}

/**
 * A string as something indexed by character: itself when it holds no surrogate (each UTF-16 unit
 * is then a code point, the usual case, without a copy), else its code points.
 */
export function characters(text: string): string | readonly string[] {
  return /[\ud800-\udfff]/.test(text) ? Array.from(text) : text;
}
