/**
 * The whole store as plain in-memory state, with undoable changes and its JSON document form.
 * The memory store is this state; the JSON file store loads it from and writes it to its file.
 */
import { z } from "zod";
import { repairInvariants } from "../domain/invariants.ts";
import { type ProgressDoc, ProgressDocSchema } from "../domain/progress_doc.ts";
import { SessionIdSchema, TaskSchema } from "../domain/schemas.ts";
import { TaskTree } from "../domain/task_tree.ts";
import { type WorkEntry, WorkEntrySchema } from "../domain/work_lru.ts";

/**
 * The store document: every session's roots (R4.6), the work entries and the progress documents.
 * The JSON file store adds `rev`, a random name of each write, right after `version` (it tells the
 * store cheaply whether another process rewrote the file); exports leave it out.
 */
export const StoreDocumentSchema = z.object({
  version: z.literal(1),
  rev: z.string().optional(),
  sessions: z.record(SessionIdSchema, z.array(TaskSchema)),
  works: z.array(WorkEntrySchema).default([]),
  progress: z.record(z.string(), ProgressDocSchema).default({}),
});
/** See {@link StoreDocumentSchema}. */
export type StoreDocument = z.infer<typeof StoreDocumentSchema>;

/** A stored file: the document, or a bare array of root tasks (task-orchestrator-mcp's format, session "default"; docs/requirements.md C10). */
export const StoreFileSchema = z.union([z.array(TaskSchema), StoreDocumentSchema]);

/**
 * Validates a stored file's JSON against {@link StoreFileSchema}, choosing the branch by its shape
 * so that a problem is reported where it is (`sessions.s.0.status`), not as "invalid input".
 * Returns the value, or the first problem as `at PATH: MESSAGE`.
 */
export function validateStoreFile(
  json: unknown,
): { data: z.infer<typeof StoreFileSchema>; problem?: undefined } | { data?: undefined; problem: string } {
  const parsed = Array.isArray(json)
    ? z.array(TaskSchema).safeParse(json)
    : StoreDocumentSchema.safeParse(json);
  if (parsed.success) return { data: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { problem: `at ${issue.path.join(".") || "top level"}: ${issue.message}` };
}

/** A change applied in memory that can still be undone if it cannot be made durable. */
export interface Applied<T> {
  result: T;
  undo: () => void;
}

/** See the module doc. */
export class StoreState {
  readonly sessions = new Map<string, TaskTree>();
  readonly works = new Map<string, WorkEntry>();
  readonly progress = new Map<string, ProgressDoc>();

  /** Builds state from a validated file value; returns it with the invariant repairs it needed. */
  static fromFile(value: z.infer<typeof StoreFileSchema>): { state: StoreState; repairs: string[] } {
    const doc: StoreDocument = Array.isArray(value)
      ? { version: 1, sessions: { default: value }, works: [], progress: {} }
      : value;
    const state = new StoreState();
    const repairs: string[] = [];
    for (const [id, roots] of Object.entries(doc.sessions)) {
      const tree = new TaskTree(roots);
      tree.transact((t) => {
        for (const fix of repairInvariants(t)) repairs.push(`session "${id}": ${fix}`);
      });
      state.sessions.set(id, tree);
    }
    for (const entry of doc.works) state.works.set(entry.workId, entry);
    for (const [project, progressDoc] of Object.entries(doc.progress)) {
      state.progress.set(project, progressDoc);
    }
    return { state, repairs };
  }

  /** The document to write; it shares the live tasks and entries (clone it to keep it). */
  toDocument(): StoreDocument {
    const sessions: Record<string, unknown> = {};
    for (const [id, tree] of this.sessions) sessions[id] = tree.roots;
    return {
      version: 1,
      sessions: sessions as StoreDocument["sessions"],
      works: [...this.works.values()],
      progress: Object.fromEntries(this.progress),
    };
  }

  /** Replaces everything with `other`'s contents (taken, not copied); undo restores the old. */
  replaceWith(other: StoreState): Applied<void> {
    const before = [new Map(this.sessions), new Map(this.works), new Map(this.progress)] as const;
    const fill = (
      sessions: ReadonlyMap<string, TaskTree>,
      works: ReadonlyMap<string, WorkEntry>,
      progress: ReadonlyMap<string, ProgressDoc>,
    ) => {
      this.sessions.clear();
      this.works.clear();
      this.progress.clear();
      for (const [id, tree] of sessions) this.sessions.set(id, tree);
      for (const [id, entry] of works) this.works.set(id, entry);
      for (const [project, doc] of progress) this.progress.set(project, doc);
    };
    fill(other.sessions, other.works, other.progress);
    return { result: undefined, undo: () => fill(...before) };
  }

  /** Applies `fn` to a session's tree (created when absent) as one transaction. */
  applyTree<T>(sessionId: string, fn: (tree: TaskTree) => T): Applied<T> {
    const existing = this.sessions.get(sessionId);
    const tree = existing ?? new TaskTree();
    const { result, rollback } = tree.transact(fn);
    if (!existing) this.sessions.set(sessionId, tree);
    return {
      result,
      undo: () => {
        rollback();
        if (!existing) this.sessions.delete(sessionId);
      },
    };
  }

  /** Applies `fn` to the work entries; undo restores the entries as they were. */
  applyWorks<T>(fn: (entries: Map<string, WorkEntry>) => T): Applied<T> {
    const before = new Map([...this.works].map(([id, e]) => [id, { ...e }]));
    const undo = () => {
      this.works.clear();
      for (const [id, e] of before) this.works.set(id, e);
    };
    try {
      return { result: fn(this.works), undo };
    } catch (error) {
      undo();
      throw error;
    }
  }

  /** Replaces a project's document with `fn`'s; undo restores the previous one. */
  applyProgress(
    project: string,
    fn: (current: ProgressDoc | undefined) => ProgressDoc,
  ): Applied<ProgressDoc> {
    const before = this.progress.get(project);
    const doc = fn(before);
    this.progress.set(project, doc);
    return {
      result: doc,
      undo: () => {
        if (before) this.progress.set(project, before);
        else this.progress.delete(project);
      },
    };
  }
}
