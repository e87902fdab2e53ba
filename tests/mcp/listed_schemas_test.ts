import assert from "node:assert/strict";
import { LISTED_SCHEMAS } from "../../lib/mcp/listed_schemas.ts";
import { ALL_TOOLS } from "../../lib/mcp/server.ts";
import { listedSchemas } from "../../lib/mcp/tool.ts";
import { listingModule, OUTPUT } from "../../scripts/build_listing.ts";

Deno.test("lib/mcp/listed_schemas.ts holds every tool's listed schemas as its zod schemas give them now (run deno task build:listing)", async () => {
  assert.deepEqual(
    Object.keys(LISTED_SCHEMAS),
    ALL_TOOLS.map((def) => def.name),
    "stale: run deno task build:listing",
  );
  for (const def of ALL_TOOLS) {
    assert.deepEqual(
      LISTED_SCHEMAS[def.name],
      listedSchemas(def),
      `stale for ${def.name}: run deno task build:listing`,
    );
  }
  assert.equal(await Deno.readTextFile(OUTPUT), listingModule(), "stale: run deno task build:listing");
});
