/**
 * The JSON file store (`FILE_PATH`, R4): the whole store in one JSON document (namespace `default` at
 * its top level as before namespaces, the others in its optional `namespaces` block; state.ts).
 *
 * Safe for several processes on one file: every change takes an exclusive lock on `<file>.lock`,
 * re-reads the file if another process replaced it, applies the change, writes a temporary file,
 * fsyncs it, renames it over the file and fsyncs the directory, all before the reply. Readers never
 * see a half-written file, and a crash at any moment leaves the old or the new document.
 *
 * "Another process replaced it" is decided by the `rev` each write puts at the head of the file (a
 * random name, read with the first bytes), not by inode and mtime alone: a freed inode is reused
 * and mtime is coarse, so two writes can look alike. Files written by other programs (no `rev`)
 * fall back to inode, mtime and size.
 */
import { DEFAULTS } from "../config.ts";
import { basename, dirname, join } from "node:path";
import { watchFile } from "./change_feed.ts";
import { Serial } from "./serial.ts";
import { type Applied, type StoreDocument, StoreState, validateStoreFile } from "./state.ts";
import { Spaces, StateSpace } from "./state_space.ts";
import { type NamespaceOption, type Space, type Store, StoreOpenError, type StoreOptions } from "./store.ts";

interface FileStamp {
  ino: number | null;
  mtime: number | undefined;
  size: number;
  /** The `rev` at the head of the file; undefined for files written elsewhere. */
  rev: string | undefined;
}

