/**
 * The dashboard page: an HTML document rendered on the server from the view model (lib/render), with
 * its script and styles loaded from the server's own routes. Every text in it went through the
 * view's escaping; the page has no inline script, style or handler.
 */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { PageView } from "../../render/model.ts";
import {
  documentsPanel,
  noSessionPanel,
  sessionList,
  sessionPanel,
  worksPanel,
} from "../../render/render.ts";
import { toHtml } from "../../render/vnode.ts";

/** Where the page's assets are served, with a version so a new server never meets a cached old one. */
export interface AssetPaths {
  script: string;
  styles: string;
  icon: string;
}

/** The whole page for `view`. */
export function renderPage(
  view: PageView,
  assets: AssetPaths,
  notice?: string,
): HtmlEscapedString | Promise<HtmlEscapedString> {
  const selected = view.session ? { namespace: view.session.namespace, id: view.session.id } : undefined;
  const main = view.session
    ? sessionPanel(view.session)
    : noSessionPanel(notice ?? "No sessions yet: tasks an agent creates show here.");
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>checklist-mcp</title>
        <link rel="icon" href="${assets.icon}" type="image/svg+xml">
        <link rel="stylesheet" href="${assets.styles}">
        <script src="${assets.script}" defer></script>
      </head>
      <body>
        <header class="top">
          <h1>checklist-mcp</h1>
          <span id="live" class="live" data-state="connecting" role="status">connecting…</span>
        </header>
        <div class="layout">
          <aside class="left">${raw(toHtml(sessionList(view.namespaces, selected)))}</aside>
          <main>${raw(toHtml(main))}</main>
          <aside class="right">${raw(toHtml(documentsPanel(view.documents)))}${raw(
            toHtml(worksPanel(view.works)),
          )}</aside>
        </div>
      </body>
    </html>
  `;
}
