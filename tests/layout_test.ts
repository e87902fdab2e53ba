/** The house's layout: a file's base name under lib/ says which file it is (issue 20, "one meaning per name"). */
import assert from "node:assert/strict";
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
