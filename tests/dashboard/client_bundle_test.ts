import assert from "node:assert/strict";
import { DASHBOARD_JS } from "../../lib/dashboard/assets/dashboard_js.ts";
import { bundleClient, moduleText, OUTPUT } from "../../scripts/build_web.ts";

Deno.test("the dashboard script shipped in lib/dashboard/assets/dashboard_js.ts is the bundle of lib/dashboard/browser (run deno task build:web)", async () => {
  const fresh = await bundleClient();
  assert.equal(await Deno.readTextFile(OUTPUT), moduleText(fresh), "stale: run deno task build:web");
  assert.equal(DASHBOARD_JS, fresh);
});

Deno.test("the dashboard script never parses markup nor loads code from anywhere", () => {
  assert.doesNotMatch(
    DASHBOARD_JS,
    /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/,
  );
  assert.doesNotMatch(DASHBOARD_JS, /https?:\/\//);
});
