/**
 * JSON-RPC error codes have one home each: the codes JSON-RPC 2.0 defines are the SDK's
 * `ProtocolErrorCode`, and the two it lacks are lib/mcp/rpc_errors.ts's.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import * as ours from "../../lib/mcp/rpc_errors.ts";
import { ProtocolErrorCode } from "../../lib/mcp/sdk.ts";
import { CONFIG, ROOT } from "../support/paths.ts";

const HOME = "lib/mcp/rpc_errors.ts";
/** A JSON-RPC error code written as a number: -32768 … -32000. */
const LITERAL_CODE = /-32[0-7]\d\d\b/;

/** Generated bundles (the files `deno fmt` skips) hold third-party code; they are not ours to name. */
async function generated(): Promise<Set<string>> {
  const config = JSON.parse(await Deno.readTextFile(CONFIG)) as { fmt?: { exclude?: string[] } };
  return new Set(config.fmt?.exclude ?? []);
}

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (/\.(ts|js)$/.test(entry.name)) yield path;
  }
}

Deno.test("no file under lib/ nor main.ts writes a JSON-RPC error code as a number outside lib/mcp/rpc_errors.ts", async () => {
  const skip = await generated();
  const found: string[] = [];
  const files = [join(ROOT, "main.ts")];
  for await (const path of sources(join(ROOT, "lib"))) files.push(path);
  for (const path of files) {
    const name = relative(ROOT, path);
    if (name === HOME || skip.has(name)) continue;
    const lines = (await Deno.readTextFile(path)).split("\n");
    lines.forEach((line, i) => {
      if (LITERAL_CODE.test(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], `use the SDK's ProtocolErrorCode or the named codes of ${HOME}`);
  assert.match(await Deno.readTextFile(join(ROOT, HOME)), LITERAL_CODE, "the home itself holds the codes");
});

Deno.test("lib/mcp/rpc_errors.ts names only codes the SDK's ProtocolErrorCode lacks", () => {
  const sdk = new Set(Object.values(ProtocolErrorCode).filter((v) => typeof v === "number"));
  assert.ok(sdk.has(-32700) && sdk.has(-32603), "the SDK names the codes of JSON-RPC 2.0");
  const codes = Object.entries(ours).filter(([, value]) => typeof value === "number");
  assert.deepEqual(codes.map(([name]) => name).sort(), ["SERVER_ERROR", "SESSION_NOT_FOUND"]);
  assert.deepEqual(codes.filter(([, value]) => sdk.has(value as number)), []);
});
