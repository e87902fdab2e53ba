/**
 * The overlap of two path patterns against brute force (docs/teams.md "Paths and reservations"):
 * when overlap says yes, its witness is a valid path that the matcher finds matching both; when it
 * says no, no path of a bounded set matches both (every path over a small alphabet up to a depth,
 * plus paths built from the patterns' own literals and instances of their wildcards). The matcher
 * itself is set against a regular expression built independently.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { overlapWitness } from "../../lib/domain/path_overlap.ts";
import { GLOBSTAR, matchesPath, normalizePattern, patternProblem } from "../../lib/domain/path_patterns.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

/** A segment of a pattern: `**`, or 1–`max` tokens of a small alphabet with wildcards. */
function segment(max: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(GLOBSTAR) },
    {
      weight: 5,
      arbitrary: fc.array(fc.constantFrom("a", "b", ".", "*", "?"), { minLength: 1, maxLength: max })
        .map((tokens) => tokens.join("")),
    },
  );
}

/** A valid normalised pattern of 1–`depth` segments. */
function pattern(depth: number, tokens: number): fc.Arbitrary<string> {
  return fc.array(segment(tokens), { minLength: 1, maxLength: depth })
    .map((segments) => segments.join("/"))
    .filter((p) => patternProblem(p) === undefined)
    .map(normalizePattern);
}

/** Strings over `alphabet` of length 1..`max`, without `.` and `..` (never a path segment). */
function words(alphabet: readonly string[], max: number): string[] {
  const out: string[] = [];
  let level = [""];
  for (let n = 1; n <= max; n++) {
    level = level.flatMap((w) => alphabet.map((c) => w + c));
    out.push(...level);
  }
  return out.filter((w) => w !== "." && w !== "..");
}

/** Segments a pattern's segment suggests: itself when literal, else instances of its wildcards. */
function instances(segment: string): string[] {
  if (segment === GLOBSTAR) return [];
  const out = new Set<string>();
  for (const star of ["", "a", "b.", "ab"]) {
    for (const one of ["a", ".", "b"]) out.add(segment.replaceAll("*", star).replaceAll("?", one));
  }
  return [...out].filter((w) => w !== "" && w !== "." && w !== "..");
}

/** Every path of 1–`depth` segments from `vocabulary`. */
function* paths(vocabulary: readonly string[], depth: number): Generator<string> {
  let level = [""];
  for (let d = 1; d <= depth; d++) {
    level = level.flatMap((p) => vocabulary.map((s) => (p === "" ? s : `${p}/${s}`)));
    yield* level;
  }
}

function assertWitness(a: string, b: string): string | undefined {
  const witness = overlapWitness(a, b);
  const back = overlapWitness(b, a);
  assert.equal(witness === undefined, back === undefined, `overlap is symmetric: ${a} / ${b}`);
  if (witness !== undefined) {
    assert.ok(matchesPath(witness, a), `witness ${witness} matches ${a}`);
    assert.ok(matchesPath(witness, b), `witness ${witness} matches ${b}`);
    for (const s of witness.split("/")) assert.ok(s !== "" && s !== "." && s !== "..", `path ${witness}`);
  }
  return witness;
}

const BASE_WORDS = words(["a", "b", "."], 2);

Deno.test("two patterns overlap exactly when some bounded path matches both; the witness always does", () => {
  const outcomes = { overlap: 0, apart: 0 };
  const pair = fc.oneof(
    fc.tuple(pattern(3, 3), pattern(3, 3)),
    // Pairs that share structure overlap more often: b is a with segments made wilder.
    pattern(3, 3).chain((a) =>
      fc.tuple(
        fc.constant(a),
        fc.array(fc.constantFrom("keep", "star", "globstar", "drop"), {
          minLength: a.split("/").length,
          maxLength: a.split("/").length,
        }).map((edits) => {
          const out = a.split("/").flatMap((s, i) =>
            edits[i] === "star"
              ? ["*"]
              : edits[i] === "globstar"
              ? [GLOBSTAR]
              : edits[i] === "drop"
              ? []
              : [s]
          );
          return out.length === 0 ? GLOBSTAR : normalizePattern(out.join("/"));
        }),
      )
    ),
  );
  fc.assert(
    fc.property(pair, ([a, b]) => {
      const witness = assertWitness(a, b);
      if (witness !== undefined) {
        outcomes.overlap++;
        return;
      }
      outcomes.apart++;
      const vocabulary = [
        ...new Set([...BASE_WORDS, ...[...a.split("/"), ...b.split("/")].flatMap(instances)]),
      ];
      for (const path of paths(vocabulary, 3)) {
        assert.ok(
          !(matchesPath(path, a) && matchesPath(path, b)),
          `overlap says ${a} and ${b} are apart, but ${path} matches both`,
        );
      }
    }),
    { numRuns: fuzzRuns(250), seed: FUZZ_SEED },
  );
  assert.ok(outcomes.overlap > 30 && outcomes.apart > 30, JSON.stringify(outcomes));
});

Deno.test("two segments overlap exactly when some word up to 5 characters matches both", () => {
  const all = words(["a", "b", "."], 5);
  const seg = fc.array(fc.constantFrom("a", "b", ".", "*", "?"), { minLength: 1, maxLength: 5 })
    .map((tokens) => tokens.join(""))
    .filter((s) => patternProblem(s) === undefined);
  const outcomes = { overlap: 0, apart: 0 };
  fc.assert(
    fc.property(seg, seg, (a, b) => {
      const witness = assertWitness(a, b);
      if (witness !== undefined) {
        outcomes.overlap++;
        return;
      }
      outcomes.apart++;
      for (const word of all) {
        assert.ok(!(matchesPath(word, a) && matchesPath(word, b)), `${a} and ${b} both match ${word}`);
      }
    }),
    { numRuns: fuzzRuns(400), seed: FUZZ_SEED },
  );
  assert.ok(outcomes.overlap > 30 && outcomes.apart > 30, JSON.stringify(outcomes));
});

/** The matcher's meaning, written another way: a regular expression over `/` + the path. */
function reference(pattern: string): RegExp {
  const escape = (c: string) => c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  const parts = pattern.split("/").map((s) =>
    s === GLOBSTAR
      ? "(?:/[^/]+)*"
      : `/${[...s].map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : escape(c))).join("")}`
  );
  return new RegExp(`^${parts.join("")}$`, "u");
}

Deno.test("the matcher agrees with a regular expression built from the pattern", () => {
  const path = fc.array(fc.constantFrom(...words(["a", "b", "."], 3), "😀", "a😀"), {
    minLength: 1,
    maxLength: 4,
  }).map((s) => s.join("/"));
  fc.assert(
    fc.property(pattern(4, 4), path, (p, x) => {
      assert.equal(matchesPath(x, p), reference(p).test(`/${x}`), `${x} ~ ${p}`);
    }),
    { numRuns: fuzzRuns(1000), seed: FUZZ_SEED },
  );
});
