/**
 * Reading a KV session (sessions.ts): a full load of its generation, or a catch-up of a cached tree
 * from the change log when the log reaches back far enough. Both only read; the caller decides
 * whether the meta stayed unchanged across the read (a snapshot) and caches the result.
 */
import type { Task } from "../../domain/schemas.ts";
import { TaskTree } from "../../domain/task_tree.ts";
import { chunkCount, decodeJsonAs } from "./codec.ts";
import {
  type KvPlace,
  LOG_KEEP,
  LogEntrySchema,
  recordKeys,
  type SessionMeta,
  SessionMetaSchema,
} from "./layout.ts";
import { readChunks, readRecords } from "./reader.ts";
import { applyDelta, parseDelta, parseRecord, parseRoot } from "./records.ts";

/** More changed ids than this since the cached version: reload the whole session instead. */
const CATCH_UP_MAX = 2000;

/** A session as this process last read or wrote it. */
export interface CachedSession {
  tree: TaskTree;
  gen: string;
  seq: number;
  /** The meta's versionstamp at which `tree` is exact. */
  versionstamp: string;
  /** The session's revision. */
  rev: number;
  /** The session's history line (none before its first recorded change). */
  line: string | undefined;
  /** Chunk count of every record stored in more than one chunk. */
  chunks: Map<string, number>;
}

/** A session's records by task id (`""`: the root record); null: the record is gone or incomplete. */
export type RawRecords = Map<string, Uint8Array[] | null>;

/** A session's meta record, parsed; throws when it is malformed. */
export function parseMeta(bytes: Uint8Array, sessionId: string): SessionMeta {
  const meta = decodeJsonAs(SessionMetaSchema, bytes);
  if (!meta) throw new Error(`Deno KV session "${sessionId}" has a malformed meta record.`);
  return meta;
}

/** The records that other writers changed since `cached`, from the change log; undefined: read all. */
export async function readDelta(
  place: KvPlace,
  cached: CachedSession,
  meta: SessionMeta,
): Promise<RawRecords | undefined> {
  if (meta.gen !== cached.gen || meta.seq <= cached.seq || meta.seq - cached.seq >= LOG_KEEP) {
    return undefined;
  }
  const ids = new Set<string>();
  let expect = cached.seq + 1;
  const { layout } = place;
  const range = layout.logRange(meta.gen, cached.seq + 1, meta.seq + 1);
  for await (const e of place.kv.list<Uint8Array>(range)) {
    if (layout.seqOf(e.key) !== expect++) return undefined;
    const log = decodeJsonAs(LogEntrySchema, e.value);
    if (!log || "full" in log) return undefined;
    for (const id of log.ids) ids.add(id);
    if (ids.size > CATCH_UP_MAX) return undefined;
  }
  if (expect !== meta.seq + 1) return undefined;
  const out: RawRecords = new Map();
  const list = [...ids];
  const batches: Promise<void>[] = [];
  for (let i = 0; i < list.length; i += 10) {
    const batch = list.slice(i, i + 10);
    batches.push((async () => {
      const entries = await place.kv.getMany<Uint8Array[]>(batch.map((id) => layout.task(meta.gen, id)));
      for (const [j, e] of entries.entries()) {
        const id = batch[j]!;
        if (e.value === null) out.set(id, null);
        else if (chunkCount(e.value) === 1) out.set(id, [e.value]);
        else {
          const record = await readChunks(place.kv, layout.task(meta.gen, id));
          out.set(id, record?.complete ? record.chunks : null);
        }
      }
    })());
  }
  await Promise.all(batches);
  return out;
}

/** Every record of a generation, with the keys that belong to no record (stale chunks). */
export async function readAll(
  place: KvPlace,
  gen: string,
): Promise<{ records: RawRecords; extra: Deno.KvKey[] }> {
  const records: RawRecords = new Map();
  const extra: Deno.KvKey[] = [];
  const { layout } = place;
  const entries = place.kv.list<Uint8Array>(layout.tasks(gen), { batchSize: 1000 });
  for await (const r of readRecords(entries, layout.taskKeyLength)) {
    extra.push(...r.extra);
    if (r.chunks.length === 0) continue;
    if (!r.complete) extra.push(r.key);
    else records.set(layout.taskOf(r.key).id, r.chunks);
  }
  return { records, extra };
}

