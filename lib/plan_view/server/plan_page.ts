/**
 * The plan view's HTML document: the shared view styles and the bundled script, both inline, so the
 * document needs nothing from any host (its CSP names no domain). Built by `deno task build:app`.
 */
import { VIEW_CSS } from "../../render/shared_css.ts";

/** What the chat view adds to the shared styles: a narrow column, no page chrome. */
export const APP_CSS = `
body { padding: .5rem .75rem .75rem; max-width: 52rem; }
#session h2 { margin-bottom: .3rem; }
.changed { font-size: .8rem; color: var(--muted); margin: .3rem 0; }
.focus { margin: .6rem 0; }
h3 { margin-top: .7rem; }
`;

/** `script` made safe inside an inline `<script>` element. */
function inlineScript(script: string): string {
  return script.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");
}

/** The whole document around the bundled `script`. */
export function planDocument(script: string): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>Plan</title>",
    `<style>${VIEW_CSS}${APP_CSS}</style>`,
    "</head>",
    "<body>",
    '<main id="plan" aria-live="polite"><p class="empty">Waiting for the task tool’s result…</p></main>',
    `<script type="module">${inlineScript(script)}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
