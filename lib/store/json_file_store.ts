/**
 * The JSON file store (`FILE_PATH`, R4): the whole store in one JSON document (namespace `default` at
 * its top level as before namespaces, the others in its optional `namespaces` block; file_format.ts).
 *
 * Safe for several processes on one file: every change takes an exclusive lock on `<file>.lock`,
 * re-reads the file if anyone else changed it, applies the change, and replaces the file atomically
 * (file_io.ts), all before the reply. Readers never see a half-written file, and a crash at any
 * moment leaves the old or the new document.
 *
 * "Anyone else changed it" is decided by the `rev` each write puts at the head of the file (a random
 * name, read with the first bytes) together with inode, times and size: another process writes a new
 * `rev`, an editor may keep it but not the times, and a freed inode may be reused.
 *
 * A file that cannot be read or parsed is never written over: at open that is a
 * {@link StoreOpenError}, later every change fails with it (reads go on with the last state read)
 * until the file is repaired. A `FILE_PATH` that is a symbolic link stays one: writes replace its
 * target. A file in task-orchestrator's format (a bare array) is kept as `<file>.orig` by the first
 * change, which writes it in this store's format. Names an older version stored with a lone surrogate
 * load repaired and reported (old_names.ts); the next change writes them so.
 */
import { DEFAULTS } from "../config.ts";
import { watchFile } from "./change_feed.ts";
import {
  checkStorePlace,
  type FileStamp,
  keepOriginal,
  lockFile,
  readFully,
  removeTemps,
  replaceFile,
  sameStamp,
  stampOf,
  stampText,
  writeTarget,
} from "./file_io.ts";
import { mayHoldLoneSurrogates, repairOldNames } from "./old_names.ts";
import { Serial } from "./serial.ts";
import {
  stateDocument,
  stateFileText,
  stateFromFile,
  type StoreDocument,
  validateStoreFile,
} from "./file_format.ts";
import { type Applied, StoreState } from "./state.ts";
import { Spaces, type StateHandle, StateSpace } from "./state_space.ts";
import { type NamespaceOption, type Space, type Store, StoreOpenError, type StoreOptions } from "./store.ts";

