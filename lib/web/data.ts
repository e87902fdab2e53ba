/**
 * What the dashboard reads: the namespaces a credential may see, each a store, and from them the
 * view model (lib/view) of the page, of one session and of a folded part. Read-only.
 */
import type { ProgressDoc } from "../domain/progress_doc.ts";
import { buildSessionView, documentViews, summarizeSession, workViews } from "../view/build.ts";
import { childRows, MAX_OPEN } from "../view/fold.ts";
import type { ChildrenView, HistoryView, NamespaceView, PageView, SessionView } from "../view/model.ts";
import type { Store } from "../store/store.ts";
import { type Credential, mayUse } from "../access/credential.ts";

/** History entries a page shows. */
export const HISTORY_SHOWN = 20;

/** A namespace: its name, its store, and its history reader when the store keeps history. */
export interface Space {
  name: string;
  store: Store;
  /** The session's history, newest first, at most `limit` entries; null when none is kept. */
  history?: (sessionId: string, limit: number) => Promise<HistoryView | null>;
}

/** Which namespaces exist (today one, `default`); the dashboard filters them by credential. */
export type Spaces = () => Promise<Space[]>;

/** What a page asks for: a namespace and session (defaults: the first with work in progress) and opened ids. */
export interface PageQuery {
  namespace?: string;
  session?: string;
  open?: readonly string[];
}

/** Reads the view models for a credential. */
export class DashboardData {
  readonly #spaces: Spaces;

  constructor(spaces: Spaces) {
    this.#spaces = spaces;
  }

  /** The spaces `credential` may see, in order. */
  async visible(credential: Credential): Promise<Space[]> {
    return (await this.#spaces()).filter((space) => mayUse(credential, space.name));
  }

  /** Everything the page shows. */
  async page(credential: Credential, query: PageQuery): Promise<PageView> {
    const spaces = await this.visible(credential);
    const namespaces: NamespaceView[] = [];
    for (const space of spaces) namespaces.push({ name: space.name, sessions: await summaries(space) });
    const chosen = pick(namespaces, query);
    const space = chosen && spaces.find((s) => s.name === chosen.namespace);
    const session = space && chosen ? await this.#session(space, chosen.id, query.open ?? []) : null;
    const home = space ?? spaces[0];
    const [documents, works] = home
      ? await Promise.all([
        readDocuments(home.store),
        home.store.readWorks((entries) => workViews(entries.values())),
      ])
      : [[], []];
    return { namespaces, session, documents: documentViews(documents), works };
  }

  /** A range of a folded part; undefined when the namespace, session or parent is unknown or hidden. */
  async children(
    credential: Credential,
    query: { namespace: string; session: string; parentId?: string; offset: number; count: number },
  ): Promise<ChildrenView | undefined> {
    const space = (await this.visible(credential)).find((s) => s.name === query.namespace);
    if (!space) return undefined;
    const rows = await space.store.readTree(query.session, (tree) => tree && childRows(tree, query));
    return rows ? { rows } : undefined;
  }

  async #session(space: Space, id: string, open: readonly string[]): Promise<SessionView | null> {
    const history = space.history ? await space.history(id, HISTORY_SHOWN) : null;
    return await space.store.readTree(
      id,
      (tree) =>
        tree ? buildSessionView(space.name, id, tree, { open: open.slice(0, MAX_OPEN), history }) : null,
    );
  }
}

async function summaries(space: Space) {
  const ids = (await space.store.listSessions()).sort();
  const out = [];
  for (const id of ids) {
    const summary = await space.store.readTree(id, (tree) => tree && summarizeSession(space.name, id, tree));
    if (summary) out.push(summary);
  }
  return out;
}

/** The asked-for session if it exists; else the first with a task in progress; else the first. */
function pick(
  namespaces: readonly NamespaceView[],
  query: PageQuery,
): { namespace: string; id: string } | undefined {
  const all = namespaces.flatMap((ns) => ns.sessions);
  if (query.session !== undefined) {
    const namespace = query.namespace ?? "default";
    const found = all.find((s) => s.namespace === namespace && s.id === query.session);
    return found ? { namespace, id: found.id } : undefined;
  }
  const chosen = all.find((s) => s.active !== null) ?? all[0];
  return chosen && { namespace: chosen.namespace, id: chosen.id };
}

async function readDocuments(store: Store): Promise<ProgressDoc[]> {
  const docs: ProgressDoc[] = [];
  for (const project of await store.listProjects()) {
    const doc = await store.readProgress(project);
    if (doc) docs.push(doc);
  }
  return docs;
}
