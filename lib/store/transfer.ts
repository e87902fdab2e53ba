/**
 * Export and import of a whole store as one JSON document (`deno task export`, `deno task import`),
 * to move a plan between the JSON file, a local Deno KV and Deno Deploy.
 *
 * An import is validated completely first (JSON, the same zod schemas as the stores use, duplicate
 * ids, the documented limits) and then applied in one atomic change, so any error changes nothing.
 */
import { DomainError, fail } from "../domain/errors.ts";
import { checkTreeShape } from "../domain/limits.ts";
import { StoreState, validateStoreFile } from "./state.ts";
import type { Store } from "./store.ts";

/** The store as the JSON text of one document (what `deno task export` prints). */
export async function exportStore(store: Store): Promise<string> {
  return JSON.stringify(await store.exportDocument(), null, 1) + "\n";
}

/** A validated import: the state to write, and the invariant repairs it needed. */
export interface ParsedImport {
  state: StoreState;
  repairs: string[];
  /** Sessions, tasks, work entries and progress documents in it. */
  counts: { sessions: number; tasks: number; works: number; progress: number };
}

/**
 * Parses and validates an exported document, or a bare array of root tasks (session "default").
 * Throws a `DomainError` (`INVALID_INPUT`, `DUPLICATE_ID`, `LIMIT_EXCEEDED`) that says where.
 */
export function parseImport(text: string): ParsedImport {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    fail("INVALID_INPUT", `The document is not valid JSON: ${(error as Error).message}.`);
  }
  const parsed = validateStoreFile(json);
  if (parsed.problem !== undefined) {
    fail("INVALID_INPUT", `The document is not a task store: ${parsed.problem}.`);
  }
  const sessions = Array.isArray(parsed.data) ? { default: parsed.data } : parsed.data.sessions;
  let tasks = 0;
  for (const [id, roots] of Object.entries(sessions)) {
    tasks += checkTreeShape(roots, { existing: 0, where: `Session "${id}": ` });
  }
  const { state, repairs } = StoreState.fromFile(parsed.data);
  return {
    state,
    repairs,
    counts: { sessions: state.sessions.size, tasks, works: state.works.size, progress: state.progress.size },
  };
}

/** Options of {@link importStore}. */
export interface ImportOptions {
  /** Replace a store that already holds data (otherwise refused). */
  replace?: boolean;
}

/**
 * Validates `text` and replaces the store's contents with it in one atomic change. Refuses a store
 * that already holds data unless `replace` is set. Returns what was imported.
 */
export async function importStore(
  store: Store,
  text: string,
  options: ImportOptions = {},
): Promise<ParsedImport> {
  const parsed = parseImport(text);
  if (!options.replace) {
    const [sessions, projects, works] = await Promise.all([
      store.listSessions(),
      store.listProjects(),
      store.readWorks((entries) => entries.size),
    ]);
    if (sessions.length + projects.length + works > 0) {
      throw new DomainError(
        "INVALID_INPUT",
        `The target store is not empty (${sessions.length} sessions, ${works} work entries, ${projects.length} progress documents). Pass --replace to overwrite all of it, or export it first.`,
      );
    }
  }
  await store.importState(parsed.state);
  return parsed;
}
