/**
 * Task trees in Deno KV: one record per task, a per-process cache, and atomic changes. This file
 * keeps the cache and runs each change (re-run after a conflict); reading a session is
 * session_load.ts, committing a change session_commit.ts, sweeping what a change left unreachable
 * session_sweep.ts.
 *
 * Reading: one `get` of the session meta per operation. When its versionstamp is the cached one,
 * the cached tree is current. Otherwise the change log names the records other processes wrote since
 * (catch-up), or, when the log does not reach back or the generation changed, the whole generation
 * is listed. Either read is repeated until the meta is unchanged across it, so it is a snapshot.
 *
 * Writing (the atomicity decision): every change is one atomic commit that checks the meta's
 * versionstamp (a concurrent writer makes it fail; the change is then re-run on the fresh tree) and
 * writes the records the transaction touched, the meta, and a log entry.
 * - Removed tasks need no writes to leave the tree: the parent's (or root) record drops their ids.
 *   Their keys are deleted in the same commit as far as it has room; the rest stay unreachable and
 *   are swept afterwards by commits that check the meta, so a sweep never deletes a live record.
 *   A delete of a 50,000-task subtree is therefore one small commit.
 * - Touched records that do not fit in one commit (1000 mutations, 800 KiB: e.g. 500 new tasks
 *   with long descriptions) go to a new generation: the whole tree is written under a fresh random
 *   prefix that no reader looks at, then one checked commit flips the meta to it. O(session size),
 *   rare, and still all-or-nothing; the old generation is retired and swept.
 * - A change that changes something also bumps the session's revision in the meta and writes its
 *   history entry in the same commit (kv_history.ts); one that changes nothing commits nothing, and one
 *   that only renews a lease commits its records without a revision.
 */
import {
  type HistoryContext,
  historyEntry,
  type HistoryPage,
  leaseRenewed,
  recordChange,
  type RecordedChange,
  type TreeChangeOptions,
  type TreeUpdate,
} from "../../domain/history.ts";
import { isoTime } from "../../domain/iso_time.ts";
import { TaskTree } from "../../domain/task_tree.ts";
import { KvHistory } from "./kv_history.ts";
import type { KvPlace, SessionMeta } from "./layout.ts";
import { AGAIN, ON_CONFLICT, retry } from "./retry.ts";
import { commitChange, type CommitContext, stageTree } from "./session_commit.ts";
import { buildSession, type CachedSession, caughtUp, parseMeta, readAll, readDelta } from "./session_load.ts";
import { sweepUnreachable } from "./session_sweep.ts";

/** How often each path ran in this process (for tests, logs and the benchmark). */
export interface KvSessionStats {
  /** Sessions read whole (first use, another generation, or the log did not reach back). */
  fullLoads: number;
  /** Sessions brought up to date from the change log. */
  catchUps: number;
  /** Changes too big for one commit, published as a new generation. */
  flips: number;
  /** Commits refused by a concurrent writer's change and re-run. */
  conflicts: number;
}

/** Options of {@link KvSessions}. */
export interface KvSessionsOptions {
  /** Runs a job after the current operation, in the store's queue (garbage sweeps). */
  defer: (job: () => Promise<void>) => void;
  /** History entries kept per session (`HISTORY_SIZE`). */
  historySize: number;
}

/** See the module doc. Not safe for concurrent calls: the store runs them one at a time. */
export class KvSessions {
  readonly #kv: Deno.Kv;
  readonly #place: KvPlace;
  readonly #defer: (job: () => Promise<void>) => void;
  readonly #cache = new Map<string, CachedSession>();
  readonly #history: KvHistory;
  readonly #commits: CommitContext;
  /** See {@link KvSessionStats}. */
  readonly stats: KvSessionStats = { fullLoads: 0, catchUps: 0, flips: 0, conflicts: 0 };

