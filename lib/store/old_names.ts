/**
 * Names an older version stored with a lone surrogate (docs/troubleshooting.md "Names from older versions"). Such a
 * string is no longer accepted from agents; a store that holds one still loads, lists and exports:
 * every string is read well-formed, each lone surrogate replaced by U+FFFD (what Deno KV's UTF-8 keys
 * made of it anyway), and a name that then meets another one (two session ids, projects or object
 * keys of one object; two task ids of one tree) gets the first free suffix `~2`, `~3`, … Each renamed
 * name is reported, so the log says what became of it; nothing is dropped. The next write stores the
 * repaired names.
 */
import { setOwn } from "../domain/own_keys.ts";
import { DEFAULT_SESSION } from "../domain/names.ts";

/**
 * Whether JSON text as `JSON.stringify` writes it may hold a lone surrogate: it always escapes one
 * (`\udXXX`), and writes every other character as it is. A cheap test before any repair.
 */
export function mayHoldLoneSurrogates(text: string): boolean {
  return /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(text);
}

/** Whether `s` holds a lone surrogate. */
function illFormed(s: string): boolean {
  return !s.isWellFormed();
}

/** `wanted`, or `wanted~2`, `wanted~3`, … the first that `taken` does not hold. */
function freeName(wanted: string, taken: ReadonlySet<string>): string {
  if (!taken.has(wanted)) return wanted;
  for (let n = 2;; n++) if (!taken.has(`${wanted}~${n}`)) return `${wanted}~${n}`;
}

/** Reports a renamed name: `what` and both names as JSON (so a lone surrogate shows as `\udXXX`). */
export type RenameReport = (message: string) => void;

function report(onRename: RenameReport, what: string, from: string, to: string): void {
  onRename(
    `${what} ${JSON.stringify(from)} held a lone surrogate (stored by an older version); it is now ${
      JSON.stringify(to)
    }`,
  );
}

/**
 * `value` with every string and every object key well-formed. Keys that meet after the repair are
 * told apart (the key that was well-formed keeps its name); each renamed key is reported as `what`
 * (the caller's name for the keys at the top: "session", "project"; deeper keys are "key").
 */
export function wellFormedValue(value: unknown, onRename: RenameReport, what = "key"): unknown {
  if (typeof value === "string") return value.toWellFormed();
  if (Array.isArray(value)) return value.map((item) => wellFormedValue(item, onRename));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value);
  const taken = new Set(entries.map(([key]) => key).filter((key) => !illFormed(key)));
  for (const [key, item] of entries) {
    let name = key;
    if (illFormed(key)) {
      name = freeName(key.toWellFormed(), taken);
      taken.add(name);
      report(onRename, what, key, name);
    }
    setOwn(out, name, wellFormedValue(item, onRename));
  }
  return out;
}

interface TaskLike {
  id?: unknown;
  tasks?: unknown;
}

function* walkTasks(roots: unknown): Generator<TaskLike> {
  if (!Array.isArray(roots)) return;
  for (const task of roots) {
    if (task === null || typeof task !== "object") continue;
    yield task as TaskLike;
    yield* walkTasks((task as TaskLike).tasks);
  }
}

/**
 * Renames, in place, the task ids of one tree that hold a lone surrogate to well-formed ids no other
 * task of the tree has; `where` names the tree in the reports.
 */
export function wellFormedTaskIds(roots: unknown, where: string, onRename: RenameReport): void {
  const taken = new Set<string>();
  for (const task of walkTasks(roots)) {
    if (typeof task.id === "string" && !illFormed(task.id)) taken.add(task.id);
  }
  for (const task of walkTasks(roots)) {
    if (typeof task.id !== "string" || !illFormed(task.id)) continue;
    const id = freeName(task.id.toWellFormed(), taken);
    taken.add(id);
    report(onRename, `${where}: task id`, task.id, id);
    task.id = id;
  }
}

/** One namespace's part of a stored document, as far as names go. */
function repairSpace(space: unknown, where: string, onRename: RenameReport): unknown {
  if (space === null || typeof space !== "object" || Array.isArray(space)) return space;
  const part = space as Record<string, unknown>;
  const sessions = part.sessions;
  if (sessions !== null && typeof sessions === "object") {
    for (const [id, roots] of Object.entries(sessions)) {
      wellFormedTaskIds(roots, `${where}session ${JSON.stringify(id)}`, onRename);
    }
  }
  if (Array.isArray(part.works)) {
    for (const work of part.works) {
      const entry = work as { workId?: unknown; work_tasks?: unknown } | null;
      if (entry?.work_tasks) {
        wellFormedTaskIds(entry.work_tasks, `${where}work ${JSON.stringify(entry.workId)}`, onRename);
      }
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(part)) {
    const what = key === "sessions" || key === "history"
      ? `${where}session`
      : key === "progress"
      ? `${where}project`
      : "key";
    // A work entry's session id follows its session's new name (both become the same well-formed text).
    setOwn(out, key, key === "namespaces" ? value : wellFormedValue(value, onRename, what));
  }
  return out;
}

/**
 * A stored document (or a bare array of tasks) with every name and string well-formed (see the module
 * doc); `json` itself is returned when it needs nothing. Task ids are repaired before the rest, so a
 * task keeps a name no other task of its tree has.
 */
export function repairOldNames(json: unknown, onRename: RenameReport): unknown {
  if (Array.isArray(json)) {
    wellFormedTaskIds(json, `session "${DEFAULT_SESSION}"`, onRename);
    return wellFormedValue(json, onRename);
  }
  if (json === null || typeof json !== "object") return json;
  const doc = repairSpace(json, "", onRename) as Record<string, unknown>;
  const namespaces = (json as Record<string, unknown>).namespaces;
  if (namespaces !== null && typeof namespaces === "object" && !Array.isArray(namespaces)) {
    const out: Record<string, unknown> = {};
    for (const [name, space] of Object.entries(namespaces)) {
      setOwn(out, name, repairSpace(space, `namespace ${JSON.stringify(name)}: `, onRename));
    }
    doc.namespaces = out;
  }
  return doc;
}
