/**
 * The context a start hands over, for arbitrary plans (docs/teams.md "Context that travels with the work"):
 * whatever the blockers, resolutions, notes and git records (any length, any Unicode), it stays under
 * 4,000 characters of well-formed JSON, cuts every text at 500, counts exactly what it dropped, and drops
 * the oldest first (blockers' texts, then blockers, then the notes on the leaf, then the holder's git
 * record: its dirty paths, uncounted, then the record).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { CONTEXT } from "../../lib/domain/limits.ts";
import { cutText, takeContext } from "../../lib/domain/notes.ts";
import {
  type ContextBlocker,
  type ContextNote,
  type GitRecord,
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

/** A text of a git record: 1–1,024 characters, any of the above. */
const gitText = fc.oneof(
  text.map((s) => cutText(s, 1024)),
  fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim() !== ""),
);

/** A git record of `agent`, any field present or not, up to 20 dirty paths. */
function gitRecord(agent: string): fc.Arbitrary<GitRecord> {
  const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
  return fc.record({
    worktree: optional(gitText),
    branch: optional(gitText),
    head: optional(fc.constantFrom("0123456789abcdef0123456789abcdef01234567")),
    upstream: optional(gitText),
    ahead: optional(fc.nat(500)),
    behind: optional(fc.nat(500)),
    dirty: fc.array(gitText, { maxLength: 20 }),
    dirty_count: optional(fc.nat(100_000)),
  }).map((state) => {
    const record: GitRecord = { agent, at: "2026-01-01T00:00:00.000Z" };
    for (const [key, value] of Object.entries(state)) {
      if (value !== undefined && !(key === "dirty" && (value as string[]).length === 0)) {
        Object.assign(record, { [key]: value });
      }
    }
    return record;
  });
}

const blocker = fc.record({
  leaves: fc.integer({ min: 0, max: 14 }),
  resolution: fc.option(text, { nil: undefined }),
  notes: fc.array(text, { maxLength: 3 }),
  git: fc.option(gitRecord("w"), { nil: undefined }),
});

const plan = fc.record({
  blockers: fc.array(blocker, { maxLength: 40 }),
  /** Blockers put on the leaf's parent instead (inherited). */
  inherited: fc.integer({ min: 0, max: 40 }),
  leafNotes: fc.array(fc.record({ holder: fc.boolean(), text }), { maxLength: 12 }),
  takeover: fc.boolean(),
  /** The leaf's record: the holder's, another agent's, or none. */
  leafGit: fc.option(fc.oneof(gitRecord("old"), gitRecord("lead")), { nil: undefined }),
});

