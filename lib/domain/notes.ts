/**
 * Context that travels with the work (docs/teams.md "Context that travels with the work"): notes on tasks,
 * and the `context` a start or claim that takes a leaf hands its agent: the blockers' resolutions, last
 * notes and where their work lives, the stale holder's notes and `git` record on a takeover, the leaf's
 * own notes, cut to stay small.
 *
 * Tree rules beside the team rules (team.ts), pure: the clock is the caller's (`Actor.now`), and every
 * store runs them inside its atomic change, so a context is read from the very tree the start was
 * decided on. A task's `notes` list is never changed in place (an append makes a new list): history
 * deltas and restores may share the old one.
 */
import { fail } from "./errors.ts";
import { gitSummary } from "./git_record.ts";
import { isoTime } from "./iso_time.ts";
import { CONTEXT, LIMITS } from "./limits.ts";
import {
  ANONYMOUS_NOTE_AGENT,
  type ContextBlocker,
  type ContextNote,
  type GitRecord,
  type Note,
  NoteTextSchema,
  type TakeContext,
  type Task,
} from "./schemas.ts";
import { subtree, type TaskTree } from "./task_tree.ts";
import { type Actor, blockersOf } from "./team.ts";

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
 *   rest counted), its last note, and where its work lives (`git`: branch, head, work tree);
 * - `previous`: on a takeover, the holder's last {@link CONTEXT}.notes notes on the leaf, and its
 *   last `git` record there (which branch and work tree to open, which files it left uncommitted);
 * - `notes`: the leaf's last {@link CONTEXT}.notes notes by others than that holder (a note is
 *   listed once: the holder's are in `previous`).
 *
 * Each text is cut by {@link cutText}; the whole stays under {@link CONTEXT}.totalLength characters
 * of JSON, dropping the oldest first and counting what it dropped in `dropped`. Oldest, in the order
 * things happen: a blocker was finished before the leaf could start, so first the blockers' texts go
 * (the first listed first; of a blocker, its last note, then its leaves' resolutions, then its own,
 * then its `git`), then the blockers themselves, then the notes on the leaf, oldest first, then the
 * holder's `git` record, the newest thing on the leaf: its dirty paths from the last listed (not counted
 * in `dropped`: its `dirty_count` says how many there are), then the record itself.
 */
export function takeContext(tree: TaskTree, leaf: Task, takeover?: Takeover): TakeContext | undefined {
  const blockers = blockersOf(tree, leaf).map(blockerParts);
  const onLeaf = leaf.notes ?? [];
  let holder: string | undefined;
  let previous: Note[] = [];
  let git: GitRecord | undefined;
  if (takeover) {
    holder = noteAgent(takeover.from);
    previous = onLeaf.filter((note) => note.agent === holder).slice(-CONTEXT.notes);
    if (leaf.git && leaf.git.agent === takeover.from) git = contextGit(leaf.git);
  }
  const own = onLeaf.filter((note) => previous.length === 0 || note.agent !== holder).slice(-CONTEXT.notes);
  const parts: Parts = { blockers, holder, previous, git, own, order: onLeaf };
  let context = fit(parts, CONTEXT.totalLength);
  // The sizes fit counts are exact (a property test holds them to JSON.stringify); this only guards
  // the limit against a slip in them.
  const length = jsonLength(context ?? {});
  if (length >= CONTEXT.totalLength) context = fit(parts, 2 * CONTEXT.totalLength - length - 1);
  return context;
}

/** A blocker as a context may show it: the task, and its leaves' resolutions a parent lists (see {@link takeContext}). */
interface BlockerParts {
  task: Task;
  /** Where its work lives, in short; undefined when it has no record. */
  git: ContextBlocker["git"];
  /** A parent's last leaves with a resolution, in tree order. */
  leaves: Task[];
  /** A parent's earlier leaves with a resolution, not listed. */
  more: number;
}

function blockerParts(blocker: Task): BlockerParts {
  const leaves: Task[] = [];
  let count = 0;
  if (blocker.tasks.length > 0) {
    for (const { task } of subtree(blocker)) {
      if (task.tasks.length > 0 || !task.resolution) continue;
      count++;
      leaves.push(task);
      if (leaves.length > CONTEXT.resolutions) leaves.shift();
    }
  }
  return { task: blocker, git: blocker.git && gitBrief(blocker.git), leaves, more: count - leaves.length };
}

function contextNote(note: Note): ContextNote {
  return { agent: note.agent, at: note.at, text: cutText(note.text) };
}

