/**
 * The context a start hands over, for arbitrary plans (docs/teams.md "Context that travels with the work"):
 * whatever the blockers, resolutions and notes (any length, any Unicode), it stays under 4,000
 * characters of well-formed JSON, cuts every text at 500, counts exactly what it dropped, and drops
 * the oldest first (blockers' texts, then blockers, then the notes on the leaf).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { CONTEXT, cutText, takeContext } from "../../lib/domain/notes.ts";
import {
  type ContextBlocker,
  type ContextNote,
  type NewTask,
  type Note,
  type TakeContext,
  TakeContextSchema,
  type Task,
} from "../../lib/domain/schemas.ts";
import { completeTask, createTask, startTask, updateTask } from "../../lib/domain/task_ops.ts";
import { subtree, TaskTree } from "../../lib/domain/task_tree.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";
import { run } from "../support/trees.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Text of 1–2,000 characters, not blank: any code point (surrogate pairs included), or what JSON escapes. */
const text = fc.oneof(
  fc.string({ minLength: 1, maxLength: 2000, unit: "grapheme", size: "large" }),
  fc.string({
    minLength: 1,
    maxLength: 2000,
    unit: fc.constantFrom('"', "\\", "\n", "\u0001", "\u2028", "é", "😀", "a", " "),
    size: "large",
  }),
).map((s) => s.trim() || "x").filter((s) => s.length <= 2000);

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
      // Exactly what the rule says, built the slow way: drop the oldest first until it fits.
      assert.deepEqual(context, slowContext(tree, takeover ? "old" : undefined));
      const shown = (context.blockers ?? []).map((b) => b.id);
      assert.deepEqual(shown, [...ids.slice(0, split), ...ids.slice(split)].slice(ids.length - shown.length));
    }),
    // No shrinking: a run holds texts of thousands of characters, and the slow model makes shrinking slower still.
    { numRuns: fuzzRuns(60), seed: FUZZ_SEED, endOnFailure: true },
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

/**
 * The context of leaf `x` as docs/teams.md "Context that travels with the work" describes it, the slow way:
 * everything there is to hand over, then the oldest piece dropped, one at a time, until its JSON is
 * under the limit (blockers' texts first, the first listed first: a blocker's last note, its leaves'
 * resolutions, its own; then the blockers; then the leaf's notes, oldest first).
 */
function slowContext(tree: TaskTree, holder: string | undefined): TakeContext | undefined {
  const leaf = tree.get("x")!;
  const blockers: Task[] = [];
  for (const node of tree.pathTo(leaf)) {
    for (const id of node.blocked_by ?? []) {
      if (!blockers.includes(tree.get(id)!)) blockers.push(tree.get(id)!);
    }
  }
  const cutNote = (n: Note): ContextNote => ({ agent: n.agent, at: n.at, text: cutText(n.text) });
  const notes = leaf.notes ?? [];
  const theirs = holder === undefined ? [] : notes.filter((n) => n.agent === holder).slice(-CONTEXT.notes);
  const own = notes.filter((n) => theirs.length === 0 || n.agent !== holder).slice(-CONTEXT.notes);
  const pieces: string[] = []; // the drop order, by name
  blockers.forEach((b, i) => {
    if (b.notes?.length) pieces.push(`last_note ${i}`);
    leavesOf(b).slice(-CONTEXT.resolutions).forEach((_, j) => pieces.push(`leaf ${i} ${j}`));
    if (b.resolution) pieces.push(`resolution ${i}`);
  });
  blockers.forEach((_, i) => pieces.push(`blocker ${i}`));
  for (const n of notes) if (theirs.includes(n) || own.includes(n)) pieces.push(`note ${notes.indexOf(n)}`);
  const render = (dropped: number): TakeContext | undefined => {
    const gone = new Set(pieces.slice(0, dropped));
    const context: TakeContext = {};
    const entries: ContextBlocker[] = [];
    blockers.forEach((b, i) => {
      if (gone.has(`blocker ${i}`)) return;
      const entry: ContextBlocker = { id: b.id, name: b.name };
      if (b.resolution && !gone.has(`resolution ${i}`)) entry.resolution = cutText(b.resolution);
      const all = leavesOf(b);
      const listed = all.slice(-CONTEXT.resolutions);
      const items = listed.map((t, j) => ({ t, j })).filter(({ j }) => !gone.has(`leaf ${i} ${j}`));
      if (items.length) {
        entry.resolutions = items.map(({ t }) => ({ id: t.id, resolution: cutText(t.resolution!) }));
      }
      if (all.length > listed.length) entry.more_resolutions = all.length - listed.length;
      if (b.notes?.length && !gone.has(`last_note ${i}`)) entry.last_note = cutNote(b.notes.at(-1)!);
      entries.push(entry);
    });
    if (entries.length) context.blockers = entries;
    const keep = (list: Note[]) => list.filter((n) => !gone.has(`note ${notes.indexOf(n)}`)).map(cutNote);
    if (keep(theirs).length) context.previous = { agent: holder!, notes: keep(theirs) };
    if (keep(own).length) context.notes = keep(own);
    if (dropped > 0) context.dropped = dropped;
    return Object.keys(context).length ? context : undefined;
  };
  let dropped = 0;
  while (JSON.stringify(render(dropped) ?? {}).length >= CONTEXT.totalLength) dropped++;
  return render(dropped);
}

/** A parent's leaves with a resolution, in tree order (none for a leaf). */
function leavesOf(task: Task): Task[] {
  if (task.tasks.length === 0) return [];
  return [...subtree(task)].map(({ task: t }) => t).filter((t) => t.tasks.length === 0 && t.resolution);
}
