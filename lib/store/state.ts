/**
 * The whole store as plain in-memory state, with undoable changes and its JSON document form.
 * The memory store is this state; the JSON file store loads it from and writes it to its file.
 * A {@link StoreState} holds one {@link SpaceState} per namespace (README "Namespaces").
 */
import { z } from "zod";
import {
  type HistoryContext,
  historyEntry,
  keepLast,
  oldestKept,
  recordChange,
  type SessionHistory,
  SessionHistorySchema,
} from "../domain/history.ts";
import { repairInvariants } from "../domain/invariants.ts";
import { ownObject, ownRecord } from "../domain/own_keys.ts";
import { type ProgressDoc, ProgressDocSchema } from "../domain/progress_doc.ts";
import { DEFAULT_NAMESPACE, NamespaceSchema, SessionIdSchema, TaskSchema } from "../domain/schemas.ts";
import { TaskTree } from "../domain/task_tree.ts";
import { type WorkEntry, WorkEntrySchema } from "../domain/work_lru.ts";
import type { HistoryPage, TreeChangeOptions, TreeUpdate } from "./store.ts";

/**
 * One namespace's data in a document: every session's roots (R4.6), the work entries, the progress
 * documents, and `history`, each session's revision and history entries (README "History and
 * undo"; exports leave it out). Every key is kept, `__proto__` included (own_keys.ts).
 */
export const SpaceDocumentSchema = z.object({
  sessions: ownRecord(SessionIdSchema, z.array(TaskSchema)),
  works: z.array(WorkEntrySchema).default([]),
  progress: ownRecord(z.string(), ProgressDocSchema).default({}),
  history: ownRecord(SessionIdSchema, SessionHistorySchema).optional(),
});
/** See {@link SpaceDocumentSchema}. */
export type SpaceDocument = z.infer<typeof SpaceDocumentSchema>;

/** A namespace named in a document's `namespaces` block: any valid name but `default` (top level). */
const OtherNamespaceSchema = NamespaceSchema.refine((name) => name !== DEFAULT_NAMESPACE, {
  message: `namespace "${DEFAULT_NAMESPACE}" is the document's top level, not an entry of "namespaces"`,
});

/**
 * The store document: namespace `default` at the top level (the format from before namespaces,
 * unchanged), the other namespaces in the optional `namespaces` block. The JSON file store adds
 * `rev`, a random name of each write, right after `version` (it tells the store cheaply whether
 * another process rewrote the file); exports leave it out.
 */
