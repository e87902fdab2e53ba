/**
 * The Deno KV key layout of the store: every key the store reads, writes or lists is built here, and
 * every key it gets back is taken apart here. Every value is bytes (see codec.ts); records that may
 * pass 64 KiB are chunked.
 *
 * | key | value |
 * | --- | --- |
 * | `["m", sessionId]` | session meta `{ gen, seq, rev?, line? }`: which generation holds its tasks, change count, revision, history line |
 * | `["t", gen, taskId]` (+ chunks) | a task record: the task's fields, `tasks` = its child ids in order |
 * | `["t", gen, ""]` | the session's root record: `tasks` = the root ids in order |
 * | `["l", gen, seq]` | change log: ids whose records change `seq` wrote or removed (last {@link LOG_KEEP}) |
 * | `["w", workId]` (+ chunks) | a work entry without its snapshot, `blob` naming the snapshot |
 * | `["wv"]` | works version `{ seq }`, checked and bumped by every works change |
 * | `["b", blobId]` (+ chunks) | a work snapshot (`work_tasks`), immutable once written |
 * | `["p", project]` (+ chunks) | a progress document |
 * | `["h", line, rev]` | a history entry `{ revision, at, tool, summary }` (docs/history.md) |
 * | `["hd", line, rev]` (+ chunks) | that entry's delta `{ delta }`, or `{ blob }` naming where it was staged |
 * | `["hb", line, blob]` (+ chunks) | a delta too big for its change's commit `{ delta }`, staged before it |
 * | `["v"]` | change counter, bumped by every change (export and import check it) |
 * | `["nv"]` | (default layout only) bumped by every change in another namespace, so one watch sees them all |
 * | `["gc", kind, id]` | a generation (`g`), snapshot blob (`b`), history line (`h`) or delta blob (`d`, id `line/blob`) to delete: retired, or staged and not yet live |
 * | `["live", owner]` | a store process's lease `{ until, machine?, pid?, started? }` (liveness.ts; store-wide, never prefixed) |
 *
 * A record's chunks sit at `[...key, 1]`, `[...key, 2]`, …, which Deno KV orders right after the key.
 *
 * A generation (`gen`) is a random name for one copy of a session's tasks: small changes edit it in
 * place, a change too big for one commit writes a new one and flips the meta to it. A history line
 * (`line`) is a random name for a session's history since it began (or was imported).
 *
 * A {@link KvLayout} puts all of these under one prefix; the {@link DEFAULT_LAYOUT} has none (the
 * keys above, as existing databases hold them). Namespace `default` uses it; every other namespace
 * NAME has the prefix `["n", NAME]` ({@link namespaceLayout}, docs/namespaces.md).
 */
import { z } from "zod";
import { DeltaSchema } from "../../domain/history.ts";
import { DEFAULT_NAMESPACE } from "../../domain/schemas.ts";

/** Change-log entries kept per generation; a reader further behind reloads the whole session. */
export const LOG_KEEP = 64;

/** Kinds of garbage: a task generation, a work snapshot blob, a history line, a staged delta blob. */
export type GarbageKind = "g" | "b" | "h" | "d";

const GARBAGE_KINDS: readonly string[] = ["g", "b", "h", "d"] satisfies GarbageKind[];

/** The largest key part used for the end of a chunk range. */
const LAST = Number.MAX_SAFE_INTEGER;

/** The key of a record's chunk `index` (`0`: the record's own key). */
export function chunkKey(key: Deno.KvKey, index: number): Deno.KvKey {
  return index === 0 ? key : [...key, index];
}

/** The keys of a record's chunks past the first, from `from` up to (not including) `to`. */
export function chunkKeys(key: Deno.KvKey, from: number, to: number): Deno.KvKey[] {
  const keys: Deno.KvKey[] = [];
  for (let i = Math.max(1, from); i < to; i++) keys.push([...key, i]);
  return keys;
}

/** Every key of a record stored in `count` chunks: its own, then its chunks'. */
export function recordKeys(key: Deno.KvKey, count: number): Deno.KvKey[] {
  return [key, ...chunkKeys(key, 1, count)];
}

/** A selector for a record's key and all its chunk keys. */
export function recordRange(key: Deno.KvKey): Deno.KvListSelector {
  return { start: key, end: [...key, LAST] };
}

/**
 * Which chunk of the record at `key` the listed key `listed` is: `0` the record's own key, `n` its
 * chunk n, `-1` a key right under it that is no chunk; undefined when `listed` is not under `key`.
 */
export function chunkIndex(key: Deno.KvKey, listed: Deno.KvKey): number | undefined {
  if (listed.length !== key.length && listed.length !== key.length + 1) return undefined;
  for (let i = 0; i < key.length; i++) if (listed[i] !== key[i]) return undefined;
  if (listed.length === key.length) return 0;
  const index = listed[key.length];
  return typeof index === "number" ? index : -1;
}

