/**
 * The one record codec of the KV store: how a value becomes bytes and back.
 *
 * A record (a task, a work entry, a snapshot, a progress document) is JSON text in UTF-8 split into values of at most {@link CHUNK_BYTES}: the first value
 * sits at the record's key and starts with a 4-byte big-endian count of its chunks, the others sit
 * at `[...key, 1]`, `[...key, 2]`, … (see layout.ts), which Deno KV orders right after the key itself.
 * So a record of any size reads back with one ranged `list` (reader.ts), and a reader ignores stale
 * chunks past the count. Small metadata (a session meta, a version, a log entry, a garbage marker)
 * is a single value of plain JSON. Values written by an older version may hold lone surrogates: they
 * are read well-formed (old_names.ts).
 */
import type { z } from "zod";
import { mayHoldLoneSurrogates, type RenameReport, wellFormedValue } from "../old_names.ts";
import { chunkKey } from "./layout.ts";

/** Data bytes per value (the first adds a 4-byte header); leaves room under Deno KV's 64 KiB. */
export const CHUNK_BYTES = 60_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The keys and values of one record: the first value carries the chunk count. */
export function encodeRecord(key: Deno.KvKey, value: unknown): [Deno.KvKey, Uint8Array][] {
  const bytes = encoder.encode(JSON.stringify(value));
  const count = Math.max(1, Math.ceil(bytes.length / CHUNK_BYTES));
  const out: [Deno.KvKey, Uint8Array][] = [];
  for (let i = 0; i < count; i++) {
    const piece = bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
    if (i === 0) {
      const first = new Uint8Array(piece.length + 4);
      new DataView(first.buffer).setUint32(0, count);
      first.set(piece, 4);
      out.push([key, first]);
    } else out.push([chunkKey(key, i), piece]);
  }
  return out;
}

/** The chunk count a record's first value declares. */
export function chunkCount(first: Uint8Array): number {
  if (first.length < 4) throw new Error("record value shorter than its header");
  return new DataView(first.buffer, first.byteOffset, first.byteLength).getUint32(0);
}

/**
 * JSON text read back, well-formed (see the module doc). `onRename` is told once that the text held a
 * lone surrogate (this store writes JSON.stringify's text, which escapes exactly those), then of each
 * object key renamed.
 */
function parseJson(text: string, onRename: RenameReport = () => {}): unknown {
  const value = JSON.parse(text);
  if (!mayHoldLoneSurrogates(text)) return value;
  onRename("a value held a lone surrogate (stored by an older version); it is read with U+FFFD in its place");
  return wellFormedValue(value, onRename);
}

/** Parses a record from its values in key order (first value first). */
export function decodeRecord(chunks: readonly Uint8Array[], onRename?: RenameReport): unknown {
  const first = chunks[0];
  if (!first) throw new Error("record has no value");
  const count = chunkCount(first);
  if (chunks.length < count) throw new Error(`record has ${chunks.length} of its ${count} chunks`);
  if (count === 1) return parseJson(decoder.decode(first.subarray(4)), onRename);
  let length = first.length - 4;
  for (let i = 1; i < count; i++) length += chunks[i]!.length;
  const bytes = new Uint8Array(length);
  bytes.set(first.subarray(4), 0);
  let at = first.length - 4;
  for (let i = 1; i < count; i++) {
    bytes.set(chunks[i]!, at);
    at += chunks[i]!.length;
  }
  return parseJson(decoder.decode(bytes), onRename);
}

/** Encodes small JSON (metadata) as bytes. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Decodes {@link encodeJson}'s bytes. */
export function decodeJson(bytes: Uint8Array): unknown {
  return parseJson(decoder.decode(bytes));
}

/**
 * Parses a record's values with `schema`; undefined when it does not match (bad JSON throws).
 * `onRename` is told of object keys that had to be renamed (old_names.ts).
 */
export function decodeRecordAs<T>(
  schema: z.ZodType<T>,
  chunks: readonly Uint8Array[],
  onRename?: RenameReport,
): T | undefined {
  const parsed = schema.safeParse(decodeRecord(chunks, onRename));
  return parsed.success ? parsed.data : undefined;
}

/** Parses {@link encodeJson}'s bytes with `schema`; undefined when they do not match (bad JSON throws). */
export function decodeJsonAs<T>(schema: z.ZodType<T>, bytes: Uint8Array): T | undefined {
  const parsed = schema.safeParse(decodeJson(bytes));
  return parsed.success ? parsed.data : undefined;
}
