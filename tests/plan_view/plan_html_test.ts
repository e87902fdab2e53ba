import assert from "node:assert/strict";
import { PLAN_HTML } from "../../lib/plan_view/assets/plan_html.ts";
import { buildPlanHtml, moduleText, OUTPUT } from "../../scripts/build_app.ts";

Deno.test("the plan view shipped in lib/plan_view/assets/plan_html.ts is the build of lib/plan_view (run deno task build:app)", async () => {
  const fresh = await buildPlanHtml();
  assert.equal(await Deno.readTextFile(OUTPUT), moduleText(fresh), "stale: run deno task build:app");
  assert.equal(PLAN_HTML, fresh);
});

Deno.test("the plan view is one self-contained document: inline script and styles, nothing loaded, no markup from data", () => {
  const open = '<script type="module">';
  const at = PLAN_HTML.indexOf(open);
  const end = PLAN_HTML.lastIndexOf("</script>");
  const script = PLAN_HTML.slice(at + open.length, end);
  const shell = PLAN_HTML.slice(0, at) + PLAN_HTML.slice(end);
  assert.ok(at > 0 && end > at);
  assert.doesNotMatch(script, /<\/script/i, "the script cannot end its element early");
  assert.equal(shell.match(/<script\b/g), null, "one script only");
  assert.equal(shell.match(/<style>/g)?.length, 1);
  assert.doesNotMatch(shell, /\ssrc=|\shref=|<link\b|<img\b|<iframe\b|@import|url\(/i);
  // The view sets agent text as text only (the bundled libraries included).
  assert.doesNotMatch(
    script,
    /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment/,
  );
});