/** A blocker's `git` as a context shows it: branch, head and work tree, texts cut; undefined when none is known. */
function gitBrief(git: GitRecord): ContextBlocker["git"] {
  const brief: NonNullable<ContextBlocker["git"]> = {};
  if (git.branch !== undefined) brief.branch = cutText(git.branch);
  if (git.head !== undefined) brief.head = git.head;
  if (git.worktree !== undefined) brief.worktree = cutText(git.worktree);
  return Object.keys(brief).length > 0 ? brief : undefined;
}

/** A `git` record as a context shows it: every text cut, as a note's is. */
function contextGit(git: GitRecord): GitRecord {
  const out: GitRecord = { ...git };
  for (const key of ["worktree", "branch", "upstream"] as const) {
    if (out[key] !== undefined) out[key] = cutText(out[key]);
  }
  if (out.dirty) out.dirty = out.dirty.map((path) => cutText(path));
  return out;
}

/** What {@link fit} chooses from. */
interface Parts {
  blockers: BlockerParts[];
  /** On a takeover, the agent that held the leaf, as its notes name it. */
  holder: string | undefined;
  /** The holder's notes on the leaf listed (oldest first). */
  previous: Note[];
  /** The holder's `git` record on the leaf, texts cut. */
  git: GitRecord | undefined;
  /** The leaf's other notes listed (oldest first). */
  own: Note[];
  /** The leaf's notes in the order they were written (oldest first). */
  order: readonly Note[];
}

/**
 * The context of `parts` in under `limit` characters of JSON; see {@link takeContext} for what goes
 * first. What is kept is always the newest part of that order, so it is built from the other end:
 * newest first, each piece with the exact characters it adds (containers and commas included), until
 * the next would not fit; everything older is dropped and counted. Texts that are dropped are never
 * cut or measured, so a context costs what it keeps, plus one step per blocker.
 */
function fit(parts: Parts, limit: number): TakeContext | undefined {
  const { blockers } = parts;
  let total = parts.previous.length + parts.own.length + (parts.git ? 1 : 0);
  for (const b of blockers) {
    total += 1 + (b.task.notes?.length ? 1 : 0) + b.leaves.length + (b.task.resolution ? 1 : 0) +
      (b.git ? 1 : 0);
  }
  let size = 2; // {}
  let keys = 0; // top-level keys: blockers, previous, notes
  let kept = 0;
  let full = false;
  /**
   * Keeps a piece of `cost` characters (a new top-level key with `newKey`; one `dropped` does not count
   * when not `counted`) if it fits; from the first that does not, none.
   */
  const keep = (cost: number, newKey = false, counted = true): boolean => {
    if (full) return false;
    const comma = newKey && keys > 0 ? 1 : 0;
    const keysThen = keys + (newKey ? 1 : 0);
    const dropped = total - kept - (counted ? 1 : 0);
    const droppedLength = dropped === 0 ? 0 : 10 + String(dropped).length + (keysThen > 0 ? 1 : 0); // "dropped":N
    if (size + cost + comma + droppedLength >= limit) return !(full = true);
    size += cost + comma;
    keys = keysThen;
    if (counted) kept++;
    return true;
  };

  // The holder's git record, the newest thing on the leaf: "previous":{"agent":A,"notes":[],"git":{…}},
  // then its dirty paths, the first listed first: ,"dirty":[…].
  const container = parts.holder === undefined ? 0 : 32 + stringLength(parts.holder); // "previous":{"agent":A,"notes":[]}
  let previousGit: GitRecord | undefined;
  const dirty: string[] = [];
  if (parts.git) {
    const { dirty: paths = [], ...rest } = parts.git;
    if (keep(container + 7 + jsonLength(rest), true)) { // ,"git":{…}
      previousGit = parts.git;
      for (const path of paths) {
        if (!keep(dirty.length === 0 ? 11 + stringLength(path) : 1 + stringLength(path), false, false)) break;
        dirty.push(path);
      }
    }
  }
  // The notes on the leaf, newest first: "previous":{"agent":A,"notes":[…]} and "notes":[…].
  const age = new Map(parts.order.map((note, i) => [note, i]));
  const onLeaf = [...parts.previous, ...parts.own].sort((a, b) => age.get(b)! - age.get(a)!);
  const previous: ContextNote[] = [];
  const own: ContextNote[] = [];
  for (const note of onLeaf) {
    const mine = note.agent === parts.holder && parts.previous.length > 0;
    const list = mine ? previous : own;
    const item = contextNote(note);
    const length = noteLength(item);
    const opened = list.length > 0 || (mine && previousGit !== undefined);
    const cost = list.length > 0 ? 1 + length : opened ? length : (mine ? container : 10) + length;
    if (!keep(cost, !opened)) break;
    list.unshift(item);
  }
  // The blockers, the last listed first: {"id":I,"name":N,"more_resolutions":M} in "blockers":[…].
  const entries: (ContextBlocker | undefined)[] = blockers.map(() => undefined);
  let shown = 0;
  for (let i = blockers.length - 1; i >= 0; i--) {
    const { task, more } = blockers[i]!;
    const length = 15 + stringLength(task.id) + stringLength(task.name) +
      (more > 0 ? 20 + String(more).length : 0);
    if (!keep(shown === 0 ? 13 + length : 1 + length, shown === 0)) break;
    shown++;
    entries[i] = { id: task.id, name: task.name, ...(more > 0 ? { more_resolutions: more } : {}) };
  }
  // Their texts, the last listed first; of each, its git, its resolution, its leaves' (last first), its last note.
  for (let i = blockers.length - 1; i >= 0 && !full; i--) {
    const { task, leaves, git } = blockers[i]!;
    const entry = entries[i]!;
    if (git && keep(7 + jsonLength(git))) entry.git = git; // ,"git":{…}
    if (task.resolution) {
      const resolution = cutText(task.resolution);
      if (keep(14 + stringLength(resolution))) entry.resolution = resolution; // ,"resolution":R
    }
    const listed: { id: string; resolution: string }[] = [];
    for (let l = leaves.length - 1; l >= 0; l--) {
      const item = { id: leaves[l]!.id, resolution: cutText(leaves[l]!.resolution!) };
      const length = 21 + stringLength(item.id) + stringLength(item.resolution); // {"id":I,"resolution":R}
      if (!keep(listed.length === 0 ? 17 + length : 1 + length)) break; // ,"resolutions":[…]
      listed.unshift(item);
    }
    if (listed.length > 0) entry.resolutions = listed;
    const last = task.notes?.at(-1);
    if (last) {
      const note = contextNote(last);
      if (keep(13 + noteLength(note))) entry.last_note = note; // ,"last_note":{…}
    }
  }

  const context: TakeContext = {};
  const shownBlockers = entries.filter((entry) => entry !== undefined).map((entry) => ordered(entry));
  if (shownBlockers.length > 0) context.blockers = shownBlockers;
  if (previous.length > 0 || previousGit) {
    context.previous = { agent: parts.holder!, notes: previous };
    if (previousGit) context.previous.git = withDirty(previousGit, dirty);
  }
  if (own.length > 0) context.notes = own;
  if (kept < total) context.dropped = total - kept;
  return Object.keys(context).length === 0 ? undefined : context;
}

