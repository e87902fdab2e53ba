/** The house's layout: a file's base name under lib/ says which file it is (issue 20, "one meaning per name"). */
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { ROOT } from "./support/paths.ts";

/** Every `.ts` file under `dir`, as paths relative to the project root. */
async function tsFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}/${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await tsFiles(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) found.push(path);
  }
  return found;
}

Deno.test("no two files under lib/ share a base name (mod.ts aside)", async () => {
  const byName = new Map<string, string[]>();
  for (const path of await tsFiles("lib")) {
    const name = path.slice(path.lastIndexOf("/") + 1);
    if (name === "mod.ts") continue;
    byName.set(name, [...byName.get(name) ?? [], path]);
  }
  assert.ok(byName.size > 50, `the walk found lib/: ${byName.size} names`);
  const shared = [...byName.values()].filter((paths) => paths.length > 1).map((paths) =>
    paths.sort().join(" ")
  );
  assert.deepEqual(shared, []);
});

/** The files under lib/ that `path` imports (static imports and re-exports, type-only ones included). */
async function libImports(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(`${ROOT}/${path}`);
  const found: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*"(\.{1,2}\/[^"]+)"/gms)) {
    const target = normalize(join(dirname(path), match[1]!));
    if (target.startsWith("lib/")) found.push(target);
  }
  return found;
}

Deno.test("no import circle under lib/: each file's imports lead away from it", async () => {
  const graph = new Map<string, string[]>();
  for (const path of await tsFiles("lib")) graph.set(path, await libImports(path));
  assert.ok(graph.get("lib/store/store.ts")!.length > 0, "the walk read the imports");
  const circles: string[] = [];
  const done = new Set<string>();
  const visit = (path: string, trail: string[]) => {
    const at = trail.indexOf(path);
    if (at >= 0) return void circles.push([...trail.slice(at), path].join(" -> "));
    if (done.has(path)) return;
    for (const next of graph.get(path) ?? []) visit(next, [...trail, path]);
    done.add(path);
  };
  for (const path of graph.keys()) visit(path, []);
  assert.deepEqual(circles, []);
});