Deno.test("any context stays under 4,000 characters, cuts texts at 500, counts what it drops and drops the oldest first (property)", () => {
  fc.assert(
    fc.property(plan, ({ blockers, inherited, leafNotes, takeover, leafGit }) => {
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
        if (b.git) run(tree, (t) => t.setField(t.get(`b${i}`)!, "git", b.git));
      });
      if (takeover) run(tree, (t) => startTask(t, "x", { agent: "old", now: T0, leaseSeconds: 1 }));
      if (leafGit) run(tree, (t) => t.setField(t.get("x")!, "git", leafGit));
      leafNotes.forEach((n, k) =>
        run(
          tree,
          (t) => updateTask(t, { id: "x", note: n.text }, { agent: n.holder ? "old" : "lead", now: T0 + k }),
        )
      );
      const context = takeContext(tree, tree.get("x")!, takeover ? { from: "old" } : undefined);
      const holderGit = takeover && leafGit?.agent === "old";
      if (!context) {
        assert.equal(
          ids.length + leafNotes.length + (holderGit ? 1 : 0),
          0,
          "a context is absent only when empty",
        );
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
      const gits = (context.blockers ?? []).flatMap((b) => b.git ? [b.git] : []);
      const previousGit = context.previous?.git;
      const gitTexts = [
        ...gits.flatMap((g) => [g.branch, g.worktree]),
        ...(previousGit
          ? [previousGit.worktree, previousGit.branch, previousGit.upstream, ...previousGit.dirty ?? []]
          : []),
      ];
      for (const t of gitTexts) if (t !== undefined) assert.ok(t.length <= CONTEXT.textLength);
      if (previousGit) assert.equal(previousGit.dirty_count, leafGit!.dirty_count, "the count is kept whole");

      // What there was to hand over, and what was kept of it.
      const full = takeContextUncut(blockers, leafNotes, takeover, holderGit);
      const kept = (context.blockers ?? []).length + texts.length + gits.length + (previousGit ? 1 : 0);
      assert.equal(context.dropped ?? 0, full.items - kept, "dropped counts exactly what is missing");
      const notesKept = (context.previous?.notes.length ?? 0) + (context.notes?.length ?? 0);
      const blockerTexts = texts.length - notesKept;
      if (notesKept < full.notes) {
        assert.equal((context.blockers ?? []).length, 0, "the notes on the leaf go last");
      }
      if ((context.blockers ?? []).length < ids.length) {
        assert.equal(blockerTexts + gits.length, 0, "blockers go after their texts");
      }
      if (holderGit && (previousGit?.dirty?.length ?? 0) < (leafGit!.dirty?.length ?? 0)) {
        assert.equal(notesKept + (context.blockers ?? []).length, 0, "the holder's record goes last");
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
  blockers: { leaves: number; resolution?: string; notes: string[]; git?: GitRecord }[],
  leafNotes: { holder: boolean }[],
  takeover: boolean,
  holderGit: boolean,
): { items: number; notes: number } {
  let items = holderGit ? 1 : 0;
  for (const b of blockers) {
    items += 1; // the blocker itself
    if (b.git && (b.git.branch ?? b.git.head ?? b.git.worktree) !== undefined) items += 1; // its git
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
 * resolutions, its own, its git; then the blockers; then the leaf's notes, oldest first; then the
 * holder's dirty paths, the last first, not counted; then its git record).
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
  const brief = (g: GitRecord | undefined) => {
    if (!g) return undefined;
    const out: { branch?: string; head?: string; worktree?: string } = {};
    if (g.branch !== undefined) out.branch = cutText(g.branch);
    if (g.head !== undefined) out.head = g.head;
    if (g.worktree !== undefined) out.worktree = cutText(g.worktree);
    return Object.keys(out).length ? out : undefined;
  };
  const holderGit = holder !== undefined && leaf.git?.agent === holder ? leaf.git : undefined;
  const pieces: string[] = []; // the drop order, by name
  blockers.forEach((b, i) => {
    if (b.notes?.length) pieces.push(`last_note ${i}`);
    leavesOf(b).slice(-CONTEXT.resolutions).forEach((_, j) => pieces.push(`leaf ${i} ${j}`));
    if (b.resolution) pieces.push(`resolution ${i}`);
    if (brief(b.git)) pieces.push(`git ${i}`);
  });
  blockers.forEach((_, i) => pieces.push(`blocker ${i}`));
  for (const n of notes) if (theirs.includes(n) || own.includes(n)) pieces.push(`note ${notes.indexOf(n)}`);
  const paths = holderGit?.dirty ?? [];
  for (let k = paths.length - 1; k >= 0; k--) pieces.push(`dirty ${k}`);
  if (holderGit) pieces.push("previous git");
  const render = (dropped: number): TakeContext | undefined => {
    const gone = new Set(pieces.slice(0, dropped));
    const counted = pieces.slice(0, dropped).filter((p) => !p.startsWith("dirty ")).length;
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
      if (brief(b.git) && !gone.has(`git ${i}`)) entry.git = brief(b.git);
      entries.push(entry);
    });
    if (entries.length) context.blockers = entries;
    const keep = (list: Note[]) => list.filter((n) => !gone.has(`note ${notes.indexOf(n)}`)).map(cutNote);
    const git = holderGit && !gone.has("previous git") ? { ...holderGit } : undefined;
    if (git) {
      for (const key of ["worktree", "branch", "upstream"] as const) {
        if (git[key]) git[key] = cutText(git[key]);
      }
      const kept = paths.filter((_, k) => !gone.has(`dirty ${k}`)).map((p) => cutText(p));
      if (kept.length) git.dirty = kept;
      else delete git.dirty;
    }
    if (keep(theirs).length || git) {
      context.previous = { agent: holder!, notes: keep(theirs) };
      if (git) context.previous.git = git;
    }
    if (keep(own).length) context.notes = keep(own);
    if (counted > 0) context.dropped = counted;
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
