/**
 * bench/request_profile.ts charges a CPU profile's samples to who asked for the work: what its figures
 * in BENCHMARKS.md rest on.
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { chargeByOwner, ownerOf } from "../../bench/request_profile.ts";
import { ROOT } from "../support/paths.ts";

const npm = (path: string) => `file:///root/.cache/deno/npm/registry.npmjs.org/${path}`;
const ours = (path: string) => pathToFileURL(`${ROOT}/${path}`).href;

Deno.test("ownerOf: our rooms, the SDK, packages; zod, the runtime and builtins have none", () => {
  assert.equal(ownerOf(ours("lib/http/body.ts")), "checklist-mcp lib/http");
  assert.equal(ownerOf(ours("main.ts")), "checklist-mcp main.ts");
  assert.equal(ownerOf(ours("bench/floor_server.ts")), "the floor's own code");
  assert.equal(ownerOf(ours("bench/request_profile.ts")), "the client loop (this bench)");
  assert.equal(
    ownerOf(npm("@modelcontextprotocol/server/2.4.0/dist/index.mjs")),
    "MCP SDK (and the zod it runs)",
  );
  assert.equal(ownerOf(npm("hono/4.13.19/dist/hono-base.js")), "hono");
  assert.equal(ownerOf(npm("zod/4.1.0/v4/core/schemas.js")), undefined);
  assert.equal(ownerOf("ext:deno_fetch/20_headers.js"), undefined);
  assert.equal(ownerOf("node:process"), undefined);
  assert.equal(ownerOf(""), undefined);
});

Deno.test("chargeByOwner: a sample goes to its first owned frame up the stack, between the markers only", () => {
  const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
    id,
    callFrame: { functionName, url },
    children,
  });
  const nodes = [
    frame(1, "(root)", "", [2, 3, 4, 5, 6, 9]),
    frame(2, "markTimedRequestsBegin", ours("bench/request_profile.ts")),
    frame(3, "markTimedRequestsEnd", ours("bench/request_profile.ts")),
    frame(4, "(garbage collector)", ""),
    frame(5, "(idle)", ""),
    // The SDK runs zod, which reads a Headers object: all the SDK's.
    frame(6, "handlePostRequest", npm("@modelcontextprotocol/server/2.4.0/dist/index.mjs"), [7]),
    frame(7, "safeParse", npm("zod/4.1.0/v4/core/parse.js"), [8]),
    frame(8, "get", "ext:deno_fetch/20_headers.js"),
    // Our body reader calls into Deno's streams: ours.
    frame(9, "readJsonRpcBody", ours("lib/http/body.ts"), [10]),
    frame(10, "read", "ext:deno_web/06_streams.js"),
  ];
  // Each sample's time is the delta to the next one (in µs): 1 ms apiece here.
  const samples = [9, 2, 2, 8, 8, 10, 4, 5, 7, 3, 10];
  const profile = { nodes, samples, timeDeltas: samples.map(() => 1000) };
  const charges = Object.fromEntries(chargeByOwner(profile));
  assert.deepEqual(charges, {
    "MCP SDK (and the zod it runs)": 3,
    "checklist-mcp lib/http": 1,
    "garbage collection": 1,
  });
  // Without the markers there is no window to charge: an error, not figures of the whole process.
  assert.throws(
    () => chargeByOwner({ nodes, samples: [9, 8], timeDeltas: [1000, 1000] }),
    /markers/,
  );
});
