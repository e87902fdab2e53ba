/**
 * A tiny element description that the views are written in once and then turned into HTML text on
 * the server ({@link toHtml}) or into DOM nodes in a browser (dom.ts).
 *
 * Text is always text: {@link toHtml} escapes it, the DOM side sets it with `textContent`. There is no
 * way to put raw markup in a node, and attribute names are fixed by the code, never taken from data.
 */
import { escapeHtml } from "./text.ts";

/** An element: tag, attributes (false/undefined ones are left out) and children. */
export interface VElement {
  tag: string;
  attrs: Readonly<Record<string, string | number | boolean | undefined>>;
  children: readonly VNode[];
}

/** An element or a text. */
export type VNode = VElement | string;

/** Builds an element; children that are `null`, `undefined` or `false` are dropped, arrays flattened. */
export function h(
  tag: string,
  attrs: VElement["attrs"] = {},
  ...children: (VNode | readonly VNode[] | null | undefined | false)[]
): VElement {
  const flat: VNode[] = [];
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) flat.push(...child);
    else flat.push(child as VNode);
  }
  return { tag, attrs, children: flat };
}

const VOID = new Set(["br", "hr", "img", "input", "meta", "link"]);

/** HTML text of `node`: tags as written, every text and attribute value escaped. */
export function toHtml(node: VNode): string {
  if (typeof node === "string") return escapeHtml(node);
  let out = `<${node.tag}`;
  for (const [name, value] of Object.entries(node.attrs)) {
    if (value === undefined || value === false) continue;
    out += value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`;
  }
  out += ">";
  if (VOID.has(node.tag)) return out;
  for (const child of node.children) out += toHtml(child);
  return `${out}</${node.tag}>`;
}
