/// <reference lib="dom" />
/**
 * The browser side of vnode.ts: DOM nodes from element descriptions. Text goes in with
 * `createTextNode` and attributes with `setAttribute`; nothing is ever parsed as markup.
 */
import type { VNode } from "./vnode.ts";

/** A DOM node for `node`, made in `doc`. */
export function toDom(doc: Document, node: VNode): Node {
  if (typeof node === "string") return doc.createTextNode(node);
  const element = doc.createElement(node.tag);
  for (const [name, value] of Object.entries(node.attrs)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of node.children) element.appendChild(toDom(doc, child));
  return element;
}

/** A fragment holding the DOM nodes of `nodes`, in order. */
export function toFragment(doc: Document, nodes: readonly VNode[]): DocumentFragment {
  const fragment = doc.createDocumentFragment();
  for (const node of nodes) fragment.appendChild(toDom(doc, node));
  return fragment;
}
