/** JSON-RPC error codes have one home: lib/mcp/rpc_errors.ts. */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
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

Deno.test("no file under lib/ nor main.ts writes a JSON-RPC error code outside lib/mcp/rpc_errors.ts", async () => {
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
  assert.deepEqual(found, [], `use the named codes of ${HOME}`);
  assert.match(await Deno.readTextFile(join(ROOT, HOME)), LITERAL_CODE, "the home itself holds the codes");
});
