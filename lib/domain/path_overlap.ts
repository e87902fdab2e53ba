/**
 * Whether two path patterns overlap (docs/teams.md "Paths and reservations"): whether some path
 * matches both. Decided exactly on the patterns, never on files on disk: a breadth-first search of the
 * product of the two patterns' automata over segments, where two segments meet when some segment
 * matches both, itself decided by the product of the two segments' automata over characters. The
 * search yields a witness, a path that matches both.
 *
 * A path has at least one segment and none is empty, `.` or `..` (no pattern can name those), so
 * `.?` and `?.` do not overlap: only `..` matches both. Patterns are taken normalised
 * (path_patterns.ts). Independent of the matcher there: the property tests set one against the other.
 *
 * Reservations test every pattern of a leaf against every pattern other agents reserve, so the
 * common cases are cheap: patterns are compiled once per stored list, literal segments at either end
 * are compared before any search, and the searches allocate plain arrays only (a small typed array
 * costs more to make than a whole search).
 */
import { characters, GLOBSTAR, isGlob } from "./path_patterns.ts";

/** One segment of a compiled pattern. */
interface Segment {
  readonly text: string;
  /** Its characters (code points), for the search over characters. */
  readonly chars: string | readonly string[];
  /** Whether it has a wildcard (`**` has). */
  readonly glob: boolean;
  readonly globstar: boolean;
  /** A segment it matches, made when first needed (see {@link instance}). */
  alone?: string;
}

/** A normalised pattern ready for overlap tests (see {@link compilePattern}). */
export interface CompiledPattern {
  /** The pattern as stored. */
  readonly source: string;
  readonly segments: readonly Segment[];
  /** Whether a segment is `**`. */
  readonly deep: boolean;
}

/** A normalised pattern, compiled for {@link overlapCompiled}. */
export function compilePattern(pattern: string): CompiledPattern {
  const segments = pattern.split("/").map((text): Segment => ({
    text,
    chars: characters(text),
    glob: isGlob(text),
    globstar: text === GLOBSTAR,
  }));
  return { source: pattern, segments, deep: segments.some((s) => s.globstar) };
}

/** Compiled lists by the list they came from: a task's stored `paths` is compiled once, not per call. */
const compiledLists = new WeakMap<readonly string[], readonly CompiledPattern[]>();

/**
 * The compiled patterns of a list of normalised patterns, memoised by the list object (a task's
 * `paths` is replaced, never changed in place, so a list compiles once however often it is read).
 */
export function compilePatterns(patterns: readonly string[]): readonly CompiledPattern[] {
  let list = compiledLists.get(patterns);
  if (!list) compiledLists.set(patterns, list = patterns.map(compilePattern));
  return list;
}

/** Whether some path matches both normalised patterns. */
export function patternsOverlap(a: string, b: string): boolean {
  return overlapCompiled(compilePattern(a), compilePattern(b)) !== undefined;
}

/**
 * A path that matches both normalised patterns (the shortest in steps of the search), or undefined
 * when no path does. `src/**\/*.ts` and `src/a.ts` give `src/a.ts`; `a/*\/c` and `a/b/*` give `a/b/c`.
 */
export function overlapWitness(a: string, b: string): string | undefined {
  return overlapCompiled(compilePattern(a), compilePattern(b));
}

/** {@link overlapWitness} on compiled patterns. */
export function overlapCompiled(a: CompiledPattern, b: CompiledPattern): string | undefined {
  const left = a.segments;
  const right = b.segments;
  if (!endsAgree(left, right)) return undefined;
  // The path's first and last segments match both patterns' first and last, unless one is `**`.
  if (!endsMeet(left[0]!, right[0]!) || !endsMeet(left.at(-1)!, right.at(-1)!)) return undefined;
  if (!a.deep && !b.deep) {
    // Without `**`, segment i of the path meets segment i of each pattern.
    if (left.length !== right.length) return undefined;
    const out: string[] = [];
    for (let i = 0; i < left.length; i++) {
      const segment = meet(left[i]!, right[i]!);
      if (segment === undefined) return undefined;
      out.push(segment);
    }
    return out.join("/");
  }
  return searchSegments(left, right);
}

