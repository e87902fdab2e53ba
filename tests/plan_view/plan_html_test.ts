import assert from "node:assert/strict";
import { PLAN_HTML } from "../../lib/plan_view/assets/plan_html.ts";
import { buildPlanHtml, moduleText, namespaceZodImports, OUTPUT } from "../../scripts/build_app.ts";

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

Deno.test("the plan view's document stays within 400 KB (issue 35): zod is bundled tree-shaken, not whole", () => {
  const bytes = new TextEncoder().encode(PLAN_HTML).length;
  assert.ok(bytes <= 400 * 1024, `the plan view is ${bytes} bytes`);
  // zod's locales ride along only when its namespace is bundled whole.
  assert.doesNotMatch(PLAN_HTML, /Nieprawid(?:ł|\\u0142)owe/);
});

Deno.test("namespaceZodImports makes each named import of zod's z a namespace import of the same path", () => {
  const code = [
    'import { z } from "zod";',
    'import { z as z2 } from "zod/v4";',
    'import * as z3 from "zod/v4";',
    'import { App } from "./app.js";',
  ].join("\n");
  assert.equal(
    namespaceZodImports(code),
    [
      'import * as z from "zod";',
      'import * as z2 from "zod/v4";',
      'import * as z3 from "zod/v4";',
      'import { App } from "./app.js";',
    ].join("\n"),
  );
  assert.throws(() => namespaceZodImports('import { z, ZodError } from "zod/v4";'), /does not know/);
  assert.throws(() => namespaceZodImports('import zod from "zod";'), /does not know/);
});