/**
 * The session built from every record of its generation. Keys that belong to no task of the tree
 * are handed to `sweepLater`; names an older version stored with lone surrogates are repaired.
 */
export function buildSession(
  place: KvPlace,
  sessionId: string,
  meta: SessionMeta,
  versionstamp: string,
  { records, extra }: { records: RawRecords; extra: Deno.KvKey[] },
  sweepLater: (keys: Deno.KvKey[]) => void,
): CachedSession {
  const problem = (what: string) =>
    new Error(`Deno KV session "${sessionId}" is inconsistent: ${what}. Restore it from an export.`);
  const rootChunks = records.get("");
  if (!rootChunks) throw problem("its root record is missing");
  // Ids an older version wrote with lone surrogates are read with U+FFFD, as their keys hold them.
  let repaired = false;
  const onRename = () => (repaired = true);
  const tasks = new Map<string, { task: Task; childIds: string[] }>();
  const chunks = new Map<string, number>();
  for (const [id, parts] of records) {
    if (id === "" || !parts) continue;
    const record = parseRecord(parts, id, onRename);
    if (!record) throw problem(`task record "${id}" is malformed`);
    tasks.set(id, record);
    if (parts.length > 1) chunks.set(id, parts.length);
  }
  const rootIds = parseRoot(rootChunks, onRename);
  if (!rootIds) throw problem("its root record is malformed");
  const seen = new Set<string>();
  const dropped: string[] = [];
  const resolve = (ids: string[], owner: string): Task[] => {
    const list: Task[] = [];
    for (const id of ids) {
      const task = tasks.get(id)?.task;
      if (!task) throw problem(`${owner} lists a missing task "${id}"`);
      if (seen.has(id)) {
        // Two ids an older version kept apart became one key (and one record): list it once.
        if (!repaired) throw problem(`task "${id}" is listed twice`);
        dropped.push(`${owner} lists task ${JSON.stringify(id)} again`);
        continue;
      }
      seen.add(id);
      list.push(task);
    }
    return list;
  };
  const roots = resolve(rootIds, "the root record");
  const stack = [...roots];
  while (stack.length > 0) {
    const task = stack.pop()!;
    task.tasks = resolve(tasks.get(task.id)!.childIds, `task "${task.id}"`);
    stack.push(...task.tasks);
  }
  if (repaired) {
    place.onRepair?.(
      `session ${
        JSON.stringify(sessionId)
      }: names stored by an older version with lone surrogates are read with U+FFFD in their place${
        dropped.length > 0
          ? `; ids that became one: ${dropped.join("; ")} (the one record kept is shown once)`
          : ""
      }`,
    );
  }
  const garbage = [...extra];
  for (const id of tasks.keys()) {
    if (!seen.has(id)) {
      garbage.push(...recordKeys(place.layout.task(meta.gen, id), chunks.get(id) ?? 1));
      chunks.delete(id);
    }
  }
  if (garbage.length > 0) sweepLater(garbage);
  const tree = new TaskTree(roots);
  return { tree, gen: meta.gen, seq: meta.seq, versionstamp, chunks, rev: meta.rev ?? 0, line: meta.line };
}

/** The cached session brought up to `records` from the change log; undefined: read it whole. */
export function caughtUp(
  cached: CachedSession,
  meta: SessionMeta,
  versionstamp: string,
  records: RawRecords,
): CachedSession | undefined {
  const delta = parseDelta(records);
  const tree = delta && applyDelta(cached.tree, delta);
  if (!tree) return undefined;
  const chunks = new Map(cached.chunks);
  for (const [id, parts] of records) {
    if (parts && parts.length > 1) chunks.set(id, parts.length);
    else chunks.delete(id);
  }
  return { tree, gen: meta.gen, seq: meta.seq, versionstamp, chunks, rev: meta.rev ?? 0, line: meta.line };
}