/** How every file this store writes begins; the head read on each operation matches it. */
const HEAD = /^\{"version":1,"rev":"([0-9a-f]{32})"/;
const HEAD_BYTES = 64;

/** Options of {@link JsonFileStore.open}. */
export interface JsonFileStoreOptions extends StoreOptions {
  /** Receives one line per invariant repair made while loading a file written elsewhere. */
  onRepair?: (message: string) => void;
  /** Told the path of the `.orig` copy when a bare-array file is converted by its first change. */
  onConvert?: (original: string) => void;
}

/** See the module doc. */
export class JsonFileStore implements Store {
  readonly kind = "file" as const;
  readonly path: string;
  #state = new StoreState();
  #stamp: FileStamp | undefined;
  /** The file read last is a bare array of tasks (task-orchestrator's format). */
  #bareArray = false;
  #serial = new Serial();
  #onRepair: (message: string) => void;
  #onConvert: (original: string) => void;
  #sweptTemps = false;
  readonly historySize: number;
  readonly #spaces: Spaces<StateSpace>;

  private constructor(path: string, options: JsonFileStoreOptions) {
    this.path = path;
    this.#onRepair = options.onRepair ?? (() => {});
    this.#onConvert = options.onConvert ?? (() => {});
    this.historySize = options.historySize ?? DEFAULTS.historySize;
    const handle: StateHandle = {
      read: <T>(fn: (state: StoreState) => T) => this.#read(fn),
      mutate: <T>(apply: (state: StoreState) => Applied<T>) => this.#mutate(apply),
    };
    this.#spaces = new Spaces((namespace) =>
      new StateSpace({ namespace, kind: this.kind, historySize: this.historySize, state: handle })
    );
  }

  /**
   * Opens the file, loading and validating it; a missing file (and a missing directory, which is
   * created) starts empty, as does an empty file. Throws {@link StoreOpenError} when the directory
   * cannot take a new file or the file cannot be read or parsed.
   */
  static async open(path: string, options: JsonFileStoreOptions = {}): Promise<JsonFileStore> {
    await checkStorePlace(path, "FILE_PATH");
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
    return await this.#read(() => structuredClone(stateDocument(this.#state, namespace)));
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

  /** Runs `fn` on the file's current state; when the file cannot be read, on the last state read. */
  #read<T>(fn: (state: StoreState) => T): Promise<T> {
    return this.#serial.run(async () => {
      try {
        await this.#refresh();
      } catch {
        // Reads go on with what was read last; changes report the problem (see the module doc).
      }
      return fn(this.#state);
    });
  }

  #mutate<T>(apply: (state: StoreState) => Applied<T>): Promise<T> {
    return this.#serial.run(async () => {
      const target = await writeTarget(this.path);
      using _lock = await lockFile(`${target}.lock`);
      if (!this.#sweptTemps) {
        // Under the lock no other process is writing: a temporary file left now was a crash's.
        await removeTemps(target);
        this.#sweptTemps = true;
      }
      await this.#refresh();
      const applied = apply(this.#state);
      try {
        if (this.#bareArray) await this.#keepOriginal(target);
        await this.#write(target);
      } catch (error) {
        applied.undo();
        throw error;
      }
      return applied.result;
    });
  }

  /** Before the first write over a bare-array file: keeps it as `<file>.orig` and says so. */
  async #keepOriginal(target: string): Promise<void> {
    const orig = await keepOriginal(target);
    if (orig !== undefined) this.#onConvert(orig);
    this.#bareArray = false;
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
      const { state, bareArray } = this.#parse(text);
      this.#state = state;
      this.#bareArray = bareArray;
      this.#stamp = stamp;
    } catch (error) {
      if (error instanceof StoreOpenError) throw error;
      throw this.#cannotRead(error);
    } finally {
      file.close();
    }
  }

  /** What identifies the file's content without reading it (see {@link sameStamp}). */
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
      stamp.rev = HEAD.exec(new TextDecoder().decode(head.subarray(0, n)))?.[1];
      return stampText(stamp);
    } finally {
      file.close();
    }
  }

  #cannotRead(error: unknown): StoreOpenError {
    return new StoreOpenError(`Cannot read FILE_PATH ${this.path}: ${(error as Error).message}`, {
      cause: error,
    });
  }

  #parse(text: string): { state: StoreState; bareArray: boolean } {
    const { state, bareArray, repairs } = parseStoreText(text, this.path);
    for (const repair of repairs) this.#onRepair(repair);
    return { state, bareArray };
  }

  async #write(target: string): Promise<void> {
    const rev = randomRev();
    const data = new TextEncoder().encode(stateFileText(this.#state, rev));
    this.#stamp = await replaceFile(target, data, rev);
  }
}

function randomRev(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Reads the text of a store file at `path` (named in messages): an empty text is an empty store; a
 * bare array of tasks loads as session `default` (`bareArray`). Returns the state with the repairs
 * loading needed (names an older version stored with lone surrogates, invariants). Throws
 * {@link StoreOpenError} when the text is not JSON, not a store, or inconsistent. The commit guard
 * reads a file with it too, without opening a store.
 */
export function parseStoreText(
  text: string,
  path: string,
): { state: StoreState; bareArray: boolean; repairs: string[] } {
  if (text.trim() === "") return { state: new StoreState(), bareArray: false, repairs: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StoreOpenError(
      `FILE_PATH ${path} is not valid JSON (${
        (error as Error).message
      }). Fix or move the file; it was left untouched.`,
    );
  }
  const renames: string[] = [];
  if (mayHoldLoneSurrogates(text)) json = repairOldNames(json, (message) => renames.push(message));
  const parsed = validateStoreFile(json);
  if (parsed.problem !== undefined) {
    throw new StoreOpenError(
      `FILE_PATH ${path} does not hold a task store: ${parsed.problem}. Fix or move the file; it was left untouched.`,
    );
  }
  try {
    const { state, repairs } = stateFromFile(parsed.data);
    return { state, bareArray: Array.isArray(parsed.data), repairs: [...renames, ...repairs] };
  } catch (error) {
    throw new StoreOpenError(
      `FILE_PATH ${path} is inconsistent: ${
        (error as Error).message
      } Fix or move the file; it was left untouched.`,
    );
  }
}