  constructor(place: KvPlace, options: KvSessionsOptions) {
    this.#kv = place.kv;
    this.#place = place;
    this.#defer = options.defer;
    this.#history = new KvHistory(place, options.historySize);
    this.#commits = {
      place,
      history: this.#history,
      onFlip: () => this.stats.flips++,
      defer: this.#defer,
      sweepLater: (sessionId, keys) => this.#sweepLater(sessionId, keys),
    };
  }

  /** Ids of the sessions that exist. */
  async list(): Promise<string[]> {
    const ids: string[] = [];
    const { layout } = this.#place;
    for await (const e of this.#kv.list(layout.metas())) ids.push(layout.sessionOf(e.key));
    return ids;
  }

  /** Every session's meta, by session id. */
  async metas(): Promise<Map<string, SessionMeta>> {
    const metas = new Map<string, SessionMeta>();
    const { layout } = this.#place;
    for await (const e of this.#kv.list<Uint8Array>(layout.metas())) {
      const id = layout.sessionOf(e.key);
      metas.set(id, parseMeta(e.value, id));
    }
    return metas;
  }

  /** Forgets every cached tree (after an import). */
  invalidate(): void {
    this.#cache.clear();
  }

  /** The session as stored now, or undefined when it does not exist. */
  async current(sessionId: string): Promise<CachedSession | undefined> {
    let entry = await this.#kv.get<Uint8Array>(this.#place.layout.meta(sessionId));
    for (;;) {
      if (entry.value === null) {
        this.#cache.delete(sessionId);
        return undefined;
      }
      const cached = this.#cache.get(sessionId);
      if (cached?.versionstamp === entry.versionstamp) return cached;
      const meta = parseMeta(entry.value, sessionId);
      const delta = cached ? await readDelta(this.#place, cached, meta) : undefined;
      const all = delta ? undefined : await readAll(this.#place, meta.gen);
      const again = await this.#kv.get<Uint8Array>(this.#place.layout.meta(sessionId));
      if (again.versionstamp !== entry.versionstamp) {
        entry = again;
        continue;
      }
      const session = delta
        ? caughtUp(cached!, meta, entry.versionstamp, delta)
        : buildSession(this.#place, sessionId, meta, entry.versionstamp, all!, (keys) =>
          this.#sweepLater(sessionId, keys));
      if (!session) {
        // The log did not add up: read the whole session on the next round.
        this.#cache.delete(sessionId);
        continue;
      }
      if (delta) this.stats.catchUps++;
      else this.stats.fullLoads++;
      this.#cache.set(sessionId, session);
      return session;
    }
  }

  /** The session's revision and newest `limit` history entries. */
  async history(sessionId: string, limit: number): Promise<HistoryPage> {
    const entry = await this.#kv.get<Uint8Array>(this.#place.layout.meta(sessionId));
    const meta = entry.value === null ? undefined : parseMeta(entry.value, sessionId);
    return await this.#history.page(meta?.line, meta?.rev ?? 0, limit);
  }

  /**
   * Runs `fn` on the session's tree and commits what it changed with its history entry; re-runs it
   * after a conflict.
   */
  async update<T>(
    sessionId: string,
    fn: (tree: TaskTree, history: HistoryContext) => T,
    options: TreeChangeOptions,
  ): Promise<TreeUpdate<T>> {
    return await retry(ON_CONFLICT, async () => {
      const session = await this.current(sessionId);
      const tree = session?.tree ?? new TaskTree();
      const rev = session?.rev ?? 0;
      const view = await this.#history.view(session?.line, rev, options.undoTo);
      const { result, changes, rollback } = tree.transact((t) => fn(t, view));
      const delta = recordChange(tree, changes);
      // Nothing to write, unless a lease was renewed: written, with no revision (history.ts).
      if (session && delta.length === 0 && !leaseRenewed(tree, changes)) return { result, revision: rev };
      const entry: RecordedChange | undefined = delta.length === 0
        ? undefined
        : historyEntry(tree, delta, { revision: rev + 1, tool: options.tool, at: isoTime(Date.now()) });
      let next: CachedSession | null;
      try {
        next = await commitChange(this.#commits, sessionId, session, tree, changes, entry);
      } catch (error) {
        rollback();
        this.#cache.delete(sessionId);
        throw error;
      }
      if (next) {
        this.#cache.set(sessionId, next);
        const line = next.line;
        if (entry && line && this.#history.due(next.rev)) {
          this.#defer(() => this.#history.trim(line, next.rev));
        }
        return { result, revision: next.rev };
      }
      rollback();
      this.stats.conflicts++;
      return AGAIN;
    }, (attempts) =>
      new Error(
        `Session "${sessionId}" kept changing under this write (${attempts} attempts); nothing was changed. Try again.`,
      ));
  }

  /**
   * Writes `tree` under a new generation nobody reads yet (marked staged); returns the generation.
   * Publishing it is the caller's checked commit of the meta (and of the marker's deletion).
   */
  async stage(tree: TaskTree, gen?: string): Promise<{ gen: string; chunks: Map<string, number> }> {
    return await stageTree(this.#place, tree, gen);
  }

  /** Sweeps keys that no longer belong to the session after the current operation (session_sweep.ts). */
  #sweepLater(sessionId: string, keys: Deno.KvKey[]): void {
    this.#defer(() => sweepUnreachable(this.#place, (id) => this.current(id), sessionId, keys));
  }
}
