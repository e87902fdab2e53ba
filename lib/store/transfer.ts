/**
 * Export and import of a whole store, or of one namespace, as one JSON document (`deno task export`,
 * `deno task import`, with `--namespace NAME`), to move a plan between the JSON file, a local Deno KV
 * and Deno Deploy, or from one namespace to another.
 *
 * An import is validated completely first (JSON, well-formed Unicode in every name and text, the same
 * zod schemas as the stores use, duplicate ids, the documented limits) and then applied in one atomic
 * change, so any error changes nothing.
 */
import { DomainError, fail } from "../domain/errors.ts";
import { checkTreeShape } from "../domain/limits.ts";
import { DEFAULT_NAMESPACE } from "../domain/schemas.ts";
import { fieldPath, findIllFormed, illFormedText } from "../domain/unicode.ts";
import { type SpaceDocument, stateFromFile, validateStoreFile } from "./file_format.ts";
import { StoreState } from "./state.ts";
import type { NamespaceOption, Store } from "./store.ts";
import { DEFAULT_SESSION } from "../domain/names.ts";

/**
 * The store as the JSON text of one document (what `deno task export` prints): every namespace, or
 * with `namespace` that one alone, at the document's top level (so it imports into any namespace).
 */
export async function exportStore(store: Store, options: NamespaceOption = {}): Promise<string> {
  return JSON.stringify(await store.exportDocument(options), null, 1) + "\n";
}

/** The session that task-orchestrator's bare-array file holds (docs/requirements.md C10). */
export const TASKS_FORMAT_SESSION = DEFAULT_SESSION;

/**
 * The `"default"` session's root tasks (of `options.namespace`, else of namespace `default`) as a
 * bare JSON array, task-orchestrator's file format (`deno task export --format tasks`); `[]` when the
 * session does not exist.
 */
export async function exportTasks(store: Store, options: NamespaceOption = {}): Promise<string> {
  const space = store.space(options.namespace ?? DEFAULT_NAMESPACE);
  const roots = await space.readTree(TASKS_FORMAT_SESSION, (tree) => tree?.roots ?? []);
  return JSON.stringify(roots, null, 2) + "\n";
}

/** A validated import: the state to write, and the invariant repairs it needed. */
export interface ParsedImport {
  state: StoreState;
  repairs: string[];
  /** Sessions, tasks, work entries and progress documents in it (all namespaces). */
  counts: { sessions: number; tasks: number; works: number; progress: number };
  /** The namespaces it holds data for, `default` first. */
  namespaces: string[];
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
  // A lone surrogate has no UTF-8 form: in a KV key it would merge two names (docs/troubleshooting.md "What you see when things go wrong").
  const illFormed = findIllFormed(json);
  if (illFormed) {
    const where = fieldPath(illFormed.path);
    fail(
      "INVALID_INPUT",
      `The document is not well-formed Unicode: ${where || "its top level"} ${
        illFormedText(illFormed)
      }. Rename it in the document (e.g. replace the lone surrogate with U+FFFD or drop it) and import again.`,
    );
  }
  const parsed = validateStoreFile(json);
  if (parsed.problem !== undefined) {
    fail("INVALID_INPUT", `The document is not a task store: ${parsed.problem}.`);
  }
  const parts: [string, Pick<SpaceDocument, "sessions">][] = Array.isArray(parsed.data)
    ? [[DEFAULT_NAMESPACE, { sessions: { default: parsed.data } }]]
    : [[DEFAULT_NAMESPACE, parsed.data], ...Object.entries(parsed.data.namespaces ?? {})];
  let tasks = 0;
  for (const [namespace, part] of parts) {
    const where = namespace === DEFAULT_NAMESPACE ? "" : `Namespace "${namespace}", `;
    for (const [id, roots] of Object.entries(part.sessions)) {
      tasks += checkTreeShape(roots, { existing: 0, where: `${where}Session "${id}": ` });
    }
  }
  const { state, repairs } = stateFromFile(parsed.data);
  const counts = { sessions: 0, tasks, works: 0, progress: 0 };
  const namespaces = state.namespaces();
  for (const namespace of namespaces) {
    const space = state.space(namespace);
    counts.sessions += space.sessions.size;
    counts.works += space.works.size;
    counts.progress += space.progress.size;
  }
  return { state, repairs, counts, namespaces };
}

/** Options of {@link importStore}. */
export interface ImportOptions extends NamespaceOption {
  /** Replace a store (or namespace) that already holds data (otherwise refused). */
  replace?: boolean;
}

/**
 * Validates `text` and replaces the store's contents with it in one atomic change; with `namespace`,
 * only that namespace's, from a document of one namespace (an export with `--namespace`, or one
 * without a `namespaces` block). Refuses a target that already holds data unless `replace` is set.
 * Returns what was imported.
 */
export async function importStore(
  store: Store,
  text: string,
  options: ImportOptions = {},
): Promise<ParsedImport> {
  const parsed = parseImport(text);
  const { namespace } = options;
  const target = namespace === undefined ? undefined : store.space(namespace);
  const others = parsed.namespaces.filter((name) => name !== DEFAULT_NAMESPACE);
  if (target && others.length > 0) {
    fail(
      "INVALID_INPUT",
      `The document holds several namespaces (${
        parsed.namespaces.join(", ")
      }): import it whole without --namespace, or export one namespace with --namespace and import that.`,
    );
  }
  if (!options.replace) {
    const spaces = target ? [target] : (await store.listNamespaces()).map((name) => store.space(name));
    let [sessions, projects, works] = [0, 0, 0];
    for (const space of spaces) {
      sessions += (await space.listSessions()).length;
      projects += (await space.listProjects()).length;
      works += await space.readWorks((entries) => entries.size);
    }
    if (sessions + projects + works > 0) {
      const what = target ? `namespace "${target.namespace}"` : "store";
      throw new DomainError(
        "INVALID_INPUT",
        `The target ${what} is not empty (${sessions} sessions, ${works} work entries, ${projects} progress documents). Pass --replace to overwrite all of it, or export it first.`,
      );
    }
  }
  await store.importState(parsed.state, { namespace });
  return parsed;
}