/**
 * Whether the literal segments at both ends agree, up to the first segment with a wildcard on
 * either side: before it, path segment i is segment i of both patterns (and likewise from the end).
 */
function endsAgree(left: readonly Segment[], right: readonly Segment[]): boolean {
  const n = Math.min(left.length, right.length);
  for (let i = 0; i < n; i++) {
    const x = left[i]!;
    const y = right[i]!;
    if (x.glob || y.glob) break;
    if (x.text !== y.text) return false;
  }
  for (let i = 1; i <= n; i++) {
    const x = left[left.length - i]!;
    const y = right[right.length - i]!;
    if (x.glob || y.glob) break;
    if (x.text !== y.text) return false;
  }
  return true;
}

/** Whether two end segments (first with first, last with last) can match one path segment; `**` can always. */
function endsMeet(x: Segment, y: Segment): boolean {
  return x.globstar || y.globstar || (!x.glob && !y.glob) || meet(x, y) !== undefined;
}

/**
 * The search over segments. A state is a position in each pattern and whether a segment was read
 * yet (a path is never empty). `**` steps past itself for free, or reads any segment and stays; two
 * other segments read one segment that matches both.
 */
function searchSegments(left: readonly Segment[], right: readonly Segment[]): string | undefined {
  const n = left.length;
  const width = right.length + 1;
  const size = (n + 1) * width * 2;
  const from: number[] = new Array(size).fill(-2);
  const read: string[] = new Array(size).fill("");
  const queue: number[] = [0];
  from[0] = -1;
  const goal = (n * width + right.length) * 2 + 1;
  const met = new Map<number, string | undefined>();
  const step = (to: number, state: number, segment: string) => {
    if (from[to] !== -2) return;
    from[to] = state;
    read[to] = segment;
    queue.push(to);
  };
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    if (state === goal) return rebuild(state, from, read, "/");
    const i = Math.floor((state >> 1) / width);
    const j = (state >> 1) % width;
    const x = left[i];
    const y = right[j];
    if (x?.globstar) step(state + width * 2, state, "");
    if (y?.globstar) step(state + 2, state, "");
    if (x === undefined || y === undefined) continue;
    if (x.globstar && y.globstar) {
      step(state | 1, state, "x");
    } else if (x.globstar) {
      step((state | 1) + 2, state, instance(y)); // `**` reads y's segment and stays
    } else if (y.globstar) {
      step((state | 1) + width * 2, state, instance(x));
    } else {
      const key = i * width + j;
      if (!met.has(key)) met.set(key, meet(x, y));
      const segment = met.get(key);
      if (segment !== undefined) step((state | 1) + width * 2 + 2, state, segment);
    }
  }
  return undefined;
}

/**
 * A segment that matches `segment` (not empty, `.` or `..`): `?` read as `x`, `*` as nothing, or
 * the first `*` as `x` where nothing would leave no name. Remembered on the segment.
 */
function instance(segment: Segment): string {
  if (segment.alone !== undefined) return segment.alone;
  let out = segment.text.replaceAll("?", "x").replaceAll("*", "");
  if (out === "" || out === "." || out === "..") out = segment.text.replace("*", "x").replaceAll("*", "");
  return segment.alone = out;
}

/** A segment that matches both segments (neither `**`), or undefined. */
function meet(x: Segment, y: Segment): string | undefined {
  if (!x.glob && !y.glob) return x.text === y.text ? x.text : undefined;
  if (y.text === "*") return instance(x);
  if (x.text === "*") return instance(y);
  if (!x.glob) return literalMatches(x.chars, y.chars) ? x.text : undefined;
  if (!y.glob) return literalMatches(y.chars, x.chars) ? y.text : undefined;
  return searchCharacters(x.chars, y.chars);
}

/**
 * Whether the literal segment `text` matches the segment pattern `glob`: the set of positions in
 * `glob` the characters read so far can reach, one character at a time (a literal of a valid pattern
 * is a valid name, so it is its own witness).
 */
