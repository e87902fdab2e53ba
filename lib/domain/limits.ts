/**
 * The documented limits (docs/troubleshooting.md "Limits"). Exceeding one is `LIMIT_EXCEEDED` and changes nothing.
 *
 * They keep one tree small enough to answer fast and one stored value small enough for every store
 * (a Deno KV value is at most 64 KiB). Each is written here once. The tree's shape limits are
 * checked by {@link checkTreeShape} for every tool and for an import; text lengths by the zod
 * schemas (tool input and store files alike); document and snapshot sizes where they are parsed.
 */
import { fail } from "./errors.ts";

/** The limits; docs/troubleshooting.md "Limits" lists them. */
export const LIMITS = {
  sessionIdLength: 100,
  taskIdLength: 64,
  nameLength: 200,
  descriptionLength: 4000,
  resolutionLength: 4000,
  listItems: 20,
  listItemLength: 500,
  /** Ids in one task's `blocked_by`. */
  blockedBy: 50,
  /** One note's text, after trimming (`updateTask` `note`). */
  noteLength: 2000,
  /** Notes a task keeps: the last ones; `notes_dropped` counts the older ones. */
  notesKept: 20,
  /** Patterns in one task's `paths` (docs/teams.md "Paths and reservations"). */
  pathsPerTask: 32,
  /** One path pattern, in characters, as given and once normalised. */
  patternLength: 200,
  /** Paths or patterns one `checkPaths` call asks about. */
  pathsPerCheck: 1000,
  /** One path or pattern `checkPaths` asks about, in characters (a long path is still a path). */
  checkedPathLength: 4096,
  depth: 12,
  childrenPerTask: 1000,
  tasksPerCall: 500,
  tasksPerSession: 100_000,
  tableRows: 25,
  treeTextLines: 400,
  /** A project name (one progress document each). */
  projectLength: 200,
  /** A progress document, in characters of JSON text (one Deno KV value). */
  progressContentLength: 32_000,
  workDescriptionLength: 200,
  workSummaryLength: 20_000,
  /** A work entry's task snapshot, in characters of JSON: a bigger session is refused, not cut. */
  workSnapshotLength: 50_000,
  /** An HTTP request body, in bytes. */
  bodyBytes: 1024 * 1024,
  /** Nesting of JSON: a progress document, and a tool call's arguments (checked before parsing them). */
  jsonDepth: 64,
  /** One line of JSON-RPC over stdio, in bytes. */
  stdioLineBytes: 4 * 1024 * 1024,
  /** Seconds an HTTP request body may take to arrive. */
  bodySeconds: 30,
  /** Items one page of a list holds: `resources/list` (then `nextCursor`) and the dashboard's sessions. */
  listPage: 100,
  /** A task's `git` record: changed and untracked paths listed, the first in path order (`dirty_count` counts all). */
  gitDirty: 20,
  /** A task's `git` record: one text (work tree, branch, upstream, a path); a longer one is left out. */
  gitTextLength: 1024,
  /** Milliseconds `git` may take for one record; past them it is stopped and nothing is recorded. */
  gitMs: 2000,
  /**
   * Resources one `subscriptions/listen` stream may name (`resourceSubscriptions`). A lead watching
   * every session of a busy namespace (ten pages of `resources/list`) fits in one stream. The cost is
   * what bounds it: after each change in the namespace the server reads one version per name (about
   * 3 ms of CPU for 1,000 in the memory store, more in Deno KV), and a stream of 1,000 holds about
   * 0.5 MiB; 15,000 names took 37 MiB and made every other tenant's change cost 60 ms.
   */
  listenUris: 1000,
  /**
   * Resources all open listen streams of one credential may name together: two full streams, so a
   * client can open its new stream before it closes the old one; past it, one credential could make
   * every change in its namespace cost others' time.
   */
  listenUrisPerCredential: 2000,
  /**
   * Bytes of notifications queued for one listen stream whose client does not read (past what the
   * network holds): about 1,000 notifications; past it the stream is ended as a slow reader.
   */
  listenQueueBytes: 256 * 1024,
  /**
   * Milliseconds the commit guard gives git, and then its store (a file, Deno KV or `--url`), before it
   * says it cannot check (docs/guard.md): a hook must never hold a commit for long.
   */
  guardMs: 5000,
  /** Conflicts the commit guard lists one per line; the rest are counted. */
  guardLines: 50,
} as const;