export const StoreDocumentSchema = z.object({
  version: z.literal(1),
  rev: z.string().optional(),
  ...SpaceDocumentSchema.shape,
  namespaces: ownRecord(OtherNamespaceSchema, SpaceDocumentSchema).optional(),
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

/** The JSON text of each history entry written so far (see {@link StoreState.historyJson}). */
const entryJson = new WeakMap<object, string>();

/** A change applied in memory that can still be undone if it cannot be made durable. */
export interface Applied<T> {
  result: T;
  undo: () => void;
}

/** One namespace's data (see the module doc). */
export class SpaceState {
  readonly sessions = new Map<string, TaskTree>();
  readonly works = new Map<string, WorkEntry>();
  readonly progress = new Map<string, ProgressDoc>();
  /** Each changed session's revision and kept history entries. */
  readonly history = new Map<string, SessionHistory>();

  /** Fills a space from a validated document part; `where` prefixes its repair messages. */
  static fromDocument(doc: SpaceDocument, repairs: string[], where = ""): SpaceState {
    const state = new SpaceState();
    for (const [id, roots] of Object.entries(doc.sessions)) {
      const tree = new TaskTree(roots);
      tree.transact((t) => {
        for (const fix of repairInvariants(t)) repairs.push(`${where}session "${id}": ${fix}`);
      });
      state.sessions.set(id, tree);
    }
    for (const entry of doc.works) state.works.set(entry.workId, entry);
    for (const [project, progressDoc] of Object.entries(doc.progress)) {
      state.progress.set(project, progressDoc);
    }
    for (const [id, history] of Object.entries(doc.history ?? {})) {
      if (state.sessions.has(id)) state.history.set(id, history);
    }
    return state;
  }

  /** Whether the space holds nothing: no session, work entry or progress document. */
  get empty(): boolean {
    return this.sessions.size === 0 && this.works.size === 0 && this.progress.size === 0;
  }

  /** The space's part of a document, without history; it shares the live tasks and entries (clone it to keep it). */
  toDocument(): Omit<SpaceDocument, "history"> {
    return {
      sessions: ownObject([...this.sessions].map(([id, tree]) => [id, tree.roots] as const)),
      works: [...this.works.values()],
      progress: ownObject(this.progress),
    };
  }

  /**
   * Each changed session's history as the JSON text of the document's `history` field. An entry never
   * changes once recorded, so its text is made once and reused by every later write.
   */
  historyJson(): string {
    const sessions: string[] = [];
    for (const [id, history] of this.history) {
      const entries = history.entries.map((entry) => {
        let text = entryJson.get(entry);
        if (text === undefined) entryJson.set(entry, text = JSON.stringify(entry));
        return text;
      });
      sessions.push(
        `${JSON.stringify(id)}:{"revision":${history.revision},"entries":[${entries.join(",")}]}`,
      );
    }
    return `{${sessions.join(",")}}`;
  }

  /**
   * Replaces everything with `other`'s contents (taken, not copied); undo restores the old. History
   * does not come along: the sessions start again at revision 0 (an import is not undone by a restore).
   */
  replaceWith(other: SpaceState): Applied<void> {
    const before = [
      new Map(this.sessions),
      new Map(this.works),
      new Map(this.progress),
      new Map(this.history),
    ] as const;
    const fill = (
      sessions: ReadonlyMap<string, TaskTree>,
      works: ReadonlyMap<string, WorkEntry>,
      progress: ReadonlyMap<string, ProgressDoc>,
      history: ReadonlyMap<string, SessionHistory>,
    ) => {
      this.sessions.clear();
      this.works.clear();
      this.progress.clear();
      this.history.clear();
      for (const [id, tree] of sessions) this.sessions.set(id, tree);
      for (const [id, entry] of works) this.works.set(id, entry);
      for (const [project, doc] of progress) this.progress.set(project, doc);
      for (const [id, h] of history) this.history.set(id, h);
    };
    fill(other.sessions, other.works, other.progress, new Map());
    return { result: undefined, undo: () => fill(...before) };
  }

  /**
   * Applies `fn` to a session's tree (created when absent) as one transaction; a change that changed
   * something gets the next revision and a history entry (the last `historySize` are kept).
   */
  applyTree<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryContext) => T,
    options: TreeChangeOptions & { historySize: number },
  ): Applied<TreeUpdate<T>> {
    const existing = this.sessions.get(sessionId);
    const tree = existing ?? new TaskTree();
    const past = this.history.get(sessionId) ?? { revision: 0, entries: [] };
    const view: HistoryContext = {
      revision: past.revision,
      oldest: oldestKept(past.revision, past.entries[0]?.revision, options.historySize),
      historySize: options.historySize,
      deltas: options.undoTo === undefined
        ? []
        : past.entries.filter((e) => e.revision > options.undoTo!).map((e) => e.delta).reverse(),
    };
    const { result, changes, rollback } = tree.transact((t) => fn(t, view));
    if (!existing) this.sessions.set(sessionId, tree);
    const delta = recordChange(tree, changes);
    let revision = past.revision;
    if (delta.length > 0) {
      revision++;
      const entry = historyEntry(tree, delta, { revision, tool: options.tool, at: new Date().toISOString() });
      this.history.set(sessionId, { revision, entries: keepLast(past.entries, entry, options.historySize) });
    }
    return {
      result: { result, revision },
      undo: () => {
        rollback();
        if (!existing) this.sessions.delete(sessionId);
        if (revision !== past.revision) {
          if (past.revision === 0) this.history.delete(sessionId);
          else this.history.set(sessionId, past);
        }
      },
    };
  }

  /** A session's revision and newest `limit` entries kept (of the last `historySize`). */
  readHistory(sessionId: string, limit: number, historySize: number): HistoryPage {
    const past = this.history.get(sessionId) ?? { revision: 0, entries: [] };
    const oldest = oldestKept(past.revision, past.entries[0]?.revision, historySize);
    const entries = oldest === undefined ? [] : past.entries.filter((e) => e.revision >= oldest);
    return {
      revision: past.revision,
      oldest,
      entries: entries.slice(-limit).reverse().map(({ delta: _delta, ...entry }) => entry),
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

/** See the module doc: the spaces by namespace name; `default` always exists. */
export class StoreState {
  readonly #spaces = new Map<string, SpaceState>([[DEFAULT_NAMESPACE, new SpaceState()]]);

  /** Builds state from a validated file value; returns it with the invariant repairs it needed. */
  static fromFile(value: z.infer<typeof StoreFileSchema>): { state: StoreState; repairs: string[] } {
    const state = new StoreState();
    const repairs: string[] = [];
    if (Array.isArray(value)) {
      state.#spaces.set(
        DEFAULT_NAMESPACE,
        SpaceState.fromDocument({ sessions: { default: value }, works: [], progress: {} }, repairs),
      );
      return { state, repairs };
    }
    state.#spaces.set(DEFAULT_NAMESPACE, SpaceState.fromDocument(value, repairs));
    for (const [name, doc] of Object.entries(value.namespaces ?? {})) {
      state.#spaces.set(name, SpaceState.fromDocument(doc, repairs, `namespace "${name}": `));
    }
    return { state, repairs };
  }

  /** The state of `namespace`, created empty when absent. */
  space(namespace: string): SpaceState {
    let space = this.#spaces.get(namespace);
    if (!space) this.#spaces.set(namespace, space = new SpaceState());
    return space;
  }

  /** The namespaces that hold anything, `default` first, then by name. */
  namespaces(): string[] {
    return sortNamespaces([...this.#spaces].filter(([, space]) => !space.empty).map(([name]) => name));
  }

  /**
   * The document to write, without history; it shares the live tasks and entries (clone it to keep
   * it). With `namespace`, that namespace alone as a document of its own (at the top level).
   */
  toDocument(namespace?: string): StoreDocument {
    if (namespace !== undefined) return { version: 1, ...this.space(namespace).toDocument() };
    const doc: StoreDocument = { version: 1, ...this.space(DEFAULT_NAMESPACE).toDocument() };
    const others = this.namespaces().filter((name) => name !== DEFAULT_NAMESPACE);
    if (others.length > 0) {
      doc.namespaces = Object.fromEntries(others.map((name) => [name, this.space(name).toDocument()]));
    }
    return doc;
  }

  /**
   * The whole state as the JSON text the file store writes: {@link toDocument} with each space's
   * history, and `rev` right after `version`.
   */
  toFileText(rev: string): string {
    const part = (space: SpaceState) => {
      const json = JSON.stringify(space.toDocument());
      return `${json.slice(0, -1)},"history":${space.historyJson()}}`;
    };
    const top = part(this.space(DEFAULT_NAMESPACE));
    const others = this.namespaces().filter((name) => name !== DEFAULT_NAMESPACE);
    const namespaces = others.length === 0
      ? ""
      : `,"namespaces":{${
        others.map((name) => `${JSON.stringify(name)}:${part(this.space(name))}`).join(",")
      }}`;
    return `{"version":1,"rev":${JSON.stringify(rev)},${top.slice(1, -1)}${namespaces}}`;
  }

  /**
   * Replaces everything with `other`'s contents (taken, not copied); undo restores the old. With
   * `namespace`, only that namespace, with `other`'s `default` space. History does not come along.
   */
  replaceWith(other: StoreState, namespace?: string): Applied<void> {
    if (namespace !== undefined) return this.space(namespace).replaceWith(other.space(DEFAULT_NAMESPACE));
    const names = new Set([...this.#spaces.keys(), ...other.#spaces.keys()]);
    const undos = [...names].map((name) => this.space(name).replaceWith(other.space(name)).undo);
    return { result: undefined, undo: () => undos.forEach((undo) => undo()) };
  }
}

/** Namespace names in the order they are listed: `default` first, then by name. */
export function sortNamespaces(names: Iterable<string>): string[] {
  return [...new Set(names)].sort((a, b) =>
    a === DEFAULT_NAMESPACE ? -1 : b === DEFAULT_NAMESPACE ? 1 : a < b ? -1 : a > b ? 1 : 0
  );
}
