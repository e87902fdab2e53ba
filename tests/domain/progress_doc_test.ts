/** Progress documents as a pure module: parsing the JSON text, revisions, the stored schema. */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import {
  missingProgressFields,
  parseProgressContent,
  ProgressDocSchema,
  ProjectSchema,
  upsertProgress,
} from "../../lib/domain/progress_doc.ts";

function isCode(code: string) {
  return (e: unknown) => e instanceof DomainError && e.code === code;
}

Deno.test("parseProgressContent returns the JSON object", () => {
  const doc = parseProgressContent('{"goal":"ship","completed":["a"],"next_steps":[],"blockers":[{"b":1}]}');
  assert.deepEqual(doc, { goal: "ship", completed: ["a"], next_steps: [], blockers: [{ b: 1 }] });
});

Deno.test("parseProgressContent refuses broken JSON with INVALID_INPUT and an example", () => {
  for (const text of ["{goal: 1}", "{", "not json", '{"a":1,}']) {
    assert.throws(
      () => parseProgressContent(text),
      (e) => isCode("INVALID_INPUT")(e) && /JSON/.test(String(e)),
    );
  }
});

Deno.test("parseProgressContent refuses JSON that is not an object", async (t) => {
  for (
    const [text, kind] of [["[1,2]", "an array"], ["null", "null"], ['"text"', "a string"], [
      "42",
      "a number",
    ]]
  ) {
    await t.step(kind!, () => {
      assert.throws(
        () => parseProgressContent(text!),
        (e) => isCode("INVALID_INPUT")(e) && (e as Error).message.includes(kind!),
      );
    });
  }
});

Deno.test("parseProgressContent refuses a document above the size limit with LIMIT_EXCEEDED", () => {
  const text = JSON.stringify({ goal: "x".repeat(LIMITS.progressContentLength) });
  assert.throws(() => parseProgressContent(text), isCode("LIMIT_EXCEEDED"));
  const fits = JSON.stringify({ goal: "x".repeat(LIMITS.progressContentLength - 20) });
  assert.ok(fits.length <= LIMITS.progressContentLength);
  assert.equal(typeof parseProgressContent(fits).goal, "string");
});

Deno.test("upsertProgress starts at revision 1 and adds 1 on every write", () => {
  const first = upsertProgress(undefined, {
    project: "p",
    content: { goal: "a" },
    now: "t1",
    session_id: "s",
  });
  assert.deepEqual(first, {
    project: "p",
    content: { goal: "a" },
    revision: 1,
    updated_at: "t1",
    session_id: "s",
  });
  const second = upsertProgress(first, { project: "p", content: { goal: "b" }, now: "t2" });
  assert.deepEqual(second, { project: "p", content: { goal: "b" }, revision: 2, updated_at: "t2" });
  assert.equal(first.revision, 1, "the previous document is not changed");
  assert.deepEqual(ProgressDocSchema.parse(JSON.parse(JSON.stringify(second))), second);
});

Deno.test("ProgressDocSchema refuses a stored document whose content is not an object", () => {
  const doc = { project: "p", content: [1], revision: 1, updated_at: "t" };
  assert.equal(ProgressDocSchema.safeParse(doc).success, false);
});

Deno.test("ProjectSchema trims and refuses an empty or too long name", () => {
  assert.equal(ProjectSchema.parse("  my-app "), "my-app");
  assert.equal(ProjectSchema.safeParse("   ").success, false);
  assert.equal(ProjectSchema.safeParse("x".repeat(201)).success, false);
});

Deno.test("missingProgressFields names the seed's fields a document lacks", () => {
  assert.deepEqual(missingProgressFields({ goal: "g", blockers: [] }), ["completed", "next_steps"]);
  assert.deepEqual(missingProgressFields({ goal: 1, completed: 1, next_steps: 1, blockers: 1 }), []);
});