/**
 * The sizes of the context a start or claim hands its agent (docs/teams.md "Context that travels with
 * the work"; lib/domain/notes.ts): not limits a call can exceed, but how much of the tree's notes and
 * resolutions a context carries.
 */
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
 * How deep `value` nests (a scalar is 0, `[]` and `{}` are 1), counted without recursion and
 * without looking further than `max + 1` levels, so any input is measured in bounded stack.
 */
export function jsonDepth(value: unknown, max: number = LIMITS.jsonDepth): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, above] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    const depth = above + 1;
    if (depth > deepest) deepest = depth;
    if (depth > max) return depth;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth]);
    }
  }
  return deepest;
}

/** A task or a task to create, as far as the shape limits look at it. */
export interface ShapeNode {
  id?: string | undefined;
  name?: string | undefined;
  tasks?: readonly ShapeNode[] | undefined;
}

/** Where new tasks go, for {@link checkTreeShape}. */
export interface ShapeContext {
  /** Levels above the new tasks: 0 at root level. */
  depthAbove?: number;
  /** The task whose list they join (absent: the root level). */
  parentId?: string | undefined;
  /** Tasks already in that list. */
  siblings?: number;
  /** Tasks the session holds besides the new ones; absent: not checked here. */
  existing?: number;
  /** Refuse more than {@link LIMITS}.tasksPerCall new tasks (a tool call, not an import). */
  oneCall?: boolean;
  /** Prefix naming the session in messages, e.g. `Session "s": `. */
  where?: string;
}

/**
 * The shape limits over tasks being added (a tool call) or loaded (an import), in one walk: depth,
 * direct subtasks per task, tasks per call and per session. Returns how many tasks `roots` holds.
 */
export function checkTreeShape(roots: readonly ShapeNode[], context: ShapeContext = {}): number {
  const where = context.where ?? "";
  const above = context.depthAbove ?? 0;
  checkChildren((context.siblings ?? 0) + roots.length, context.parentId, where);
  let count = 0;
  const stack = roots.map((task) => ({ task, depth: above + 1 }));
  while (stack.length > 0) {
    const { task, depth } = stack.pop()!;
    count++;
    if (depth > LIMITS.depth) {
      fail(
        "LIMIT_EXCEEDED",
        `${where}task "${
          task.id ?? task.name
        }" is nested ${depth} deep; tasks nest at most ${LIMITS.depth} levels. Flatten the plan.`,
      );
    }
    const children = task.tasks ?? [];
    checkChildren(children.length, task.id ?? task.name, where);
    for (const child of children) stack.push({ task: child, depth: depth + 1 });
  }
  if (context.oneCall) checkPerCall(count);
  if (context.existing !== undefined) checkPerSession(context.existing + count, where);
  return count;
}

/** Refuses a call that lists more than {@link LIMITS}.tasksPerCall tasks. */
export function checkPerCall(count: number): void {
  if (count > LIMITS.tasksPerCall) {
    fail(
      "LIMIT_EXCEEDED",
      `One call handles at most ${LIMITS.tasksPerCall} tasks; this one has ${count}. Send the rest in further calls, under their new parent.`,
    );
  }
}

/** Refuses a session that would hold more than {@link LIMITS}.tasksPerSession tasks. */
export function checkPerSession(total: number, where = ""): void {
  if (total > LIMITS.tasksPerSession) {
    fail(
      "LIMIT_EXCEEDED",
      `${where}a session holds at most ${LIMITS.tasksPerSession} tasks; this would make ${total}. Delete finished tasks or use another sessionId.`,
    );
  }
}

function checkChildren(count: number, owner: string | undefined, where: string): void {
  if (count > LIMITS.childrenPerTask) {
    fail(
      "LIMIT_EXCEEDED",
      `${where}${
        owner === undefined ? "the root level" : `task "${owner}"`
      } has ${count} subtasks; at most ${LIMITS.childrenPerTask} direct subtasks per task (root level too). Group them under new parents.`,
    );
  }
}
