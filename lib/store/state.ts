/**
 * The whole store as plain in-memory state, with undoable changes. The memory store is this state;
 * the JSON file store loads it from and writes it to its file (the format is file_format.ts).
 * A {@link StoreState} holds one {@link SpaceState} per namespace (docs/namespaces.md).
 */
import {
  type HistoryContext,
  historyEntry,
  type HistoryPage,
  keepLast,
  oldestKept,
  recordChange,
  type SessionHistory,
  type TreeChangeOptions,
  type TreeUpdate,
} from "../domain/history.ts";
import { isoTime } from "../domain/iso_time.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import { DEFAULT_NAMESPACE } from "../domain/schemas.ts";
import { TaskTree } from "../domain/task_tree.ts";
import type { WorkEntry } from "../domain/work_lru.ts";

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

  /** Whether the space holds nothing: no session, work entry or progress document. */
  get empty(): boolean {
    return this.sessions.size === 0 && this.works.size === 0 && this.progress.size === 0;
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
      const entry = historyEntry(tree, delta, { revision, tool: options.tool, at: isoTime(Date.now()) });
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
  /**
   * What {@link Space.version} reads: each session's revision with the claims and `git` records of
   * its tasks in progress (a lease renewal changes only those; a tree keeps its leaves in progress
   * apart, so no other task is visited), each progress document's revision, each work's save and use.
   */
  version(): string {
    const sessions = [...this.sessions].map(([id, tree]) => [
      id,
      this.history.get(id)?.revision ?? 0,
      tree.activeLeaves().map((t) => [t.id, t.claim, t.git]).sort(byFirst),
    ]);
    const progress = [...this.progress].map(([project, doc]) => [project, doc.revision]);
    const works = [...this.works].map(([id, entry]) => [id, entry.work_timestamp, entry.used]);
    return JSON.stringify([sessions.sort(byFirst), progress.sort(byFirst), works.sort(byFirst)]);
  }

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

/** Orders tuples by their first item, a text. */
function byFirst(a: readonly unknown[], b: readonly unknown[]): number {
  const [x, y] = [String(a[0]), String(b[0])];
  return x < y ? -1 : x > y ? 1 : 0;
}
