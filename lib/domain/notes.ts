/**
 * Context that travels with the work (README "Context that travels with the work"): notes on tasks,
 * and the `context` a start or claim that takes a leaf hands its agent: the blockers' resolutions and
 * last notes, the stale holder's notes on a takeover, the leaf's own notes, cut to stay small.
 *
 * Tree rules beside the team rules (team.ts), pure: the clock is the caller's (`Actor.now`), and every
 * store runs them inside its atomic change, so a context is read from the very tree the start was
 * decided on. A task's `notes` list is never changed in place (an append makes a new list): history
 * deltas and restores may share the old one.
 */
import { fail } from "./errors.ts";
import { isoTime } from "./iso_time.ts";
import { LIMITS } from "./limits.ts";
import {
  ANONYMOUS_NOTE_AGENT,
  type ContextBlocker,
  type ContextNote,
  type Note,
  NoteTextSchema,
  type TakeContext,
  type Task,
} from "./schemas.ts";
import { subtree, type TaskTree } from "./task_tree.ts";
import { type Actor, blockersOf } from "./team.ts";

/** The sizes of a context (README "Context that travels with the work"). */
export const CONTEXT = {
  /** Characters of one text (a note, a resolution); a longer one is cut to this, ending `…`. */
  textLength: 500,
  /** A whole context stays under this many characters of JSON. */
  totalLength: 4000,
  /** Notes listed from the stale holder, and of the leaf itself: the last ones. */
  notes: 5,
  /** Leaf resolutions listed for a parent blocker: the last ones in tree order; the rest counted. */
  resolutions: 10,
} as const;

/**
 * The name a note carries for `agent`: the agent's own, or {@link ANONYMOUS_NOTE_AGENT} for the
 * anonymous agent (a name no agent can have, so a takeover never mixes the two up).
 */
export function noteAgent(agent: string | undefined): string {
  return agent ?? ANONYMOUS_NOTE_AGENT;
}

/**
 * Appends a note by `actor` (its agent, its clock) to `task`: any agent, on any task, claimed or not (a
 * note is a text edit). The last {@link LIMITS}.notesKept are kept; `notes_dropped` counts the older
 * ones. A blank text is `INVALID_INPUT`, a longer one than {@link LIMITS}.noteLength `LIMIT_EXCEEDED`
 * (the same schema checks the tool's input); the text is stored trimmed.
 */
export function addNote(tree: TaskTree, task: Task, actor: Actor, text: string): Note {
  if (!text.isWellFormed()) fail("INVALID_INPUT", "A note must be well-formed Unicode (no lone surrogate).");
  const parsed = NoteTextSchema.safeParse(text);
  if (!parsed.success) {
    const length = text.trim().length;
    if (length > LIMITS.noteLength) {
      fail(
        "LIMIT_EXCEEDED",
        `A note is at most ${LIMITS.noteLength} characters; this one has ${length}. Split it over several notes.`,
      );
    }
    fail("INVALID_INPUT", "A note must not be empty or blank.");
  }
  const note: Note = { agent: noteAgent(actor.agent), at: isoTime(actor.now), text: parsed.data };
  const notes = [...task.notes ?? [], note];
  const over = notes.length - LIMITS.notesKept;
  tree.setField(task, "notes", over > 0 ? notes.slice(over) : notes);
  if (over > 0) tree.setField(task, "notes_dropped", (task.notes_dropped ?? 0) + over);
  return note;
}

