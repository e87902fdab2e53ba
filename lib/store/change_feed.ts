/**
 * Change feeds: how a store tells a watcher (the dashboard's event streams) that something changed,
 * whichever process changed it. Memory stores call their listeners in process; the JSON file is
 * watched for replacement (with a cheap poll of the `rev` at its head as a fallback); Deno KV is
 * watched on its store-wide change counter, with a poll of that one key for changes made by other
 * processes (a local KV database notifies watchers in the same process only).
 */

/** A set of listeners called after each change (the memory store's feed). */
export class Listeners {
  readonly #set = new Set<() => void>();

  /** Adds `fn`; the returned function removes it. */
  add(fn: () => void): () => void {
    this.#set.add(fn);
    return () => this.#set.delete(fn);
  }

  /** Calls every listener; a throwing listener does not stop the others. */
  notify(): void {
    for (const fn of this.#set) {
      try {
        fn();
      } catch {
        // A watcher's failure is its own.
      }
    }
  }
}

/** How often a poll fallback looks, in milliseconds. */
export const POLL_MS = 500;

/**
 * Watches a file that writers replace by rename: a file-system watch on its directory, plus a poll
 * every {@link POLL_MS} (file systems that send no events, missed events). `signature` reads what
 * identifies the file's content cheaply (its `rev`, or inode, time and size); a change of it is a change.
 */
export function watchFile(
  path: string,
  signature: () => Promise<string | undefined>,
  onChange: () => void,
): () => void {
  let stopped = false;
  let last: Promise<string | undefined> = signature().catch(() => undefined);
  let checking: Promise<void> | undefined;
  const check = () => {
    checking ??= (async () => {
      try {
        const before = await last;
        const now = await signature().catch(() => undefined);
        last = Promise.resolve(now);
        if (!stopped && now !== before) onChange();
      } finally {
        checking = undefined;
      }
    })();
  };
  const timer = setInterval(check, POLL_MS);
  let watcher: Deno.FsWatcher | undefined;
  try {
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
    const name = path.slice(path.lastIndexOf("/") + 1);
    watcher = Deno.watchFs(dir, { recursive: false });
    (async () => {
      for await (const event of watcher!) {
        if (event.paths.some((p) => p.endsWith(`/${name}`) || p === name)) check();
      }
    })().catch(() => {});
  } catch {
    // No file-system events here: the poll alone finds changes.
  }
  return () => {
    stopped = true;
    clearInterval(timer);
    try {
      watcher?.close();
    } catch {
      // Already closed.
    }
  };
}

/**
 * Watches Deno KV keys that changes bump: `kv.watch` (instant for this process) and a poll of the
 * keys every {@link POLL_MS} (other processes). A change of any of them is a change.
 */
export function watchKvKeys(kv: Deno.Kv, keys: readonly Deno.KvKey[], onChange: () => void): () => void {
  let stopped = false;
  const seen: (string | null | undefined)[] = keys.map(() => undefined);
  // Versionstamps grow: a late answer of the poll about an older one is no change.
  const saw = (versionstamps: readonly (string | null)[]) => {
    if (stopped) return;
    let changed = false;
    versionstamps.forEach((versionstamp, i) => {
      const before = seen[i];
      if (before === undefined) {
        seen[i] = versionstamp;
      } else if (versionstamp !== null && (before === null || versionstamp > before)) {
        seen[i] = versionstamp;
        changed = true;
      }
    });
    if (changed) onChange();
  };
  const stream = kv.watch([...keys]);
  const reader = stream.getReader();
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      saw(value.map((entry) => entry.versionstamp));
    }
  })().catch(() => {});
  const timer = setInterval(() => {
    kv.getMany([...keys]).then((entries) => saw(entries.map((entry) => entry.versionstamp)), () => {});
  }, POLL_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
    reader.cancel().catch(() => {});
  };
}
