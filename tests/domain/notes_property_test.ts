/**
 * The context a start hands over, for arbitrary plans (README "Context that travels with the work"):
 * whatever the blockers, resolutions and notes (any length, any Unicode), it stays under 4,000
 * characters of well-formed JSON, cuts every text at 500, counts exactly what it dropped, and drops
 * the oldest first (blockers' texts, then blockers, then the notes on the leaf).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { CONTEXT, takeContext } from "../../lib/domain/notes.ts";
import { type NewTask, TakeContextSchema } from "../../lib/domain/schemas.ts";
import { completeTask, createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";
import { run } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Text of 1–2,000 characters, any code point (surrogate pairs included), not blank. */
const text = fc.string({ minLength: 1, maxLength: 2000, unit: "grapheme", size: "large" }).map((s) =>
  s.trim() || "x"
)
  .filter((s) => s.length <= 2000);

const blocker = fc.record({
  leaves: fc.integer({ min: 0, max: 14 }),
  resolution: fc.option(text, { nil: undefined }),
  notes: fc.array(text, { maxLength: 3 }),
});

const plan = fc.record({
  blockers: fc.array(blocker, { maxLength: 40 }),
  /** Blockers put on the leaf's parent instead (inherited). */
  inherited: fc.integer({ min: 0, max: 40 }),
  leafNotes: fc.array(fc.record({ holder: fc.boolean(), text }), { maxLength: 12 }),
  takeover: fc.boolean(),
});

Deno.test("any context stays under 4,000 characters, cuts texts at 500, counts what it drops and drops the oldest first (property)", () => {
  fc.assert(
    fc.property(plan, ({ blockers, inherited, leafNotes, takeover }) => {
      const tree = new TaskTree();
      const ids = blockers.map((_, i) => `b${i}`);
      const split = Math.min(inherited, ids.length);
      const tasks: NewTask[] = blockers.map((b, i) => ({
        id: ids[i],
        name: `Blocker ${i}`,
        tasks: Array.from({ length: b.leaves }, (_, l) => ({ id: `b${i}.${l}`, name: `Leaf ${l}` })),
      }));
      tasks.push({
        id: "p",
        name: "Parent",
        blocked_by: ids.slice(0, split),
        tasks: [{ id: "x", name: "X", blocked_by: ids.slice(split) }],
      });
      run(tree, (t) => createTask(t, { id: "root", name: "Root", parallel: true, tasks }));
      blockers.forEach((b, i) => {
        for (let l = 0; l < b.leaves; l++) {
          run(tree, (t) => startTask(t, `b${i}.${l}`));
          run(tree, (t) => completeTask(t, `b${i}.${l}`, `leaf ${l} of b${i}`));
        }
        if (b.leaves === 0) run(tree, (t) => completeTask(t, `b${i}`, b.resolution ?? "done"));
        else if (b.resolution) run(tree, (t) => updateTask(t, { id: `b${i}`, resolution: b.resolution }));
        b.notes.forEach((n, k) =>
          run(tree, (t) => updateTask(t, { id: `b${i}`, note: n }, { agent: "w", now: T0 + k }))
        );
      });
      if (takeover) run(tree, (t) => startTask(t, "x", { agent: "old", now: T0, leaseSeconds: 1 }));
      leafNotes.forEach((n, k) =>
        run(
          tree,
          (t) => updateTask(t, { id: "x", note: n.text }, { agent: n.holder ? "old" : "lead", now: T0 + k }),
        )
      );
      const context = takeContext(tree, tree.get("x")!, takeover ? { from: "old" } : undefined);
      if (!context) {
        assert.equal(ids.length + leafNotes.length, 0, "a context is absent only when empty");
        return;
      }
      const json = JSON.stringify(context);
      assert.ok(json.length < CONTEXT.totalLength, `${json.length} characters`);
      assert.ok(json.isWellFormed());
      TakeContextSchema.parse(context);
      const texts = [
        ...(context.blockers ?? []).flatMap((b) => [
          b.resolution,
          b.last_note?.text,
          ...(b.resolutions ?? []).map((r) => r.resolution),
        ]),
        ...(context.previous?.notes ?? []).map((n) => n.text),
        ...(context.notes ?? []).map((n) => n.text),
      ].filter((t) => t !== undefined);
      for (const t of texts) assert.ok(t.length <= CONTEXT.textLength);

      // What there was to hand over, and what was kept of it.
      const full = takeContextUncut(blockers, leafNotes, takeover);
      const kept = (context.blockers ?? []).length + texts.length;
      assert.equal(context.dropped ?? 0, full.items - kept, "dropped counts exactly what is missing");
      const notesKept = (context.previous?.notes.length ?? 0) + (context.notes?.length ?? 0);
      const blockerTexts = texts.length - notesKept;
      if (notesKept < full.notes) {
        assert.equal((context.blockers ?? []).length, 0, "the notes on the leaf go last");
      }
      if ((context.blockers ?? []).length < ids.length) {
        assert.equal(blockerTexts, 0, "blockers go after their texts");
      }
      // The first listed go first.
      const shown = (context.blockers ?? []).map((b) => b.id);
      assert.deepEqual(shown, [...ids.slice(0, split), ...ids.slice(split)].slice(ids.length - shown.length));
    }),
    { numRuns: fuzzRuns(60), seed: FUZZ_SEED },
  );
});

/** How many items a context of this plan holds before anything is dropped, and how many are leaf notes. */
function takeContextUncut(
  blockers: { leaves: number; resolution?: string; notes: string[] }[],
  leafNotes: { holder: boolean }[],
  takeover: boolean,
): { items: number; notes: number } {
  let items = 0;
  for (const b of blockers) {
    items += 1; // the blocker itself
    if (b.leaves === 0) items += 1; // a leaf blocker's resolution (given, or "done")
    else items += Math.min(b.leaves, CONTEXT.resolutions) + (b.resolution ? 1 : 0);
    if (b.notes.length > 0) items += 1; // its last note
  }
  const holder = leafNotes.filter((n) => n.holder).length;
  const notes = takeover && holder > 0
    ? Math.min(holder, CONTEXT.notes) + Math.min(leafNotes.length - holder, CONTEXT.notes)
    : Math.min(leafNotes.length, CONTEXT.notes);
  return { items: items + notes, notes };
}
