/**
 * Load per path: what `deno run main.ts --stdio` evaluates at start is the static module graph of
 * `main.ts` plus the modules the stdio path imports (lib/mcp/stdio_serve.ts). Code that only HTTP,
 * access control, the dashboard or the plan view's document use must stay out of it: each costs
 * start-up time in every client that launches the server. Neither path loads the SDK's maintenance
 * line (`@modelcontextprotocol/sdk` 1.x): the protocol is SDK v2's.
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { CONFIG, MAIN, ROOT } from "../support/paths.ts";

interface GraphModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

/**
 * The modules reachable from `roots` through static imports (`import type` excluded), in the graph
 * of `main.ts` (which holds every module it may import dynamically).
 */
async function staticGraph(roots: string[]): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", CONFIG, MAIN],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: GraphModule[] };
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const visit = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      if (dep.code && !dep.isDynamic) visit(dep.code.specifier);
    }
  };
  for (const root of roots) visit(pathToFileURL(root).href);
  return seen;
}

/** The project's own modules in `graph`, as paths from the project root (`/lib/…`). */
function projectModules(graph: Set<string>): string[] {
  const root = pathToFileURL(ROOT).href;
  return [...graph].filter((s) => s.startsWith(root)).map((s) => s.slice(root.length));
}

Deno.test("the stdio path loads no HTTP, listener, access, dashboard or plan-view document code, and of npm only the SDK v2 server, zod and the MCP Apps names", async () => {
  const graph = await staticGraph([MAIN, `${ROOT}/lib/mcp/stdio_serve.ts`]);
  const project = projectModules(graph);
  assert.ok(project.includes("/lib/mcp/server.ts"), `the walk found the server: ${project.join(", ")}`);
  const forbidden = [
    /^\/lib\/http\//,
    /^\/lib\/listener\//,
    /^\/lib\/auth\//,
    /^\/lib\/dashboard\//,
    /^\/lib\/plan_view\/(assets|browser)\//,
    /^\/lib\/plan_view\/server\/plan_page\.ts$/,
  ];
  assert.deepEqual(project.filter((path) => forbidden.some((f) => f.test(path))), []);
  const packages = [...graph].filter((s) => s.startsWith("npm:"));
  assert.ok(packages.some((s) => s.includes("@modelcontextprotocol/server")), "the SDK v2 server is loaded");
  const allowed = [
    /^npm:\/?@modelcontextprotocol\/(server|core)@2\./,
    /^npm:\/?zod@/,
    /^npm:\/?@modelcontextprotocol\/ext-apps@2\.[^/]*\/server/,
  ];
  assert.deepEqual(packages.filter((s) => !allowed.some((a) => a.test(s))), []);
});

Deno.test("the HTTP path loads the SDK v2 server, never the maintenance line", async () => {
  const roots = [
    "lib/http/app.ts",
    "lib/listener/serve.ts",
    "lib/http/guards.ts",
    "lib/http/listener_options.ts",
  ].map((path) => `${ROOT}/${path}`);
  const graph = await staticGraph([MAIN, ...roots]);
  assert.ok([...graph].some((s) => s.endsWith("/lib/mcp/http_endpoint.ts")), "the walk found the endpoint");
  const packages = [...graph].filter((s) => s.startsWith("npm:"));
  assert.ok(packages.some((s) => s.includes("@modelcontextprotocol/server")));
  assert.deepEqual(packages.filter((s) => s.includes("@modelcontextprotocol/sdk")), []);
});

Deno.test("the guard's path (main.ts guard) loads no HTTP, listener, access or dashboard code, and the MCP client only for --url", async () => {
  const graph = await staticGraph([MAIN, `${ROOT}/lib/guard/guard_main.ts`]);
  const project = projectModules(graph);
  assert.ok(
    project.includes("/lib/guard/staged_paths.ts"),
    `the walk found the guard: ${project.join(", ")}`,
  );
  const forbidden = [
    /^\/lib\/http\//,
    /^\/lib\/listener\//,
    /^\/lib\/auth\//,
    /^\/lib\/dashboard\//,
    /^\/lib\/guard\/remote_check\.ts$/,
  ];
  assert.deepEqual(project.filter((path) => forbidden.some((f) => f.test(path))), []);
  assert.deepEqual([...graph].filter((s) => s.includes("@modelcontextprotocol/client")), []);
});

Deno.test("deno task guard, what a hook runs at every commit, starts the guard's own module: none of the server's modules nor the SDK's server load", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(CONFIG)) as { tasks: Record<string, string> };
  const entry = tasks.guard!.split(/\s+/).find((word) => word.endsWith(".ts"));
  assert.equal(entry, "lib/guard/guard_main.ts");
  const graph = await staticGraph([`${ROOT}/${entry}`]);
  const project = projectModules(graph);
  assert.ok(
    project.includes("/lib/guard/staged_paths.ts"),
    `the walk found the guard: ${project.join(", ")}`,
  );
  const forbidden = [
    /^\/main\.ts$/,
    /^\/lib\/mcp\//,
    /^\/lib\/plan_view\//,
    /^\/lib\/render\//,
    /^\/lib\/http\//,
  ];
  assert.deepEqual(project.filter((path) => forbidden.some((f) => f.test(path))), []);
  assert.deepEqual([...graph].filter((s) => s.includes("@modelcontextprotocol/")), []);
});
