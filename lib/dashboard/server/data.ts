/**
 * What the dashboard reads: the namespaces a credential may see (docs/namespaces.md), each a space
 * of the store, and from them the view model (lib/render) of the page, of one session and of a folded
 * part. Read-only. The dashboard's rows show where work is (held leaves' paths and branch, leaves
 * waiting on reservations, judged with this server's clock); the plan view's do not.
 */
import type { ProgressDoc } from "../../domain/progress_doc.ts";
import { LIMITS } from "../../domain/limits.ts";
import { DEFAULT_NAMESPACE } from "../../domain/names.ts";
import { isWellFormed } from "../../domain/unicode.ts";
import type { Logger } from "../../log.ts";
import { linkableNames } from "../../store/stored_names.ts";
import type { Space, Store } from "../../store/store.ts";
import { buildSessionView, documentViews, summarizeSession, workViews } from "../../render/build.ts";
import { childRows, MAX_OPEN } from "../../render/fold.ts";
import type { ChildrenView, NamespaceView, PageView, SessionView } from "../../render/model.ts";
import { type Credential, mayUse, visibleNamespaces } from "../../auth/credential.ts";

/** History entries a page shows. */
export const HISTORY_SHOWN = 20;

/**
 * What a page asks for: a namespace and session (defaults: the first with work in progress), opened
 * ids, and the window of the namespace's session list (`after`: the sessions named after it).
 */
export interface PageQuery {
  namespace?: string;
  session?: string;
  open?: readonly string[];
  after?: string;
}

/** Reads the view models for a credential. */
export class DashboardData {
  readonly #store: Store;
  readonly #log: Logger;

  /** `log` hears of stored names that cannot be linked (lib/store/stored_names.ts). */
  constructor(store: Store, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /**
   * The spaces `credential` may see: with `"*"`, its own namespace and every namespace that holds
   * anything (`default` first, then by name); else the namespaces it lists, in its order.
   */
  async visible(credential: Credential): Promise<Space[]> {
    const names = await visibleNamespaces(credential, () => this.#store.listNamespaces());
    return names.map((name) => this.#store.space(name));
  }

  /** Whether `credential` may see `namespace` (a valid name it is allowed). */
  allows(credential: Credential, namespace: string): boolean {
    return mayUse(credential, namespace);
  }

  /** Everything the page shows. */
  async page(credential: Credential, query: PageQuery): Promise<PageView> {
    const spaces = await this.visible(credential);
    const namespaces: NamespaceView[] = [];
    for (const space of spaces) {
      const after = space.namespace === (query.namespace ?? DEFAULT_NAMESPACE) ? query.after ?? "" : "";
      namespaces.push(await this.#window(space, after));
    }
    const chosen = await pick(spaces, namespaces, query);
    const space = chosen && spaces.find((s) => s.namespace === chosen.namespace);
    const session = space && chosen ? await this.#session(space, chosen.id, query.open ?? []) : null;
    const home = space ?? spaces.find((s) => s.namespace === query.namespace) ?? spaces[0];
    const [documents, works] = home
      ? await Promise.all([
        readDocuments(home),
        home.readWorks((entries) => workViews(entries.values())),
      ])
      : [[], []];
    return { namespaces, session, documents: documentViews(documents), works };
  }

  /** A range of a folded part; undefined when the namespace, session or parent is unknown or hidden. */
  async children(
    credential: Credential,
    query: { namespace: string; session: string; parentId?: string; offset: number; count: number },
  ): Promise<ChildrenView | undefined> {
    if (!this.allows(credential, query.namespace)) return undefined;
    const space = this.#store.space(query.namespace);
    const rows = await space.readTree(
      query.session,
      (tree) => tree && childRows(tree, query, { work: { now: Date.now() } }),
    );
    return rows ? { rows } : undefined;
  }

  /** One window of a namespace's sessions, by name: at most `LIMITS.listPage`, after `after`. */
  async #window(space: Space, after: string): Promise<NamespaceView> {
    const ids = linkableNames(await space.listSessions(), {
      store: this.#store,
      namespace: space.namespace,
      kind: "session",
      log: this.#log,
    }).sort();
    const start = after === "" ? 0 : firstAfter(ids, after);
    const shown = ids.slice(start, start + LIMITS.listPage);
    const sessions = [];
    for (const id of shown) {
      const summary = await space.readTree(id, (tree) => tree && summarizeSession(space.namespace, id, tree));
      if (summary) sessions.push(summary);
    }
    return {
      name: space.namespace,
      total: ids.length,
      start,
      after: start === 0 ? "" : after,
      sessions,
      previous: start === 0 ? null : start <= LIMITS.listPage ? "" : ids[start - LIMITS.listPage - 1]!,
      next: start + LIMITS.listPage < ids.length ? shown[shown.length - 1]! : null,
    };
  }

  async #session(space: Space, id: string, open: readonly string[]): Promise<SessionView | null> {
    // History off (HISTORY_SIZE=0): the page shows no history section.
    const history = space.historySize === 0 ? null : await space.readHistory(id, HISTORY_SHOWN);
    return await space.readTree(
      id,
      (tree) =>
        tree
          ? buildSessionView(space.namespace, id, tree, {
            open: open.slice(0, MAX_OPEN),
            history,
            notes: true,
            work: { now: Date.now() },
          })
          : null,
    );
  }
}

/** The index of the first of the sorted `ids` that sorts after `after`. */
function firstAfter(ids: readonly string[], after: string): number {
  let [low, high] = [0, ids.length];
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ids[mid]! <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * The asked-for session if it exists (in or out of the window shown); else the first shown with a
 * task in progress; else the first shown (of the asked-for namespace, when one is asked for).
 */
async function pick(
  spaces: readonly Space[],
  namespaces: readonly NamespaceView[],
  query: PageQuery,
): Promise<{ namespace: string; id: string } | undefined> {
  if (query.session !== undefined) {
    const namespace = query.namespace ?? DEFAULT_NAMESPACE;
    const space = spaces.find((s) => s.namespace === namespace);
    const found = space && isWellFormed(query.session) &&
      await space.readTree(query.session, (tree) => tree !== undefined);
    return found ? { namespace, id: query.session } : undefined;
  }
  const all = namespaces.filter((ns) => query.namespace === undefined || ns.name === query.namespace)
    .flatMap((ns) => ns.sessions);
  const chosen = all.find((s) => s.active !== null) ?? all[0];
  return chosen && { namespace: chosen.namespace, id: chosen.id };
}

async function readDocuments(space: Space): Promise<ProgressDoc[]> {
  const docs: ProgressDoc[] = [];
  for (const project of await space.listProjects()) {
    const doc = await space.readProgress(project);
    if (doc) docs.push(doc);
  }
  return docs;
}
