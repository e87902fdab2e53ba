/**
 * What `subscriptions/listen` streams hear (docs/protocol.md "Protocol eras"): after any change to the store,
 * by this process or another one sharing it, each resource a stream subscribed to whose version
 * moved is announced as updated, and a change to the set of listed names (sessions, works,
 * progress documents) as a list change.
 *
 * The store's feed says only that something changed (lib/store/change_feed.ts). Finding out what
 * costs one read per subscribed resource (a session's revision, a progress document's revision, a
 * work's save time), never a read of the whole namespace, whatever its size; the listing is read
 * (names only) only while some stream asked for list changes. A lease renewal adds no revision, so
 * it is not announced: a heartbeat would otherwise wake every listener.
 *
 * One watch serves one namespace and one output (an HTTP handler's event bus, or one stdio
 * connection); streams add what they want with {@link ResourceWatch.want} and take it back with the
 * function it returns, so two streams wanting one resource cause one announcement, not two.
 */
import type { Logger } from "../log.ts";
import type { Space, Store } from "../store/store.ts";
import { recentWorks } from "../domain/work_lru.ts";
import { parseResourceUri } from "./resource_uris.ts";

/** What a watch announces: a resource's update, or a change of the listed names. */
export type ResourceEvent = { kind: "resource_updated"; uri: string } | { kind: "resources_list_changed" };

/** What one stream wants: the resources it subscribed to, and whether it wants list changes. */
export interface ResourceInterest {
  uris?: readonly string[];
  listChanged?: boolean;
}

/**
 * What a `subscriptions/listen` request asks of a watch: its filter's `resourceSubscriptions` and
 * `resourcesListChanged` (the rest of the filter, and a malformed one, are the SDK's to answer).
 */
export function listenInterest(params: unknown): ResourceInterest {
  const filter = ((params as { notifications?: unknown } | null | undefined)?.notifications ?? {}) as Record<
    string,
    unknown
  >;
  const uris = Array.isArray(filter.resourceSubscriptions)
    ? filter.resourceSubscriptions.filter((u): u is string => typeof u === "string")
    : [];
  return { uris, listChanged: filter.resourcesListChanged === true };
}

/** Options of {@link ResourceWatch}. */
export interface ResourceWatchOptions {
  /** The store: its namespace `namespace` is read, and its change feed ({@link Store.watch}) followed. */
  store: Store;
  namespace: string;
  /** Receives each announcement. */
  emit: (event: ResourceEvent) => void;
  /** Capacity of the work-info LRU: works past it are not listed. */
  workCacheSize: number;
  log: Logger;
}

/** See the module doc. */
export class ResourceWatch {
  readonly #options: ResourceWatchOptions;
  readonly #space: Space;
  /** Wanted URIs and how many streams want each. */
  readonly #uris = new Map<string, number>();
  /** The last version seen of each wanted URI (undefined: not read yet). */
  readonly #versions = new Map<string, string | undefined>();
  #listWanted = 0;
  #listing: string | undefined;
  #unsubscribe: (() => void) | undefined;
  #dirty = false;
  #checking: Promise<void> | undefined;

  constructor(options: ResourceWatchOptions) {
    this.#options = options;
    this.#space = options.store.space(options.namespace);
  }

  /** How many wants are held now (0: the store is not watched). */
  get size(): number {
    return [...this.#uris.values()].reduce((a, b) => a + b, 0) + this.#listWanted;
  }

  /**
   * Adds `interest`; resolves once the current versions are read, so what changes afterwards is
   * announced. The returned function takes it back (idempotent).
   */
  async want(interest: ResourceInterest): Promise<() => void> {
    const uris = [...new Set(interest.uris ?? [])].filter(watchable);
    const list = interest.listChanged === true;
    const fresh = uris.filter((uri) => !this.#uris.has(uri));
    for (const uri of uris) this.#uris.set(uri, (this.#uris.get(uri) ?? 0) + 1);
    if (list) this.#listWanted++;
    this.#unsubscribe ??= this.#options.store.watch(() => this.#changed());
    await Promise.all([
      ...fresh.map(async (uri) => {
        const version = await this.#version(uri);
        if (this.#uris.has(uri) && this.#versions.get(uri) === undefined) this.#versions.set(uri, version);
      }),
      list && this.#listing === undefined
        ? this.#names().then((names) => (this.#listing ??= names))
        : Promise.resolve(),
    ]);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const uri of uris) {
        const count = (this.#uris.get(uri) ?? 1) - 1;
        if (count > 0) this.#uris.set(uri, count);
        else {
          this.#uris.delete(uri);
          this.#versions.delete(uri);
        }
      }
      if (list && --this.#listWanted === 0) this.#listing = undefined;
      if (this.size === 0) this.close();
    };
  }

  /** Stops watching the store and forgets every want. */
  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#uris.clear();
    this.#versions.clear();
    this.#listWanted = 0;
    this.#listing = undefined;
  }

  #changed(): void {
    this.#dirty = true;
    this.#checking ??= this.#check().finally(() => (this.#checking = undefined));
  }

  /** Reads the version of every wanted URI (and the listing, if wanted); announces what moved. */
  async #check(): Promise<void> {
    while (this.#dirty) {
      this.#dirty = false;
      for (const uri of [...this.#uris.keys()]) {
        const version = await this.#version(uri);
        if (version === undefined || !this.#uris.has(uri)) continue;
        const before = this.#versions.get(uri);
        this.#versions.set(uri, version);
        if (before !== undefined && before !== version) this.#options.emit({ kind: "resource_updated", uri });
      }
      if (this.#listWanted > 0) {
        const names = await this.#names();
        if (this.#listWanted > 0 && names !== undefined && names !== this.#listing) {
          const before = this.#listing;
          this.#listing = names;
          if (before !== undefined) this.#options.emit({ kind: "resources_list_changed" });
        }
      }
    }
  }

  /** The version of one resource; undefined when it cannot be read now (it is read again next time). */
  async #version(uri: string): Promise<string | undefined> {
    const { log } = this.#options;
    const space = this.#space;
    const ref = parseResourceUri(uri);
    try {
      if (ref?.kind === "session") return String((await space.readHistory(ref.sessionId, 1)).revision);
      if (ref?.kind === "progress") return String((await space.readProgress(ref.project))?.revision ?? 0);
      const workId = ref?.kind === "work" ? ref.workId : "";
      return await space.readWorks((entries) => entries.get(workId)?.work_timestamp ?? "");
    } catch (error) {
      log.debug("resource watch: reading a version failed", { uri, error });
      return undefined;
    }
  }

  /** The listed names, as one text that changes when any appears or goes. */
  async #names(): Promise<string | undefined> {
    const { workCacheSize, log } = this.#options;
    const space = this.#space;
    try {
      const [sessions, projects, works] = await Promise.all([
        space.listSessions(),
        space.listProjects(),
        space.readWorks((entries) => recentWorks(entries.values(), workCacheSize).map((w) => w.workId)),
      ]);
      return JSON.stringify([sessions.sort(), projects.sort(), works.sort()]);
    } catch (error) {
      log.debug("resource watch: reading the listing failed", { error });
      return undefined;
    }
  }
}

/** Whether a URI names a resource that can change (the plan view never does). */
function watchable(uri: string): boolean {
  return parseResourceUri(uri) !== undefined;
}
