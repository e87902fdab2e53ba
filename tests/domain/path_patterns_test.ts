/**
 * Path patterns (docs/teams.md "Paths and reservations"): what is valid, the normal form, the matcher,
 * and the overlap of two patterns on the contract's examples and the corners around them.
 */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { overlapWitness, patternsOverlap } from "../../lib/domain/path_overlap.ts";
import {
  matchesPath,
  normalizePaths,
  normalizePattern,
  segmentMatches,
} from "../../lib/domain/path_patterns.ts";
import { isCode } from "../support/trees.ts";

Deno.test("a pattern is stored normalised: ./ dropped, a trailing / is /**, runs of ** written once", () => {
  const cases: [string, string][] = [
    ["src/api/users.ts", "src/api/users.ts"],
    ["./src/a.ts", "src/a.ts"],
    ["././src/a.ts", "src/a.ts"],
    ["docs/", "docs/**"],
    ["./docs/", "docs/**"],
    ["src/**/", "src/**"],
    ["a/**/**/b", "a/**/b"],
    ["**", "**"],
    ["*.ts", "*.ts"],
    ["Src/A B.ts", "Src/A B.ts"],
    [".github/workflows/*.yml", ".github/workflows/*.yml"],
    ["a/.../b", "a/.../b"],
  ];
  for (const [given, stored] of cases) assert.equal(normalizePattern(given), stored, given);
  for (const [, stored] of cases) {
    assert.equal(normalizePattern(stored), stored, "normal forms are fixed points");
  }
});

Deno.test("an invalid pattern is INVALID_INPUT naming it: empty segment, . or .., leading /, \\, ** inside a segment", () => {
  const cases: [string, RegExp][] = [
    ["", /empty/],
    ["src//a.ts", /empty segment/],
    ["docs//", /empty segment/],
    ["src/./a.ts", /"\." segment/],
    [".", /"\." segment/],
    ["../x", /"\.\." segment/],
    ["a/..", /"\.\." segment/],
    ["/etc/passwd", /starts with \//],
    ["src\\a.ts", /\\/],
    ["src/**.ts", /\*\* inside a longer segment/],
    ["a**/b", /\*\* inside a longer segment/],
    ["***", /\*\* inside a longer segment/],
    ["./", /names no path/],
  ];
  for (const [pattern, reason] of cases) {
    assert.throws(() => normalizePattern(pattern), (e) => {
      assert.ok(isCode("INVALID_INPUT")(e), `${pattern}: ${e}`);
      const message = (e as DomainError).message;
      assert.ok(message.includes(JSON.stringify(pattern)), `names the pattern: ${message}`);
      assert.match(message, reason);
      return true;
    });
  }
});

Deno.test("too many or too long patterns are LIMIT_EXCEEDED; duplicates after normalising are kept once", () => {
  const many = Array.from({ length: LIMITS.pathsPerTask + 1 }, (_, i) => `f${i}`);
  assert.throws(() => normalizePaths(many, `"t"`), isCode("LIMIT_EXCEEDED"));
  assert.equal(normalizePaths(many.slice(1), `"t"`).length, LIMITS.pathsPerTask);
  // 199 characters and a trailing / are 201 once normalised.
  const long = `${"a".repeat(LIMITS.patternLength - 1)}/`;
  assert.throws(() => normalizePattern(long), isCode("LIMIT_EXCEEDED"));
  assert.equal(normalizePattern("a".repeat(LIMITS.patternLength)).length, LIMITS.patternLength);
  assert.deepEqual(normalizePaths(["docs/", "docs/**", "./a", "a", "b"], `"t"`), ["docs/**", "a", "b"]);
});

Deno.test("a path matches: * within one segment, ? one character, ** zero or more whole segments, case-sensitive", () => {
  const yes: [string, string][] = [
    ["src/a.ts", "src/*.ts"],
    ["src/.env", "src/*"],
    ["src/a.ts", "src/**/*.ts"],
    ["src/x/y/a.ts", "src/**/*.ts"],
    ["docs", "docs/**"],
    ["docs/a/b", "docs/**"],
    ["a/b/c", "a/*/c"],
    ["ab", "a?"],
    ["a😀", "a?"],
    ["x", "**"],
    ["a/b/c/d", "a/**/d"],
    ["a/d", "a/**/d"],
    ["a*b", "a*b"],
  ];
  const no: [string, string][] = [
    ["src/a/b.ts", "src/*.ts"],
    ["src/apis/x", "src/api/**"],
    ["Src/a.ts", "src/*.ts"],
    ["abc", "a?"],
    ["a", "a?"],
    ["src", "src/*"],
    ["a/b/c/e", "a/**/d"],
  ];
  for (const [path, pattern] of yes) assert.ok(matchesPath(path, pattern), `${path} ~ ${pattern}`);
  for (const [path, pattern] of no) assert.ok(!matchesPath(path, pattern), `${path} !~ ${pattern}`);
  assert.ok(segmentMatches("aXbXc", "a*b*c"));
  assert.ok(!segmentMatches("aXbX", "a*b*c"));
  assert.ok(segmentMatches("", "*"));
});

Deno.test("the contract's examples: overlap decided on the patterns, with a witness matching both", () => {
  const yes: [string, string, string][] = [
    ["src/**/*.ts", "src/a.ts", "src/a.ts"],
    ["a/*/c", "a/b/*", "a/b/c"],
    ["docs/**", "docs", "docs"],
    ["src/api/**", "src/api/users.ts", "src/api/users.ts"],
  ];
  for (const [a, b, witness] of yes) {
    assert.equal(overlapWitness(a, b), witness, `${a} ∩ ${b}`);
    assert.equal(overlapWitness(b, a), witness, `${b} ∩ ${a}`);
  }
  const no: [string, string][] = [
    ["src/*.ts", "src/a/b.ts"],
    ["src/api/**", "src/apis/x"],
    ["*.ts", "*.js"],
    ["src/a.ts", "src/b.ts"],
    ["a/*", "a"],
    ["lib/**/m1_*.ts", "lib/**/m2_*.ts"],
  ];
  for (const [a, b] of no) {
    assert.equal(patternsOverlap(a, b), false, `${a} ∩ ${b}`);
    assert.equal(patternsOverlap(b, a), false, `${b} ∩ ${a}`);
  }
});

Deno.test("overlap corners: a path is never empty and no segment is . or ..; witnesses match both", () => {
  const cases: [string, string, boolean][] = [
    ["**", "**", true],
    [".?", "?.", false], // only ".." matches both
    [".?", "*.", false], // ".." again
    [".*", "*.", true], // ".x." or "..." (three dots is a name)
    ["*", "*", true],
    ["**/x*", "**/*y", true],
    ["a/**/b/**/c", "**/c/**", true],
    ["a?b*", "*c", true],
    ["**/*.md", "src/*/y.ts", false],
    ["**/*.md", "src/**", true],
    ["a/**", "**/b", true],
    ["a/*/b", "a/b", false],
    ["a/**/b", "a/b", true],
  ];
  for (const [a, b, expected] of cases) {
    const witness = overlapWitness(a, b);
    assert.equal(witness !== undefined, expected, `${a} ∩ ${b}: ${witness}`);
    if (witness === undefined) continue;
    assert.ok(matchesPath(witness, a) && matchesPath(witness, b), `${witness} matches ${a} and ${b}`);
    for (const segment of witness.split("/")) assert.ok(![".", "..", ""].includes(segment), witness);
  }
  assert.equal(overlapWitness("?", "?"), "x");
});