/** A blocker's fields in the order the schema lists them. */
function ordered(entry: ContextBlocker): ContextBlocker {
  const out: ContextBlocker = { id: entry.id, name: entry.name };
  if (entry.resolution !== undefined) out.resolution = entry.resolution;
  if (entry.resolutions) out.resolutions = entry.resolutions;
  if (entry.more_resolutions !== undefined) out.more_resolutions = entry.more_resolutions;
  if (entry.last_note) out.last_note = entry.last_note;
  if (entry.git) out.git = entry.git;
  return out;
}

/** `git` with `dirty` holding only the paths kept, in its own place among the fields. */
function withDirty(git: GitRecord, dirty: string[]): GitRecord {
  const out = {} as GitRecord;
  for (const [key, value] of Object.entries(git)) {
    if (key !== "dirty") Object.assign(out, { [key]: value });
    else if (dirty.length > 0) out.dirty = dirty;
  }
  return out;
}

/** What JSON.stringify writes as more than itself: quote, backslash, control characters, surrogates. */
// deno-lint-ignore no-control-regex -- control characters are exactly what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Characters of `text` as a JSON string, quotes and escapes included. */
function stringLength(text: string): number {
  return ESCAPED.test(text) ? JSON.stringify(text).length : text.length + 2;
}

/** Characters of a note in a context as JSON: {"agent":A,"at":T,"text":X}. */
function noteLength(note: ContextNote): number {
  return 24 + stringLength(note.agent) + stringLength(note.at) + stringLength(note.text);
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
  const previous = context.previous;
  if (previous) {
    const work = previous.git ? `its work: ${gitSummary(previous.git)}` : "";
    parts.push(
      previous.notes.length === 0
        ? `${previous.agent}, who held it before, left ${work}`
        : `${plural(previous.notes.length, "note")} by ${previous.agent}, who held it before${
          work ? `, and ${work}` : ""
        }`,
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
