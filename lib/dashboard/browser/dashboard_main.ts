/// <reference lib="dom" />
/**
 * The dashboard's script (bundled into lib/dashboard/assets/dashboard_js.ts by `deno task build:web`).
 *
 * The page arrives rendered; this script opens and folds parts of the tree (reading them through the
 * JSON routes) and keeps the page live: on each `change` event it reads the view again and renders it
 * with the same element descriptions the server used (lib/render/render.ts), as DOM nodes, lease times
 * against the viewer's clock (redrawn every second, lib/render/lease_dom.ts). Agent text is only ever
 * set as text. It reads; it changes nothing.
 */
import { toDom } from "../../render/dom.ts";
import type { ChildrenView, PageView } from "../../render/model.ts";
import {
  documentsPanel,
  noSessionPanel,
  sessionList,
  sessionPanel,
  worksPanel,
} from "../../render/render.ts";
import { keepLeasesCurrent } from "../../render/lease_dom.ts";
import { listenTree, type RowLoader } from "../../render/tree_dom.ts";
import { DEFAULT_NAMESPACE } from "../../domain/names.ts";

/** Ids the person unfolded (kept unfolded across live updates). */
const opened = new Set<string>();

function current(): { namespace: string; session: string } | undefined {
  const panel = document.getElementById("session");
  const session = panel?.dataset.session;
  return session === undefined
    ? undefined
    : { namespace: panel!.dataset.namespace ?? DEFAULT_NAMESPACE, session };
}

async function readJson<T>(path: string, params: URLSearchParams): Promise<T> {
  const response = await fetch(`${path}?${params}`, {
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return await response.json() as T;
}

const loadRows: RowLoader = async ({ parentId, offset, count }) => {
  const at = current();
  if (!at) return [];
  const query = new URLSearchParams({
    ns: at.namespace,
    session: at.session,
    parent: parentId ?? "",
    offset: String(offset),
    count: String(count),
  });
  return (await readJson<ChildrenView>("/api/children", query)).rows;
};

function replace(id: string, node: Node): void {
  document.getElementById(id)?.replaceWith(node);
}

/** Reads the page's data again and renders it in place. */
async function refresh(): Promise<void> {
  const at = current();
  const params = new URLSearchParams();
  if (at) {
    params.set("ns", at.namespace);
    params.set("session", at.session);
    // The window of the session list shown (lib/render/render.ts windowHref).
    const after = new URLSearchParams(location.search).get("after");
    if (after) params.set("after", after);
  } else {
    for (const [key, value] of new URLSearchParams(location.search)) {
      if (key !== "token") params.set(key, value);
    }
  }
  if (opened.size > 0) params.set("open", [...opened].join(","));
  const view = await readJson<PageView>("/api/view", params);
  const selected = view.session ? { namespace: view.session.namespace, id: view.session.id } : undefined;
  replace("sessions", toDom(document, sessionList(view.namespaces, selected)));
  replace(
    "session",
    toDom(document, view.session ? sessionPanel(view.session) : noSessionPanel("This session is gone.")),
  );
  replace("documents", toDom(document, documentsPanel(view.documents)));
  replace("works", toDom(document, worksPanel(view.works)));
  document.body.dataset.seq = String(Number(document.body.dataset.seq ?? "0") + 1);
}

function setLive(state: "live" | "offline" | "connecting", text: string): void {
  const live = document.getElementById("live");
  if (!live) return;
  live.dataset.state = state;
  live.textContent = text;
}

/** The namespace the page shows: the session's, else the address's `ns` (none: the credential's own). */
function shownNamespace(): string | undefined {
  return current()?.namespace ?? (new URLSearchParams(location.search).get("ns") || undefined);
}

function listen(): void {
  // A stream carries the changes of one namespace: the one this page shows.
  const namespace = shownNamespace();
  const events = new EventSource(
    namespace === undefined ? "/events" : `/events?${new URLSearchParams({ ns: namespace })}`,
  );
  let running: Promise<void> | undefined;
  let again = false;
  const update = () => {
    if (running) {
      again = true;
      return;
    }
    running = refresh()
      .catch(() => setLive("offline", "update failed; retrying"))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          update();
        }
      });
  };
  events.addEventListener("ready", () => setLive("live", "live"));
  events.addEventListener("change", update);
  events.addEventListener("error", () => setLive("offline", "reconnecting…"));
}

listenTree(document, loadRows, opened);
keepLeasesCurrent(document);
listen();