/** `text` cut to {@link CONTEXT}.textLength characters, ending `…` when cut; never splits a surrogate pair. */
export function cutText(text: string, length: number = CONTEXT.textLength): string {
  if (text.length <= length) return text;
  let end = length - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** Who held a leaf that is taken over: its holder's agent (undefined: the anonymous agent). */
export interface Takeover {
  from: string | undefined;
}

/**
 * What a start that takes `leaf` hands its agent (`takeover`: it was in progress for another agent),
 * undefined when there is nothing to hand over:
 * - `blockers`: every task in the leaf's own and inherited `blocked_by`, in that order (inherited
 *   first), with its resolution, a parent's last {@link CONTEXT}.resolutions leaf resolutions (the
 *   rest counted), and its last note;
 * - `previous`: on a takeover, the holder's last {@link CONTEXT}.notes notes on the leaf;
 * - `notes`: the leaf's last {@link CONTEXT}.notes notes by others than that holder (a note is
 *   listed once: the holder's are in `previous`).
 *
 * Each text is cut by {@link cutText}; the whole stays under {@link CONTEXT}.totalLength characters
 * of JSON, dropping the oldest first and counting what it dropped in `dropped`. Oldest, in the order
 * things happen: a blocker was finished before the leaf could start, so first the blockers' texts go
 * (the first listed first; of a blocker, its last note, then its leaves' resolutions, then its own),
 * then the blockers themselves, then the notes on the leaf, oldest first.
 */
export function takeContext(tree: TaskTree, leaf: Task, takeover?: Takeover): TakeContext | undefined {
  const blockers = blockersOf(tree, leaf).map((blocker) => blockerContext(blocker));
  const onLeaf = leaf.notes ?? [];
  let previous: { agent: string; notes: Note[] } | undefined;
  if (takeover) {
    const agent = noteAgent(takeover.from);
    const theirs = onLeaf.filter((note) => note.agent === agent).slice(-CONTEXT.notes);
    if (theirs.length > 0) previous = { agent, notes: theirs };
  }
  const own = onLeaf.filter((note) => note.agent !== previous?.agent).slice(-CONTEXT.notes);
  return fit({ blockers, previous, own, order: onLeaf });
}

/** One blocker with its texts, uncut lists still whole (see {@link takeContext}). */
interface BlockerParts {
  entry: ContextBlocker;
  resolutions: { id: string; resolution: string }[];
}

function blockerContext(blocker: Task): BlockerParts {
  const entry: ContextBlocker = { id: blocker.id, name: blocker.name };
  if (blocker.resolution) entry.resolution = cutText(blocker.resolution);
  const last = blocker.notes?.at(-1);
  if (last) entry.last_note = contextNote(last);
  const resolutions: BlockerParts["resolutions"] = [];
  if (blocker.tasks.length > 0) {
    let count = 0;
    const leaves: Task[] = [];
    for (const { task } of subtree(blocker)) {
      if (task.tasks.length > 0 || !task.resolution) continue;
      count++;
      leaves.push(task);
      if (leaves.length > CONTEXT.resolutions) leaves.shift();
    }
    for (const t of leaves) resolutions.push({ id: t.id, resolution: cutText(t.resolution!) });
    if (count > leaves.length) entry.more_resolutions = count - leaves.length;
  }
  return { entry, resolutions };
}

function contextNote(note: Note): ContextNote {
  return { agent: note.agent, at: note.at, text: cutText(note.text) };
}

/** What {@link fit} chooses from. */
interface Parts {
  blockers: BlockerParts[];
  previous: { agent: string; notes: Note[] } | undefined;
  own: Note[];
  /** The leaf's notes in the order they were written (oldest first). */
  order: readonly Note[];
}

/** One thing a context can leave out, in the order they go, with about how many characters it frees. */
type Slot =
  | { kind: "last_note" | "resolution" | "blocker"; of: BlockerParts; cost: number }
  | { kind: "leaf_resolution"; item: object; cost: number }
  | { kind: "note"; note: Note; cost: number };

/** The context of `parts` under the size limit: see {@link takeContext} for what goes first. */
function fit(parts: Parts): TakeContext | undefined {
  const slots: Slot[] = [];
  for (const of of parts.blockers) {
    if (of.entry.last_note) slots.push({ kind: "last_note", of, cost: 13 + jsonLength(of.entry.last_note) });
    for (const item of of.resolutions) {
      slots.push({ kind: "leaf_resolution", item, cost: jsonLength(item) + 1 });
    }
    if (of.entry.resolution !== undefined) {
      slots.push({ kind: "resolution", of, cost: 14 + jsonLength(of.entry.resolution) });
    }
  }
  for (const of of parts.blockers) {
    slots.push({ kind: "blocker", of, cost: jsonLength({ id: of.entry.id, name: of.entry.name }) + 1 });
  }
  const notes = [...parts.previous?.notes ?? [], ...parts.own];
  const age = new Map(parts.order.map((note, i) => [note, i]));
  notes.sort((a, b) => age.get(a)! - age.get(b)!);
  for (const note of notes) slots.push({ kind: "note", note, cost: jsonLength(contextNote(note)) + 1 });

  // Estimate how many go, then settle it on the exact size (estimates are off by a few characters).
  const fits = (context: TakeContext | undefined) => jsonLength(context ?? {}) < CONTEXT.totalLength;
  let size = jsonLength(assemble(parts, slots, 0) ?? {}) + 16; // 16: room for `,"dropped":N`
  let k = 0;
  while (size >= CONTEXT.totalLength && k < slots.length) size -= slots[k++]!.cost;
  while (k < slots.length && !fits(assemble(parts, slots, k))) k++;
  while (k > 0 && fits(assemble(parts, slots, k - 1))) k--;
  return assemble(parts, slots, k);
}

/** The context with the first `dropped` slots left out; undefined when nothing is left. */
function assemble(parts: Parts, slots: readonly Slot[], dropped: number): TakeContext | undefined {
  const gone = new Set<unknown>();
  const cut = new Map<BlockerParts, Set<string>>();
  for (let i = 0; i < dropped; i++) {
    const slot = slots[i]!;
    if (slot.kind === "leaf_resolution") gone.add(slot.item);
    else if (slot.kind === "note") gone.add(slot.note);
    else if (slot.kind === "blocker") gone.add(slot.of);
    else {
      const kinds = cut.get(slot.of) ?? new Set();
      kinds.add(slot.kind);
      cut.set(slot.of, kinds);
    }
  }
  const context: TakeContext = {};
  const blockers: ContextBlocker[] = [];
  for (const of of parts.blockers) {
    if (gone.has(of)) continue;
    const kinds = cut.get(of);
    const entry: ContextBlocker = { id: of.entry.id, name: of.entry.name };
    if (of.entry.resolution !== undefined && !kinds?.has("resolution")) {
      entry.resolution = of.entry.resolution;
    }
    const resolutions = of.resolutions.filter((item) => !gone.has(item));
    if (resolutions.length > 0) entry.resolutions = resolutions;
    if (of.entry.more_resolutions !== undefined) entry.more_resolutions = of.entry.more_resolutions;
    if (of.entry.last_note && !kinds?.has("last_note")) entry.last_note = of.entry.last_note;
    blockers.push(entry);
  }
  if (blockers.length > 0) context.blockers = blockers;
  const previous = parts.previous?.notes.filter((note) => !gone.has(note)) ?? [];
  if (previous.length > 0) {
    context.previous = { agent: parts.previous!.agent, notes: previous.map(contextNote) };
  }
  const own = parts.own.filter((note) => !gone.has(note));
  if (own.length > 0) context.notes = own.map(contextNote);
  if (dropped > 0) context.dropped = dropped;
  return Object.keys(context).length === 0 ? undefined : context;
}

function jsonLength(value: unknown): number {
  return JSON.stringify(value).length;
}

/** The one line a start's message gives its `context`: what it holds and what it left out. */
export function contextLine(context: TakeContext): string {
  const parts: string[] = [];
  const blockers = context.blockers ?? [];
  if (blockers.length > 0) {
    parts.push(
      `${plural(blockers.length, "finished blocker")} (${blockers.map((b) => b.id).join(", ")}) ` +
        `with what ${blockers.length === 1 ? "its" : "their"} agents left`,
    );
  }
  if (context.previous) {
    parts.push(
      `${plural(context.previous.notes.length, "note")} by ${context.previous.agent}, who held it before`,
    );
  }
  if (context.notes) parts.push(`${plural(context.notes.length, "note")} on this task`);
  const dropped = context.dropped
    ? ` ${plural(context.dropped, "older item")} left out to keep it short (getTask has ${
      context.dropped === 1 ? "it" : "them"
    }).`
    : "";
  return `Context (read it first): ${parts.join("; ") || "nothing that fits"}.${dropped}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