function literalMatches(text: string | readonly string[], glob: string | readonly string[]): boolean {
  if (!charEndsAgree(text, glob)) return false;
  let at: boolean[] = new Array(glob.length + 1).fill(false);
  at[0] = true;
  skipStars(at, glob);
  for (let k = 0; k < text.length; k++) {
    const c = text[k];
    const next: boolean[] = new Array(glob.length + 1).fill(false);
    let any = false;
    for (let p = 0; p < glob.length; p++) {
      if (!at[p]) continue;
      const g = glob[p];
      if (g === "*") next[p] = any = true;
      else if (g === "?" || g === c) next[p + 1] = any = true;
    }
    if (!any) return false;
    skipStars(next, glob);
    at = next;
  }
  return at[glob.length]!;
}

/** Adds to `at` the positions a `*` steps past for free. */
function skipStars(at: boolean[], glob: string | readonly string[]): void {
  for (let p = 0; p < glob.length; p++) if (at[p] && glob[p] === "*") at[p + 1] = true;
}

/** What a segment read so far is, as far as `.` and `..` go: nothing, `.`, `..`, or anything else. */
const EMPTY = 0;
const OTHER = 3;

/** The next {@link EMPTY} … {@link OTHER} after reading `c`: EMPTY → `.` → `..` → OTHER (`...` is a name). */
function afterChar(seen: number, c: string): number {
  return seen === OTHER || c !== "." ? OTHER : seen + 1;
}

/**
 * The search over characters for two segments: a state is a position in each and what was read
 * (see {@link afterChar}); `*` steps past itself for free, or reads any character and stays. Where
 * both sides take any character, `x` and `.` stand for all of them. Literal characters at either end
 * are compared first.
 */
function searchCharacters(
  left: string | readonly string[],
  right: string | readonly string[],
): string | undefined {
  if (!charEndsAgree(left, right)) return undefined;
  const lg = left.length;
  const width = right.length + 1;
  const size = (lg + 1) * width * 4;
  const from: number[] = new Array(size).fill(-2);
  const read: string[] = new Array(size).fill("");
  const queue: number[] = [EMPTY];
  from[EMPTY] = -1;
  const goal = (lg * width + right.length) * 4 + OTHER;
  const step = (to: number, state: number, c: string) => {
    if (from[to] !== -2) return;
    from[to] = state;
    read[to] = c;
    queue.push(to);
  };
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    if (state === goal) return rebuild(state, from, read, "");
    const seen = state & 3;
    const base = state - seen;
    const p = Math.floor((state >> 2) / width);
    const q = (state >> 2) % width;
    const x = left[p];
    const y = right[q];
    if (x === "*") step(state + width * 4, state, "");
    if (y === "*") step(state + 4, state, "");
    if (x === undefined || y === undefined) continue;
    const next = base + (x === "*" ? 0 : width * 4) + (y === "*" ? 0 : 4);
    const xAny = x === "*" || x === "?";
    const yAny = y === "*" || y === "?";
    if (xAny && yAny) {
      step(next + OTHER, state, "x");
      step(next + afterChar(seen, "."), state, ".");
    } else if (xAny || x === y) {
      step(next + afterChar(seen, y), state, y);
    } else if (yAny) {
      step(next + afterChar(seen, x), state, x);
    }
  }
  return undefined;
}

/** Whether the literal characters at both ends of two segments agree, up to the first wildcard on either side. */
function charEndsAgree(left: string | readonly string[], right: string | readonly string[]): boolean {
  const n = Math.min(left.length, right.length);
  for (let i = 0; i < n; i++) {
    const x = left[i]!;
    const y = right[i]!;
    if (x === "*" || x === "?" || y === "*" || y === "?") break;
    if (x !== y) return false;
  }
  for (let i = 1; i <= n; i++) {
    const x = left[left.length - i]!;
    const y = right[right.length - i]!;
    if (x === "*" || x === "?" || y === "*" || y === "?") break;
    if (x !== y) return false;
  }
  return true;
}

/** What was read along the search's path to `state`, joined (free steps read ""). */
function rebuild(state: number, from: readonly number[], read: readonly string[], by: string): string {
  const out: string[] = [];
  for (let s = state; s >= 0; s = from[s]!) if (read[s] !== "") out.push(read[s]!);
  return out.reverse().join(by);
}
