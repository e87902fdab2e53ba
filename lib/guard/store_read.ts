/**
 * The commit guard's read of a store (docs/guard.md "What it reads"): one session's tree from a JSON
 * file (`FILE_PATH`) or a Deno KV database (`KV_PATH`), read only, never opened as a store. A running
 * server may share the store: the guard creates nothing (a store that does not exist is reported, not
 * made), takes no lock or lease, sweeps nothing and writes nothing.
 *
 * - A file is read in one go: servers replace it atomically (json_file_store.ts), so it is the whole
 *   old document or the whole new one; it is parsed as the file store parses it.
 * - A KV database is opened with `Deno.openKv` (SQLite in WAL mode: a reader never blocks a writer) and
 *   read through the store's own session reader (kv_space.ts), which repeats a read until it is a
 *   snapshot. "Database is locked" at open (another process opening it at the same moment) is tried
 *   again until `timeoutMs`.
 */
import { DEFAULTS } from "../config.ts";
import type { TaskTree } from "../domain/task_tree.ts";
import { parseStoreText } from "../store/json_file_store.ts";
import { AGAIN, isLocked, retry } from "../store/kv/retry.ts";
import { GuardError } from "./guard_error.ts";

/** Where to read, and what. */
export interface StoreReadOptions {
  /** The namespace holding the session. */
  namespace: string;
  /** The session (`sessionId`) to read. */
  session: string;
  /** Milliseconds to keep trying a busy KV database. */
  timeoutMs: number;
}

/**
 * The session's tree in the JSON file at `path`, or undefined when the file has no such session.
 * Throws an `unreachable` {@link GuardError} when the file is missing, unreadable or not a store.
 */
export async function readFileTree(path: string, options: StoreReadOptions): Promise<TaskTree | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new GuardError("unreachable", `FILE_PATH ${path} does not exist`);
    }
    throw new GuardError("unreachable", `cannot read FILE_PATH ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let parsed;
  try {
    parsed = parseStoreText(text, path);
  } catch (error) {
    throw new GuardError("unreachable", (error as Error).message, { cause: error });
  }
  return parsed.state.space(options.namespace).sessions.get(options.session);
}

/**
 * The session's tree in the Deno KV database at `path` (a local file or a KV Connect URL), or undefined
 * when it has no such session. Throws an `unreachable` {@link GuardError} when a local database does
 * not exist, or the database cannot be opened or read.
 */
export async function readKvTree(path: string, options: StoreReadOptions): Promise<TaskTree | undefined> {
  if (path === ":memory:") {
    throw new GuardError("unreachable", "KV_PATH is :memory:, which no other process can read");
  }
  const remote = /^https?:\/\//i.test(path);
  if (!remote) {
    try {
      await Deno.stat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new GuardError("unreachable", `KV_PATH ${path} does not exist`);
      }
      throw new GuardError("unreachable", `cannot read KV_PATH ${path}: ${(error as Error).message}`);
    }
  }
  const busy = (what: string) => (error: unknown) =>
    new GuardError("unreachable", `cannot ${what} Deno KV ${path}: ${(error as Error).message ?? error}`, {
      cause: error,
    });
  // The KV store's modules only for a KV read: a file read never loads them.
  const { KvSpace } = await import("../store/kv/kv_space.ts");
  const kv = await whileLocked(() => Deno.openKv(path), options.timeoutMs).catch((error) => {
    throw busy("open")(error);
  });
  try {
    const space = new KvSpace(kv, {
      namespace: options.namespace,
      historySize: DEFAULTS.historySize,
      run: (job) => job(),
      // A read never sweeps: garbage it meets is another process's to reclaim.
      defer: () => {},
    });
    return await whileLocked(() => space.readTree(options.session, (tree) => tree), options.timeoutMs)
      .catch((error) => {
        throw busy("read")(error);
      });
  } finally {
    kv.close();
  }
}

/** Runs `attempt` again while SQLite says the database is locked, for at most `timeoutMs`. */
function whileLocked<T>(attempt: () => Promise<T>, timeoutMs: number): Promise<T> {
  let locked: unknown;
  return retry({ forMs: timeoutMs, pauseMs: (n) => Math.min(20, n * 2) }, async () => {
    try {
      return await attempt();
    } catch (error) {
      if (!isLocked(error)) throw error;
      locked = error;
      return AGAIN;
    }
  }, () => locked);
}