/** Every key of the store, under one prefix. */
export class KvLayout {
  readonly #prefix: readonly Deno.KvKeyPart[];
  /** The works version key. */
  readonly worksVersion: Deno.KvKey;
  /** The change counter of everything under this layout. */
  readonly storeVersion: Deno.KvKey;
  /** The counters every change adds one to: {@link storeVersion}, and any named at construction. */
  readonly changeCounters: readonly Deno.KvKey[];

  /**
   * A layout whose keys all start with `prefix` (none: {@link DEFAULT_LAYOUT}'s keys); every change
   * also counts in `alsoCount` (a counter outside the prefix that a watcher of several layouts watches).
   */
  constructor(prefix: readonly Deno.KvKeyPart[] = [], alsoCount: readonly Deno.KvKey[] = []) {
    this.#prefix = [...prefix];
    this.worksVersion = this.#key("wv");
    this.storeVersion = this.#key("v");
    this.changeCounters = [this.storeVersion, ...alsoCount];
  }

  /** A session's meta key. */
  meta(sessionId: string): Deno.KvKey {
    return this.#key("m", sessionId);
  }

  /** Every session meta. */
  metas(): { prefix: Deno.KvKey } {
    return { prefix: this.#key("m") };
  }

  /** The session id of a key listed by {@link metas}. */
  sessionOf(metaKey: Deno.KvKey): string {
    return String(this.#part(metaKey, 1));
  }

  /** A task record's key (`""`: the root record). */
  task(gen: string, id: string): Deno.KvKey {
    return this.#key("t", gen, id);
  }

  /** The length of a task record's key (its chunks' keys are one longer). */
  get taskKeyLength(): number {
    return this.#prefix.length + 3;
  }

  /** Every task record (and chunk) of a generation. */
  tasks(gen: string): { prefix: Deno.KvKey } {
    return { prefix: this.#key("t", gen) };
  }

  /** A task key taken apart: its generation, task id and chunk index (`0`: the record's own key). */
  taskOf(key: Deno.KvKey): { gen: string; id: string; chunk: number } {
    return {
      gen: String(this.#part(key, 1)),
      id: String(this.#part(key, 2)),
      chunk: key.length > this.taskKeyLength ? Number(this.#part(key, 3)) : 0,
    };
  }

  /** A change-log entry's key. */
  log(gen: string, seq: number): Deno.KvKey {
    return this.#key("l", gen, seq);
  }

  /** The change-log entries of a generation from `from` up to (not including) `to`. */
  logRange(gen: string, from: number, to: number): Deno.KvListSelector {
    return { start: this.log(gen, from), end: this.log(gen, to) };
  }

  /** Every change-log entry of a generation. */
  logs(gen: string): { prefix: Deno.KvKey } {
    return { prefix: this.#key("l", gen) };
  }

  /** The change number of a key listed by {@link logRange}. */
  seqOf(logKey: Deno.KvKey): unknown {
    return this.#part(logKey, 2);
  }

  /** A work entry's key. */
  work(workId: string): Deno.KvKey {
    return this.#key("w", workId);
  }

  /** The length of a work entry's key (its chunks' keys are one longer). */
  get workKeyLength(): number {
    return this.#prefix.length + 2;
  }

  /** Every work entry (and chunk). */
  works(): { prefix: Deno.KvKey } {
    return { prefix: this.#key("w") };
  }

  /** The work id of a key listed by {@link works}. */
  workOf(key: Deno.KvKey): string {
    return String(this.#part(key, 1));
  }

  /** A work snapshot's key. */
  blob(blobId: string): Deno.KvKey {
    return this.#key("b", blobId);
  }

  /** A history entry's key. */
  historyEntry(line: string, rev: number): Deno.KvKey {
    return this.#key("h", line, rev);
  }

  /** The history entries of a line from `from` up to (not including) `to`. */
  historyEntries(line: string, from: number, to: number): Deno.KvListSelector {
    return { start: this.historyEntry(line, from), end: this.historyEntry(line, to) };
  }

  /** The revision of a key listed by {@link historyEntries}. */
  revisionOf(key: Deno.KvKey): number {
    return Number(this.#part(key, 2));
  }

  /** A history entry's delta record key. */
  historyDelta(line: string, rev: number): Deno.KvKey {
    return this.#key("hd", line, rev);
  }

  /** The delta records (and chunks) of a line from `from` up to (not including) `to`. */
  historyDeltas(line: string, from: number, to: number): Deno.KvListSelector {
    return { start: this.historyDelta(line, from), end: this.historyDelta(line, to) };
  }

  /** The length of a delta record's key (its chunks' keys are one longer). */
  get historyDeltaKeyLength(): number {
    return this.#prefix.length + 3;
  }

  /** A staged delta's key. */
  deltaBlob(line: string, blob: string): Deno.KvKey {
    return this.#key("hb", line, blob);
  }

  /** A progress document's key. */
  progress(project: string): Deno.KvKey {
    return this.#key("p", project);
  }

  /** Every progress document (and chunk). */
  progresses(): { prefix: Deno.KvKey } {
    return { prefix: this.#key("p") };
  }

  /** The project of a key listed by {@link progresses}; undefined for a chunk's key. */
  projectOf(key: Deno.KvKey): string | undefined {
    return key.length === this.#prefix.length + 2 ? String(this.#part(key, 1)) : undefined;
  }

  /** A garbage marker's key. */
  marker(kind: GarbageKind, id: string): Deno.KvKey {
    return this.#key("gc", kind, id);
  }

  /** Every garbage marker. */
  markers(): { prefix: Deno.KvKey } {
    return { prefix: this.#key("gc") };
  }

  /** A key listed by {@link markers} taken apart; undefined when it names no known kind. */
  markerOf(key: Deno.KvKey): { kind: GarbageKind; id: string } | undefined {
    const kind = this.#part(key, 1);
    const id = this.#part(key, 2);
    if (!GARBAGE_KINDS.includes(kind as string) || typeof id !== "string") return undefined;
    return { kind: kind as GarbageKind, id };
  }

  /** The keys a generation or blob owns, to sweep once its marker says so. */
  garbage(kind: GarbageKind, id: string): Deno.KvListSelector[] {
    switch (kind) {
      case "g":
        return [this.tasks(id), this.logs(id)];
      case "b":
        return [recordRange(this.blob(id))];
      case "h":
        return [{ prefix: this.#key("h", id) }, { prefix: this.#key("hd", id) }, {
          prefix: this.#key("hb", id),
        }];
      case "d": {
        const [line = "", blob = ""] = id.split("/");
        return [recordRange(this.deltaBlob(line, blob))];
      }
    }
  }

  #key(...parts: Deno.KvKeyPart[]): Deno.KvKey {
    return this.#prefix.length === 0 ? parts : [...this.#prefix, ...parts];
  }

  /** Part `i` of a key after the prefix (`0`: the tag). */
  #part(key: Deno.KvKey, i: number): Deno.KvKeyPart | undefined {
    return key[this.#prefix.length + i];
  }
}

/** The layout of today's databases: no prefix. */
export const DEFAULT_LAYOUT: KvLayout = new KvLayout();

/** The first key part of every key of a namespace other than `default`. */
export const NAMESPACE_TAG = "n";

/** The counter every change in a namespace other than `default` adds one to. */
export const NAMESPACES_VERSION: Deno.KvKey = ["nv"];

/** The layout of a namespace: {@link DEFAULT_LAYOUT} for `default`, else the prefix `["n", NAME]`. */
export function namespaceLayout(namespace: string): KvLayout {
  return namespace === DEFAULT_NAMESPACE
    ? DEFAULT_LAYOUT
    : new KvLayout([NAMESPACE_TAG, namespace], [NAMESPACES_VERSION]);
}

/** A KV and the layout of the store in it. */
export interface KvPlace {
  kv: Deno.Kv;
  layout: KvLayout;
  /** The lease name of the store writing here (liveness.ts), put into the markers of what it stages. */
  owner?: string;
  /** Told of names read in a repaired form (stored by an older version; old_names.ts). */
  onRepair?: (message: string) => void;
}

/** A session's meta value. */
export const SessionMetaSchema = z.object({
  gen: z.string().min(1),
  seq: z.number().int().nonnegative(),
  /** The session's revision; absent in databases written before history existed (0). */
  rev: z.number().int().nonnegative().optional(),
  /** The session's history line; absent until its first recorded change. */
  line: z.string().min(1).optional(),
});
/** See {@link SessionMetaSchema}. */
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

/** The works version value. */
export const WorksVersionSchema = z.object({ seq: z.number().int().nonnegative() });

/**
 * A garbage marker: `staged` data becomes garbage only when its writer failed to publish it; `owner`
 * names that writer's lease (absent in markers written before leases existed).
 */
export const MarkerSchema = z.object({ at: z.number(), staged: z.boolean(), owner: z.string().optional() });
/** See {@link MarkerSchema}. */
export type Marker = z.infer<typeof MarkerSchema>;

/** A change-log entry: the record ids to re-read, or `full` for "reload everything". */
export const LogEntrySchema = z.union([
  z.object({ ids: z.array(z.string()) }),
  z.object({ full: z.literal(true) }),
]);

/** A history entry's delta record: the delta, or the blob it was staged in. */
export const DeltaRecordSchema = z.union([
  z.object({ delta: DeltaSchema }),
  z.object({ blob: z.string().min(1) }),
]);

/** A fresh random name for a generation or a blob (64 bits, hex). */
export function newName(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
