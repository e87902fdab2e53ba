/**
 * The store's file format: the JSON document the file store writes and `deno task export` prints
 * (docs/namespaces.md, "History and undo"), how a stored file is validated, read into a
 * {@link StoreState} and written back. The in-memory state itself is state.ts.
 */
import { z } from "zod";
import { SessionHistorySchema } from "../domain/history.ts";
import { repairInvariants } from "../domain/invariants.ts";
import { ownObject, ownRecord } from "../domain/own_keys.ts";
import { ProgressDocSchema } from "../domain/progress_doc.ts";
import { DEFAULT_NAMESPACE, NamespaceSchema, SessionIdSchema, TaskSchema } from "../domain/schemas.ts";
import { TaskTree } from "../domain/task_tree.ts";
import { WorkEntrySchema } from "../domain/work_lru.ts";
import { type SpaceState, StoreState } from "./state.ts";

/**
 * One namespace's data in a document: every session's roots (R4.6), the work entries, the progress
 * documents, and `history`, each session's revision and history entries (docs/history.md; exports leave it out). Every key is kept, `__proto__` included (own_keys.ts).
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

/** Fills an empty space from a validated document part; `where` prefixes its repair messages. */
function fillSpace(space: SpaceState, doc: SpaceDocument, repairs: string[], where = ""): void {
  for (const [id, roots] of Object.entries(doc.sessions)) {
    const tree = new TaskTree(roots);
    tree.transact((t) => {
      for (const fix of repairInvariants(t)) repairs.push(`${where}session "${id}": ${fix}`);
    });
    space.sessions.set(id, tree);
  }
  for (const entry of doc.works) space.works.set(entry.workId, entry);
  for (const [project, progressDoc] of Object.entries(doc.progress)) {
    space.progress.set(project, progressDoc);
  }
  for (const [id, history] of Object.entries(doc.history ?? {})) {
    if (space.sessions.has(id)) space.history.set(id, history);
  }
}

/** Builds state from a validated file value; returns it with the invariant repairs it needed. */
export function stateFromFile(
  value: z.infer<typeof StoreFileSchema>,
): { state: StoreState; repairs: string[] } {
  const state = new StoreState();
  const repairs: string[] = [];
  if (Array.isArray(value)) {
    fillSpace(
      state.space(DEFAULT_NAMESPACE),
      { sessions: { default: value }, works: [], progress: {} },
      repairs,
    );
    return { state, repairs };
  }
  fillSpace(state.space(DEFAULT_NAMESPACE), value, repairs);
  for (const [name, doc] of Object.entries(value.namespaces ?? {})) {
    fillSpace(state.space(name), doc, repairs, `namespace "${name}": `);
  }
  return { state, repairs };
}

/** A space's part of a document, without history; it shares the live tasks and entries (clone it to keep it). */
function spaceDocument(space: SpaceState): Omit<SpaceDocument, "history"> {
  return {
    sessions: ownObject([...space.sessions].map(([id, tree]) => [id, tree.roots] as const)),
    works: [...space.works.values()],
    progress: ownObject(space.progress),
  };
}

/**
 * The document to write, without history; it shares the live tasks and entries (clone it to keep
 * it). With `namespace`, that namespace alone as a document of its own (at the top level).
 */
export function stateDocument(state: StoreState, namespace?: string): StoreDocument {
  if (namespace !== undefined) return { version: 1, ...spaceDocument(state.space(namespace)) };
  const doc: StoreDocument = { version: 1, ...spaceDocument(state.space(DEFAULT_NAMESPACE)) };
  const others = state.namespaces().filter((name) => name !== DEFAULT_NAMESPACE);
  if (others.length > 0) {
    doc.namespaces = Object.fromEntries(others.map((name) => [name, spaceDocument(state.space(name))]));
  }
  return doc;
}

/** The JSON text of each history entry written so far (see {@link historyJson}). */
const entryJson = new WeakMap<object, string>();

/**
 * Each changed session's history as the JSON text of the document's `history` field. An entry never
 * changes once recorded, so its text is made once and reused by every later write.
 */
function historyJson(space: SpaceState): string {
  const sessions: string[] = [];
  for (const [id, history] of space.history) {
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
 * The whole state as the JSON text the file store writes: {@link stateDocument} with each space's
 * history, and `rev` right after `version`.
 */
export function stateFileText(state: StoreState, rev: string): string {
  const part = (space: SpaceState) => {
    const json = JSON.stringify(spaceDocument(space));
    return `${json.slice(0, -1)},"history":${historyJson(space)}}`;
  };
  const top = part(state.space(DEFAULT_NAMESPACE));
  const others = state.namespaces().filter((name) => name !== DEFAULT_NAMESPACE);
  const namespaces = others.length === 0
    ? ""
    : `,"namespaces":{${
      others.map((name) => `${JSON.stringify(name)}:${part(state.space(name))}`).join(",")
    }}`;
  return `{"version":1,"rev":${JSON.stringify(rev)},${top.slice(1, -1)}${namespaces}}`;
}
