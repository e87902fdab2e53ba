/**
 * The house's layout: a file's base name under lib/ says which file it is (issue 20, "one meaning per
 * name"), no import runs in a circle, and no module imports from a layer above its own (issue 36; the
 * layers are docs/development.md's "The layout").
 */
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

/**
 * The files under lib/ that `path` imports (static imports and re-exports, type-only ones included;
 * with `dynamic`, `import("…")` too).
 */
async function libImports(path: string, dynamic = false): Promise<string[]> {
  const text = await Deno.readTextFile(`${ROOT}/${path}`);
  const found: string[] = [];
  const patterns = [/^(?:import|export)\b[^;]*?\bfrom\s*"(\.{1,2}\/[^"]+)"/gms];
  if (dynamic) patterns.push(/\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g);
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const target = normalize(join(dirname(path), match[1]!));
      if (target.startsWith("lib/")) found.push(target);
    }
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

/**
 * The layers, bottom first: a module imports only from its own room and from rooms of a lower layer.
 * A room is a folder under lib/ (lib/store/kv/ is the store's), a file directly under lib/ (log,
 * config, process_exits), or main.ts.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["domain", "log"], // pure rules; the structured log
  ["config", "process_exits"], // settings and their defaults; how a process ends
  ["render", "store", "auth", "git", "listener"], // views, storage, access, git, the HTTP/1.1 listener
  ["mcp"], // ours on top of the SDK: tools, resources, the server, stdio and the HTTP endpoint
  ["dashboard", "plan_view", "guard"], // the surfaces and features built on the layers below
  ["http"], // the app that mounts the surfaces
  ["main.ts"], // the entry
];

/** Rooms that may lean on less than every lower layer: only on these rooms (and on themselves). */
const LEANS_ONLY_ON: Readonly<Record<string, readonly string[]>> = {
  domain: [], // pure: no SDK, Hono or Deno, and none of ours outside it
  log: [],
  render: ["domain"], // the browser bundles embed it
  listener: ["log"], // a component of its own: it knows nothing of MCP or of the app
};

/** The room of a path relative to the project root. */
function roomOf(path: string): string {
  if (path === "main.ts") return path;
  const parts = path.split("/");
  return parts.length === 2 ? parts[1]!.replace(/\.ts$/, "") : parts[1]!;
}

/** Why `from` may not import `to`, or undefined when it may. */
function upward(from: string, to: string): string | undefined {
  const [a, b] = [roomOf(from), roomOf(to)];
  if (a === b) return undefined;
  const layer = (room: string) => LAYERS.findIndex((rooms) => rooms.includes(room));
  if (layer(a) === -1) return `${a} is in no layer`;
  if (layer(b) === -1) return `${b} is in no layer`;
  const only = LEANS_ONLY_ON[a];
  if (only && !only.includes(b)) return `${a} leans only on ${only.join(", ") || "itself"}`;
  if (layer(b) >= layer(a)) return `${b} is not below ${a}`;
  return undefined;
}

Deno.test("no module imports from its own layer's other rooms or a layer above (LAYERS), and the listener leans only on the log", async () => {
  const files = [...await tsFiles("lib"), "main.ts"];
  const found: string[] = [];
  for (const path of files) {
    for (const target of await libImports(path, true)) {
      const why = upward(path, target);
      if (why) found.push(`${path} -> ${target}: ${why}`);
    }
  }
  assert.ok(files.length > 100, `the walk found lib/: ${files.length} files`);
  assert.deepEqual(found, []);
  assert.ok(
    upward("lib/mcp/server.ts", "lib/plan_view/server/plan_feature.ts"),
    "the rule refuses an upward import",
  );
  assert.ok(upward("lib/listener/serve.ts", "lib/config.ts"), "the listener leans on the log alone");
  assert.equal(upward("lib/http/app.ts", "lib/mcp/sdk.ts"), undefined);
});

Deno.test("only lib/plan_view imports @modelcontextprotocol/ext-apps: the MCP layer takes the plan view as a feature", async () => {
  const importers: string[] = [];
  for (const path of [...await tsFiles("lib"), "main.ts"]) {
    const text = await Deno.readTextFile(`${ROOT}/${path}`);
    if (/^(?:import|export)\b[^;]*?\bfrom\s*"@modelcontextprotocol\/ext-apps/m.test(text)) {
      importers.push(path);
    }
  }
  assert.ok(importers.length > 0, "the walk found the plan view's import");
  assert.deepEqual(importers.filter((path) => !path.startsWith("lib/plan_view/")), []);
});
