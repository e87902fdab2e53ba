/// <reference lib="dom" />
/**
 * The tree's behaviour in a browser, shared by the dashboard and the chat view: a fold button opens
 * a folded task (its rows read through `load`) or folds it again, a "more" row loads the siblings it
 * stands for. Rows come in as view-model rows and go out through the same render and DOM code.
 */
import { toFragment } from "./dom.ts";
import type { Row } from "./model.ts";
import { rowNodes } from "./render.ts";

/** A range of subtasks to read: of `parentId`, or of the roots when it is undefined. */
export interface RowRange {
  parentId: string | undefined;
  offset: number;
  count: number;
}

/** Reads the rows of a range (the dashboard over its JSON routes, the chat view through a tool). */
export type RowLoader = (range: RowRange) => Promise<readonly Row[]>;

/** The rows after `row` that belong to its subtree (deeper than it), up to the next sibling. */
export function subtreeRows(row: HTMLElement): HTMLElement[] {
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

/** Opens or folds the task of a fold button; `opened` keeps the ids the person unfolded. */
export async function toggleRow(
  button: HTMLButtonElement,
  load: RowLoader,
  opened: Set<string>,
): Promise<void> {
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
    const rows = await load({ parentId: id, offset: 0, count: Number(row.dataset.children ?? "0") });
    row.after(toFragment(row.ownerDocument, rowNodes(rows)));
    opened.add(id);
    button.setAttribute("aria-expanded", "true");
    button.setAttribute("aria-label", label.replace(/^Unfold /, "Fold "));
    button.textContent = "▾";
  } finally {
    button.disabled = false;
  }
}

/** Replaces a "more" row with the rows it stands for (and a new "more" row for any left). */
export async function loadMoreRow(button: HTMLButtonElement, load: RowLoader): Promise<void> {
  const row = button.closest("li") as HTMLElement;
  button.disabled = true;
  try {
    const rows = await load({
      parentId: row.dataset.parent || undefined,
      offset: Number(row.dataset.offset ?? "0"),
      count: Number(row.dataset.count ?? "0"),
    });
    row.replaceWith(toFragment(row.ownerDocument, rowNodes(rows)));
  } finally {
    button.disabled = false;
  }
}

/** Handles clicks on fold buttons and "more" rows anywhere in `doc`. */
export function listenTree(doc: Document, load: RowLoader, opened: Set<string>): void {
  doc.addEventListener("click", (event) => {
    const target = (event.target as Element | null)?.closest("button");
    if (!(target instanceof HTMLButtonElement)) return;
    if (target.classList.contains("fold")) void toggleRow(target, load, opened);
    else if (target.classList.contains("load")) void loadMoreRow(target, load);
  });
}
