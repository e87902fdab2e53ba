/** The shape limits, checked in one walk for tool calls and imports alike. */
import assert from "node:assert/strict";
import { checkTreeShape, jsonDepth, LIMITS, type ShapeNode } from "../../lib/domain/limits.ts";
import { isCode } from "../support/trees.ts";

function chain(levels: number): ShapeNode {
  return levels === 1 ? { id: `d${levels}` } : { id: `d${levels}`, tasks: [chain(levels - 1)] };
}

Deno.test("checkTreeShape counts the tasks and accepts a tree exactly at every limit", () => {
  assert.equal(checkTreeShape([chain(LIMITS.depth)]), LIMITS.depth);
  const wide = {
    id: "w",
    tasks: Array.from({ length: LIMITS.childrenPerTask }, (_, i) => ({ id: `c${i}` })),
  };
  assert.equal(checkTreeShape([wide], { existing: LIMITS.tasksPerSession - 1001 }), 1001);
});

Deno.test("checkTreeShape refuses depth, width, tasks per call and per session with LIMIT_EXCEEDED", async (t) => {
  await t.step("depth counts the levels above", () => {
    assert.throws(
      () => checkTreeShape([chain(2)], { depthAbove: LIMITS.depth - 1 }),
      isCode("LIMIT_EXCEEDED"),
    );
    assert.throws(() => checkTreeShape([chain(LIMITS.depth + 1)]), /nested 13 deep/);
  });
  await t.step("width counts the siblings already in the list", () => {
    const full = { siblings: LIMITS.childrenPerTask, parentId: "p" };
    assert.throws(() => checkTreeShape([{ name: "one more" }], full), /task "p" has 1001 subtasks/);
    assert.throws(
      () => checkTreeShape([{ name: "root" }], { siblings: LIMITS.childrenPerTask }),
      /root level/,
    );
  });
  await t.step("tasks per call only for a call", () => {
    const many = Array.from({ length: LIMITS.tasksPerCall + 1 }, (_, i) => ({ id: `t${i}` }));
    assert.equal(checkTreeShape(many), LIMITS.tasksPerCall + 1);
    assert.throws(() => checkTreeShape(many, { oneCall: true }), isCode("LIMIT_EXCEEDED"));
  });
  await t.step("tasks per session count what the session holds", () => {
    assert.throws(
      () => checkTreeShape([{ id: "x" }], { existing: LIMITS.tasksPerSession, where: 'Session "s": ' }),
      /Session "s": a session holds at most 100000 tasks/,
    );
  });
});

Deno.test("jsonDepth measures nesting without recursion and stops looking past the limit", () => {
  assert.equal(jsonDepth("text"), 0);
  assert.equal(jsonDepth({}), 1);
  assert.equal(jsonDepth({ a: [1, { b: [] }] }), 4);
  assert.equal(jsonDepth([[], [[[]]], {}]), 4);
  // Deeper than any call stack: measured in bounded space, reported as just past the limit.
  const deep = JSON.parse("[".repeat(200_000) + "]".repeat(200_000));
  assert.equal(jsonDepth(deep), LIMITS.jsonDepth + 1);
  assert.equal(jsonDepth(deep, 1_000_000), 200_000);
});
