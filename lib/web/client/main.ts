/// <reference lib="dom" />
/**
 * The dashboard's script (bundled into lib/web/assets/client_js.ts by `deno task build:web`).
 *
 * The page arrives rendered; this script opens and folds parts of the tree (reading them through the
 * JSON routes) and keeps the page live: on each `change` event it reads the view again and renders it
 * with the same element descriptions the server used (lib/view/render.ts), as DOM nodes. Agent text is
 * only ever set as text. It reads; it changes nothing.
 */
import { toDom, toFragment } from "../../view/dom.ts";
import type { ChildrenView, PageView } from "../../view/model.ts";
import {
  documentsPanel,
  noSessionPanel,
  rowNodes,
  sessionList,
  sessionPanel,
  worksPanel,
} from "../../view/render.ts";

/** Ids the person unfolded (kept unfolded across live updates). */
const opened = new Set<string>();

function current(): { namespace: string; session: string } | undefined {
  const panel = document.getElementById("session");
  const session = panel?.dataset.session;
  return session === undefined ? undefined : { namespace: panel!.dataset.namespace ?? "default", session };
}

async function readJson<T>(path: string, params: URLSearchParams): Promise<T> {
  const response = await fetch(`${path}?${params}`, {
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return await response.json() as T;
}

/** The rows after `row` that belong to its subtree (deeper than it), up to the next sibling. */
function subtreeRows(row: HTMLElement): HTMLElement[] {
  const depth = Number(row.dataset.depth);
  const out: HTMLElement[] = [];
  for (
    let next = row.nextElementSibling as HTMLElement | null;
    next;
    next = next.nextElementSibling as HTMLElement | null
  ) {
    if (Number(next.dataset.depth) <= depth) break;
    out.push(next);
  }
  return out;
}

async function loadRows(params: Record<string, string>): Promise<DocumentFragment> {
  const at = current();
  if (!at) return document.createDocumentFragment();
  const query = new URLSearchParams({ ns: at.namespace, session: at.session, ...params });
  const view = await readJson<ChildrenView>("/api/children", query);
  return toFragment(document, rowNodes(view.rows));
}

async function toggle(button: HTMLButtonElement): Promise<void> {
  const row = button.closest("li") as HTMLElement;
  const id = row.dataset.id!;
  const label = button.getAttribute("aria-label") ?? "";
  if (button.getAttribute("aria-expanded") === "true") {
    for (const child of subtreeRows(row)) child.remove();
    opened.delete(id);
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-label", label.replace(/^Fold /, "Unfold "));
    button.textContent = "▸";
    return;
  }
  button.disabled = true;
  try {
    const rows = await loadRows({ parent: id, offset: "0", count: row.dataset.children ?? "0" });
    row.after(rows);
    opened.add(id);
    button.setAttribute("aria-expanded", "true");
    button.setAttribute("aria-label", label.replace(/^Unfold /, "Fold "));
    button.textContent = "▾";
  } finally {
    button.disabled = false;
  }
}

async function loadMore(button: HTMLButtonElement): Promise<void> {
  const row = button.closest("li") as HTMLElement;
  button.disabled = true;
  try {
    const rows = await loadRows({
      parent: row.dataset.parent ?? "",
      offset: row.dataset.offset ?? "0",
      count: row.dataset.count ?? "0",
    });
    row.replaceWith(rows);
  } finally {
    button.disabled = false;
  }
}

function replace(id: string, node: Node): void {
  document.getElementById(id)?.replaceWith(node);
}

/** Reads the page's data again and renders it in place. */
async function refresh(): Promise<void> {
  const at = current();
  const params = new URLSearchParams();
  if (at) {
    if (at.namespace !== "default") params.set("ns", at.namespace);
    params.set("session", at.session);
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

function listen(): void {
  const events = new EventSource("/events");
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

document.addEventListener("click", (event) => {
  const target = (event.target as Element | null)?.closest("button");
  if (!(target instanceof HTMLButtonElement)) return;
  if (target.classList.contains("fold")) void toggle(target);
  else if (target.classList.contains("load")) void loadMore(target);
});

listen();