/** How every file this store writes begins; the head read on each operation matches it. */
const HEAD = /^\{"version":1,"rev":"([0-9a-f]{32})"/;
const HEAD_BYTES = 64;

/** Options of {@link JsonFileStore.open}. */
export interface JsonFileStoreOptions extends StoreOptions {
  /** Receives one line per invariant repair made while loading a file written elsewhere. */
  onRepair?: (message: string) => void;
}

/** See the module doc. */
export class JsonFileStore implements Store {
  readonly kind = "file" as const;
  readonly path: string;
  #lockPath: string;
  #state = new StoreState();
  #stamp: FileStamp | undefined;
  #serial = new Serial();
  #onRepair: (message: string) => void;
  #sweptTemps = false;
  readonly historySize: number;
  readonly #spaces: Spaces<StateSpace>;

  private constructor(path: string, options: JsonFileStoreOptions) {
    this.path = path;
    this.#lockPath = `${path}.lock`;
    this.#onRepair = options.onRepair ?? (() => {});
    this.historySize = options.historySize ?? DEFAULTS.historySize;
    const access = {
      read: <T>(fn: (state: StoreState) => T) => this.#read(fn),
      mutate: <T>(apply: (state: StoreState) => Applied<T>) => this.#mutate(apply),
    };
    this.#spaces = new Spaces((namespace) =>
      new StateSpace({ namespace, kind: this.kind, historySize: this.historySize, access })
    );
  }

  /** Opens the file, loading and validating it; a missing file starts empty. Throws {@link StoreOpenError}. */
  static async open(path: string, options: JsonFileStoreOptions = {}): Promise<JsonFileStore> {
    const store = new JsonFileStore(path, options);
    await store.#refresh();
    return store;
  }

  space(namespace: string): Space {
    return this.#spaces.get(namespace);
  }

  listNamespaces(): Promise<string[]> {
    return this.#read(() => this.#state.namespaces());
  }

  async exportDocument(options: NamespaceOption = {}): Promise<StoreDocument> {
    const namespace = this.#checked(options);
    return await this.#read(() => structuredClone(this.#state.toDocument(namespace)));
  }

  async importState(state: StoreState, options: NamespaceOption = {}): Promise<void> {
    const namespace = this.#checked(options);
    return await this.#mutate((current) => current.replaceWith(state, namespace));
  }

  watch(onChange: () => void): () => void {
    return watchFile(this.path, () => this.#signature(), onChange);
  }

  close(): Promise<void> {
    return this.#serial.run(() => Promise.resolve());
  }

  #checked(options: NamespaceOption): string | undefined {
    return options.namespace === undefined ? undefined : this.#spaces.get(options.namespace).namespace;
  }

  #read<T>(fn: (state: StoreState) => T): Promise<T> {
    return this.#serial.run(async () => {
      await this.#refresh();
      return fn(this.#state);
    });
  }

  #mutate<T>(apply: (state: StoreState) => Applied<T>): Promise<T> {
    return this.#serial.run(async () => {
      using _lock = await lockFile(this.#lockPath);
      if (!this.#sweptTemps) {
        // Under the lock no other process is writing: a temporary file left now was a crash's.
        await this.#removeTemps();
        this.#sweptTemps = true;
      }
      await this.#refresh();
      const applied = apply(this.#state);
      try {
        await this.#write();
      } catch (error) {
        applied.undo();
        throw error;
      }
      return applied.result;
    });
  }

  /** Reloads the file when another process replaced it since we last read or wrote it. */
  async #refresh(): Promise<void> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw this.#cannotRead(error);
    }
    try {
      // One handle for the stamp and the text: a rename by another process cannot split them.
      const stamp = stampOf(await file.stat());
      const head = new Uint8Array(HEAD_BYTES);
      const n = await readFully(file, head);
      stamp.rev = HEAD.exec(new TextDecoder().decode(head.subarray(0, n)))?.[1];
      if (this.#stamp && sameStamp(this.#stamp, stamp)) return;
      await file.seek(0, Deno.SeekMode.Start);
      const bytes = new Uint8Array(stamp.size);
      const length = await readFully(file, bytes);
      const text = new TextDecoder().decode(bytes.subarray(0, length));
      this.#state = this.#parse(text);
      this.#stamp = stamp;
    } catch (error) {
      if (error instanceof StoreOpenError) throw error;
      throw this.#cannotRead(error);
    } finally {
      file.close();
    }
  }

  /** What identifies the file's content without reading it: its `rev`, else inode, time and size. */
  async #signature(): Promise<string | undefined> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true });
    } catch {
      return undefined;
    }
    try {
      const stamp = stampOf(await file.stat());
      const head = new Uint8Array(HEAD_BYTES);
      const n = await readFully(file, head);
      const rev = HEAD.exec(new TextDecoder().decode(head.subarray(0, n)))?.[1];
      return rev ?? `${stamp.ino}:${stamp.mtime}:${stamp.size}`;
    } finally {
      file.close();
    }
  }

  #cannotRead(error: unknown): StoreOpenError {
    return new StoreOpenError(`Cannot read FILE_PATH ${this.path}: ${(error as Error).message}`, {
      cause: error,
    });
  }

  async #removeTemps(): Promise<void> {
    const dir = dirname(this.path);
    const pattern = new RegExp(`^${escapeRegExp(basename(this.path))}\\.\\d+\\.tmp$`);
    try {
      for await (const entry of Deno.readDir(dir)) {
        if (entry.isFile && pattern.test(entry.name)) {
          await Deno.remove(join(dir, entry.name)).catch(() => {});
        }
      }
    } catch {
      // An unreadable directory only means leftovers stay; the write below reports real problems.
    }
  }

  #parse(text: string): StoreState {
    if (text.trim() === "") return new StoreState();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new StoreOpenError(
        `FILE_PATH ${this.path} is not valid JSON (${
          (error as Error).message
        }). Fix or move the file; it was left untouched.`,
      );
    }
    const parsed = validateStoreFile(json);
    if (parsed.problem !== undefined) {
      throw new StoreOpenError(
        `FILE_PATH ${this.path} does not hold a task store: ${parsed.problem}. Fix or move the file; it was left untouched.`,
      );
    }
    try {
      const { state, repairs } = StoreState.fromFile(parsed.data);
      for (const repair of repairs) this.#onRepair(repair);
      return state;
    } catch (error) {
      throw new StoreOpenError(
        `FILE_PATH ${this.path} is inconsistent: ${
          (error as Error).message
        } Fix or move the file; it was left untouched.`,
      );
    }
  }

  async #write(): Promise<void> {
    const rev = randomRev();
    const data = new TextEncoder().encode(this.#state.toFileText(rev));
    const tmp = `${this.path}.${Deno.pid}.tmp`;
    let stamp: FileStamp;
    const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
    try {
      let written = 0;
      while (written < data.length) written += await file.write(data.subarray(written));
      await file.syncData();
      stamp = { ...stampOf(await file.stat()), rev };
    } finally {
      file.close();
    }
    try {
      await Deno.rename(tmp, this.path);
    } catch (error) {
      await Deno.remove(tmp).catch(() => {});
      throw error;
    }
    this.#stamp = stamp;
    await syncDirectory(dirname(this.path));
  }
}

function stampOf(info: Deno.FileInfo): FileStamp {
  return { ino: info.ino, mtime: info.mtime?.getTime(), size: info.size, rev: undefined };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  if (a.rev !== undefined || b.rev !== undefined) return a.rev === b.rev;
  return a.ino === b.ino && a.mtime === b.mtime && a.size === b.size;
}

function randomRev(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads until `buffer` is full or the file ends; returns the bytes read. */
async function readFully(file: Deno.FsFile, buffer: Uint8Array): Promise<number> {
  let at = 0;
  while (at < buffer.length) {
    const n = await file.read(buffer.subarray(at));
    if (n === null) break;
    at += n;
  }
  return at;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function lockFile(path: string): Promise<Disposable> {
  const file = await Deno.open(path, { create: true, write: true });
  await file.lock(true);
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
