/**
 * The parser of `git status --porcelain=v2 --branch -z`, on outputs captured from git 2.39 (a branch
 * with an upstream, a staged rename, paths with spaces, a newline and non-ASCII characters, untracked
 * files and directories, a detached HEAD, a repository without commits, a merge conflict, an upstream
 * that is gone), and on any path a property test makes.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type GitStatus,
  parseStatus,
  type StatusEntry,
  StatusParseError,
} from "../../lib/git/status_parse.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

const OID = "3fe5fb38e6648c4cde73bf38eafee40654c5b78a";
const BLOB = "78981922613b2afb6025042ff6bd878ac1994e85";

/** Captured: a branch one commit ahead of its upstream, a change, a staged rename, a path with a newline, untracked entries. */
const BRANCH = [
  `# branch.oid ${OID}`,
  "# branch.head main",
  "# branch.upstream origin/main",
  "# branch.ab +1 -0",
  `1 .M N... 100644 100644 100644 ${BLOB} ${BLOB} a.txt`,
  `2 R. N... 100644 100644 100644 ${BLOB} ${BLOB} R100 f g.txt`,
  "d e.txt",
  `1 .M N... 100644 100644 100644 ${BLOB} ${BLOB} new\nline.txt`,
  "? dir/",
  "? untracked.txt",
  "? é.txt",
  "",
].join("\0");

Deno.test("parseStatus reads the branch headers and every entry, renames with their origin, paths as they are", () => {
  assert.deepEqual(
    parseStatus(BRANCH),
    {
      head: OID,
      branch: "main",
      upstream: "origin/main",
      ahead: 1,
      behind: 0,
      entries: [
        { kind: "changed", xy: ".M", path: "a.txt" },
        { kind: "renamed", xy: "R.", path: "f g.txt", from: "d e.txt" },
        { kind: "changed", xy: ".M", path: "new\nline.txt" },
        { kind: "untracked", path: "dir/" },
        { kind: "untracked", path: "untracked.txt" },
        { kind: "untracked", path: "é.txt" },
      ],
    } satisfies GitStatus,
  );
});

Deno.test("parseStatus: a detached HEAD has no branch; before the first commit there is no head", () => {
  const detached = parseStatus(`# branch.oid ${OID}\0# branch.head (detached)\0? x\0`);
  assert.deepEqual(detached, { head: OID, entries: [{ kind: "untracked", path: "x" }] });
  const initial = parseStatus(
    `# branch.oid (initial)\0# branch.head main\0` +
      `1 A. N... 000000 100644 100644 0000000000000000000000000000000000000000 ${BLOB} x\0`,
  );
  assert.deepEqual(initial, { branch: "main", entries: [{ kind: "changed", xy: "A.", path: "x" }] });
  assert.deepEqual(parseStatus(""), { entries: [] }, "a clean work tree without headers");
});

Deno.test("parseStatus: a merge conflict is an unmerged entry; an upstream that is gone has no ahead or behind", () => {
  const conflict = parseStatus(
    `# branch.oid ${OID}\0# branch.head main\0# branch.upstream other\0` +
      `u UU N... 100644 100644 100644 100644 ${BLOB} ${BLOB} ${BLOB} src/a b.ts\0`,
  );
  assert.deepEqual(conflict, {
    head: OID,
    branch: "main",
    upstream: "other",
    entries: [{ kind: "unmerged", xy: "UU", path: "src/a b.ts" }],
  });
});

Deno.test("parseStatus skips headers it does not know and refuses entries it cannot read", () => {
  assert.deepEqual(parseStatus(`# stash 3\0# branch.head main\0! build/\0`), {
    branch: "main",
    entries: [{ kind: "ignored", path: "build/" }],
  });
  assert.throws(() => parseStatus("x what\0"), StatusParseError);
  assert.throws(() => parseStatus("1 .M N... 100644\0"), StatusParseError, "cut short");
  assert.throws(
    () => parseStatus(`2 R. N... 100644 100644 100644 ${BLOB} ${BLOB} R100 new\0`),
    StatusParseError,
  );
  assert.throws(() => parseStatus("# branch.ab ahead\0"), StatusParseError);
});

/** A path as git may print it with -z: any characters but NUL, never empty. */
const path = fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }).filter((p) => !p.includes("\0"));
const pathy = fc.oneof(
  path,
  fc.constantFrom("a b", " lead", "trail ", "new\nline", "tab\tx", "é/😀", "R100 x"),
);

const entry: fc.Arbitrary<StatusEntry> = fc.oneof(
  fc.record({
    kind: fc.constant("changed" as const),
    xy: fc.constantFrom(".M", "M.", "A.", ".D", "MM"),
    path: pathy,
  }),
  fc.record({
    kind: fc.constant("renamed" as const),
    xy: fc.constantFrom("R.", "C.", "RM"),
    path: pathy,
    from: pathy,
  }),
  fc.record({ kind: fc.constant("unmerged" as const), xy: fc.constantFrom("UU", "AA", "DU"), path: pathy }),
  fc.record({ kind: fc.constant("untracked" as const), path: pathy }),
);

/** How git writes an entry with -z. */
function written(e: StatusEntry): string {
  const modes = "100644 100644 100644";
  switch (e.kind) {
    case "changed":
      return `1 ${e.xy} N... ${modes} ${BLOB} ${BLOB} ${e.path}\0`;
    case "renamed":
      return `2 ${e.xy} N... ${modes} ${BLOB} ${BLOB} R90 ${e.path}\0${e.from}\0`;
    case "unmerged":
      return `u ${e.xy} N... ${modes} 100644 ${BLOB} ${BLOB} ${BLOB} ${e.path}\0`;
    default:
      return `? ${e.path}\0`;
  }
}

Deno.test("parseStatus gives back every entry git writes, whatever its path holds (property)", () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 12 }), fc.option(fc.nat(50)), (entries, ahead) => {
      const head = `# branch.oid ${OID}\0# branch.head feature/x\0` +
        (ahead === null ? "" : `# branch.upstream origin/x\0# branch.ab +${ahead} -2\0`);
      const parsed = parseStatus(head + entries.map(written).join(""));
      assert.deepEqual(parsed.entries, entries.map((e) => ({ ...e })));
      assert.equal(parsed.branch, "feature/x");
      assert.equal(parsed.ahead, ahead ?? undefined);
    }),
    { numRuns: fuzzRuns(300), seed: FUZZ_SEED },
  );
});
