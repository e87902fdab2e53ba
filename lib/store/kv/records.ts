/**
 * Task records in Deno KV and how a cached tree takes in records other processes wrote.
 *
 * A task record is the task's own fields with `tasks` holding its child ids in order; the root
 * record (id `""`) holds only the root ids. Catching up first tries to patch the cached tree
 * through its journaled primitives (field and status changes, subtrees added or removed: cost in
 * proportion to the change); a change it cannot express that way (a task moved or reordered) falls
 * back to re-linking the objects and re-indexing the tree (cost in proportion to the session).
 */
import { z } from "zod";
import { DomainError } from "../../domain/errors.ts";
import { type Task, TaskIdSchema, TaskSchema } from "../../domain/schemas.ts";
import { EDITABLE_FIELDS, TaskTree } from "../../domain/task_tree.ts";
import type { RenameReport } from "../old_names.ts";
import { decodeRecordAs } from "./codec.ts";

const TaskRecordSchema = TaskSchema.omit({ id: true, tasks: true }).extend({ tasks: z.array(TaskIdSchema) });
const RootRecordSchema = z.object({ tasks: z.array(TaskIdSchema) });

/** A parsed task record: the task without its subtasks, and its child ids. */
export interface ParsedRecord {
  task: Task;
  childIds: string[];
}

/** What a catch-up read: task records by id (null: gone), and the root ids when they changed. */
export interface Delta {
  records: Map<string, ParsedRecord | null>;
  rootIds: string[] | undefined;
}

/** The stored form of a task (its fields, child ids) or of the root list (`id === ""`). */
export function recordOf(tree: TaskTree, id: string): unknown {
  if (id === "") return { tasks: tree.roots.map((t) => t.id) };
  const { id: _id, tasks, ...fields } = tree.get(id)!;
  return { ...fields, tasks: tasks.map((t) => t.id) };
}

/** Parses a task record's chunks; undefined when malformed. `onRename`: see codec.ts. */
export function parseRecord(
  parts: Uint8Array[],
  id: string,
  onRename?: RenameReport,
): ParsedRecord | undefined {
  const parsed = decodeRecordAs(TaskRecordSchema, parts, onRename);
  if (!parsed) return undefined;
  const { tasks: childIds, ...fields } = parsed;
  return { task: { id, ...fields, tasks: [] }, childIds };
}

/** Parses the root record's chunks: the root ids in order; undefined when malformed. `onRename`: see codec.ts. */
export function parseRoot(parts: Uint8Array[], onRename?: RenameReport): string[] | undefined {
  return decodeRecordAs(RootRecordSchema, parts, onRename)?.tasks;
}

/** Parses the records of a catch-up; undefined when one is malformed. */
export function parseDelta(raw: Map<string, Uint8Array[] | null>): Delta | undefined {
  const records = new Map<string, ParsedRecord | null>();
  let rootIds: string[] | undefined;
  for (const [id, parts] of raw) {
    if (id === "") {
      if (!parts) return undefined;
      rootIds = parseRoot(parts);
      if (!rootIds) return undefined;
      continue;
    }
    const record = parts ? parseRecord(parts, id) : null;
    if (record === undefined) return undefined;
    records.set(id, record);
  }
  return { records, rootIds };
}

/**
 * Brings `tree` up to the records in `delta`: patched in place when possible, else rebuilt from its
 * re-linked objects. Returns the current tree, or undefined when the records do not add up (the
 * caller then reads the whole session).
 */
export function applyDelta(tree: TaskTree, delta: Delta): TaskTree | undefined {
  if (patch(tree, delta)) return tree;
  return relink(tree, delta);
}

class CannotPatch extends Error {}

function patch(tree: TaskTree, { records, rootIds }: Delta): boolean {
  const tx = tree.begin();
  try {
    const lists: [Task | undefined, string[]][] = rootIds ? [[undefined, rootIds]] : [];
    for (const [id, record] of records) {
      const task = tree.get(id);
      if (!task || !record) continue;
      for (const key of EDITABLE_FIELDS) {
        if (JSON.stringify(task[key]) !== JSON.stringify(record.task[key])) {
          tree.setField(task, key, record.task[key] as never);
        }
      }
      lists.push([task, record.childIds]);
    }
    for (const [parent, ids] of lists) {
      const keep = new Set(ids);
      for (const child of [...(parent?.tasks ?? tree.roots)]) if (!keep.has(child.id)) tree.remove(child);
    }
    const build = (id: string): Task => {
      const record = records.get(id);
      if (!record || tree.get(id)) throw new CannotPatch(); // a move: the task is not new
      return { ...record.task, tasks: record.childIds.map(build) };
    };
    for (const [parent, ids] of lists) {
      const list = parent?.tasks ?? tree.roots;
      for (let i = 0; i < ids.length; i++) if (list[i]?.id !== ids[i]) tree.insert(parent, i, build(ids[i]!));
      if (list.length !== ids.length) throw new CannotPatch();
    }
    // Statuses last: parents' statuses were stored after their children's.
    for (const [id, record] of records) {
      const task = tree.get(id);
      if (task && record && task.status !== record.task.status) tree.setStatus(task, record.task.status);
    }
    tx.commit();
    return true;
  } catch (error) {
    tx.rollback();
    if (error instanceof CannotPatch || error instanceof DomainError) return false;
    throw error;
  }
}

function relink(old: TaskTree, { records, rootIds }: Delta): TaskTree | undefined {
  const objects = new Map<string, Task>();
  for (const [id, record] of records) if (record) objects.set(id, old.get(id) ?? { id } as Task);
  const lookup = (id: string): Task | undefined =>
    objects.get(id) ?? (records.has(id) ? undefined : old.get(id));
  const resolve = (ids: string[]): Task[] | undefined => {
    const list: Task[] = [];
    for (const id of ids) {
      const task = lookup(id);
      if (!task) return undefined;
      list.push(task);
    }
    return list;
  };
  const lists = new Map<string, Task[]>();
  for (const [id, record] of records) {
    if (!record) continue;
    const list = resolve(record.childIds);
    if (!list) return undefined;
    lists.set(id, list);
  }
  const roots = rootIds ? resolve(rootIds) : old.roots;
  if (!roots) return undefined;
  // Everything resolved: change the cached objects in place (untouched parents keep theirs).
  for (const [id, record] of records) {
    if (!record) continue;
    const task = objects.get(id)!;
    for (const key of Object.keys(task)) delete (task as Record<string, unknown>)[key];
    Object.assign(task, record.task, { tasks: lists.get(id)! });
  }
  try {
    return new TaskTree(roots);
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}
