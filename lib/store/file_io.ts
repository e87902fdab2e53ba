/**
 * The file operations of the JSON file store: where a write goes (the target of a symbolic link),
 * how a file is told apart from another version of itself, the atomic replace (temporary file,
 * fsync, rename, fsync of the directory) that leaves no temporary file behind on any failure, the
 * start-up checks, and the `.orig` copy of a file in another program's format.
 */
import { basename, dirname, isAbsolute, join } from "node:path";
import { StoreOpenError } from "./store.ts";

/** What identifies one version of the file without reading all of it. */
export interface FileStamp {
  ino: number | null;
  mtime: number | undefined;
  ctime: number | undefined;
  size: number;
  /** The `rev` at the head of the file; undefined for files written elsewhere. */
  rev: string | undefined;
}

/** The stamp of an open file's metadata (its `rev` still to be read). */
export function stampOf(info: Deno.FileInfo): FileStamp {
  return {
    ino: info.ino,
    mtime: info.mtime?.getTime(),
    ctime: info.ctime?.getTime(),
    size: info.size,
    rev: undefined,
  };
}

/**
 * Whether two stamps are the same version of the file. Every field counts: another program may keep
 * the `rev` (an editor) or the size (a same-size rewrite), and an inode can be reused, so only all of
 * them together say "unchanged".
 */
export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.rev === b.rev && a.ino === b.ino && a.mtime === b.mtime && a.ctime === b.ctime &&
    a.size === b.size;
}

/** A stamp as one string (the change feed compares these). */
export function stampText(stamp: FileStamp): string {
  return `${stamp.rev ?? ""}:${stamp.ino}:${stamp.mtime}:${stamp.ctime}:${stamp.size}`;
}

/**
 * The file a write replaces: `path` itself, or the file a symbolic link at `path` points to (resolved
 * at each write, so the link stays a link and follows a retargeting).
 */
export async function writeTarget(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotADirectory) return path; // the directory check says so
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  // No file yet: a dangling link still names where the file is to be.
  try {
    const link = await Deno.readLink(path);
    return isAbsolute(link) ? link : join(dirname(path), link);
  } catch {
    return path;
  }
}

/** The temporary file a process writes before renaming it over `target`. */
export function tempPathOf(target: string): string {
  return `${target}.${Deno.pid}.tmp`;
}

/** Matches the temporary files of any process for `target` (a crash's leftovers). */
export function tempPattern(target: string): RegExp {
  return new RegExp(`^${escapeRegExp(basename(target))}\\.\\d+\\.tmp$`);
}

/**
 * Replaces `target` with `data` atomically: a temporary file beside it, fsynced, renamed over it, the
 * directory fsynced. On any failure the temporary file is removed and `target` is as it was.
 * Returns the stamp of the file written.
 */
export async function replaceFile(target: string, data: Uint8Array, rev: string): Promise<FileStamp> {
  const tmp = tempPathOf(target);
  let stamp: FileStamp;
  try {
    const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
    try {
      let written = 0;
      while (written < data.length) written += await file.write(data.subarray(written));
      await file.syncData();
      stamp = { ...stampOf(await file.stat()), rev };
    } finally {
      file.close();
    }
    await Deno.rename(tmp, target);
  } catch (error) {
    await Deno.remove(tmp).catch(() => {});
    throw error;
  }
  await syncDirectory(dirname(target));
  // The rename changed the file's ctime: take the stamp the file has now.
  try {
    const info = await Deno.stat(target);
    if (info.ino === stamp.ino) stamp = { ...stampOf(info), rev };
  } catch {
    // Gone already (another process replaced it): the next read sees a different stamp anyway.
  }
  return stamp;
}

/** Removes the temporary files crashed processes left beside `target` (call under the lock). */
export async function removeTemps(target: string): Promise<void> {
  const dir = dirname(target);
  const pattern = tempPattern(target);
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && pattern.test(entry.name)) {
        await Deno.remove(join(dir, entry.name)).catch(() => {});
      }
    }
  } catch {
    // An unreadable directory only means leftovers stay; the write reports real problems.
  }
}

/**
 * The start-up checks of a store file: its directory is created when missing and must take a new
 * file (a temporary probe, removed at once); the file, when present, must be a readable file.
 * Throws {@link StoreOpenError} with one line naming the place and the problem.
 */
export async function checkStorePlace(path: string, label: string): Promise<void> {
  let target: string;
  try {
    target = await writeTarget(path);
  } catch (error) {
    throw new StoreOpenError(`Cannot resolve ${label} ${path}: ${reason(error)}.`, { cause: error });
  }
  const dir = dirname(target);
  try {
    await Deno.mkdir(dir, { recursive: true });
  } catch (error) {
    const why = error instanceof Deno.errors.AlreadyExists || error instanceof Deno.errors.NotADirectory
      ? "a file that is not a directory is in the way"
      : reason(error);
    throw new StoreOpenError(`Cannot create the directory ${dir} of ${label} ${path}: ${why}.`, {
      cause: error,
    });
  }
  try {
    const info = await Deno.stat(target);
    if (!info.isFile) throw new StoreOpenError(`${label} ${path} is not a file.`);
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new StoreOpenError(`Cannot read ${label} ${path}: ${reason(error)}.`, { cause: error });
    }
  }
  const probe = tempPathOf(target);
  try {
    const file = await Deno.open(probe, { write: true, create: true, truncate: true });
    file.close();
  } catch (error) {
    throw new StoreOpenError(
      `Cannot write in the directory of ${label} ${path} (${dir}): ${reason(error)}.`,
      { cause: error },
    );
  } finally {
    await Deno.remove(probe).catch(() => {});
  }
}

/**
 * Keeps the file at `target` as `<target>.orig` unless that exists (it is never overwritten).
 * Returns the copy's path, or undefined when an earlier copy was kept.
 */
export async function keepOriginal(target: string): Promise<string | undefined> {
  const orig = `${target}.orig`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(orig, { write: true, createNew: true });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return undefined;
    throw error;
  }
  try {
    const data = await Deno.readFile(target);
    let written = 0;
    while (written < data.length) written += await file.write(data.subarray(written));
    await file.syncData();
  } catch (error) {
    file.close();
    await Deno.remove(orig).catch(() => {});
    throw error;
  }
  file.close();
  await syncDirectory(dirname(target));
  return orig;
}

/** Reads until `buffer` is full or the file ends; returns the bytes read. */
export async function readFully(file: Deno.FsFile, buffer: Uint8Array): Promise<number> {
  let at = 0;
  while (at < buffer.length) {
    const n = await file.read(buffer.subarray(at));
    if (n === null) break;
    at += n;
  }
  return at;
}

/** An exclusive lock on `path` (created when missing), held until disposed. */
export async function lockFile(path: string): Promise<Disposable> {
  const file = await Deno.open(path, { create: true, write: true });
  try {
    await file.lock(true);
  } catch (error) {
    file.close();
    throw error;
  }
  return {
    [Symbol.dispose]() {
      file.close();
    },
  };
}

async function syncDirectory(path: string): Promise<void> {
  try {
    using dir = await Deno.open(path, { read: true });
    await dir.sync();
  } catch {
    // Some platforms cannot open or sync a directory; the rename is still atomic there.
  }
}

/** An OS error's text without the operation and path Deno appends. */
function reason(error: unknown): string {
  return String((error as Error).message ?? error).replace(/:\s*\w+ '.*'$/, "");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
