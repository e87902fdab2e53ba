/**
 * Single-file packaging: the `bundle` task's command, pointed at a temporary directory, builds one
 * `.mjs` that runs under `deno run --no-config` (no deno.json, no import map) and serves a real
 * client over stdio (the plan view among its resources), and the dashboard over HTTP.
 */
import assert from "node:assert/strict";
import { PLAN_HTML } from "../../lib/plan_view/assets/plan_html.ts";
import { DASHBOARD_JS } from "../../lib/dashboard/assets/dashboard_js.ts";
import { serverEnv } from "../support/env.ts";
import { call } from "../support/harness.ts";
import { CONFIG, ROOT } from "../support/paths.ts";
import { freePort, terminate, waitForHealth } from "../support/processes.ts";
import { Client, StdioClientTransport } from "../support/sdk_client.ts";

/** The `bundle` task's arguments, with the output moved to `output`. */
async function bundleArgs(output: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(CONFIG));
  const task: string = config.tasks.bundle;
  assert.match(task, /^deno bundle --platform deno -o dist\/checklist-mcp\.mjs main\.ts$/);
  return task.split(" ").slice(1).map((arg) => (arg === "dist/checklist-mcp.mjs" ? output : arg));
}

Deno.test("deno task bundle builds one file that serves stdio under deno run --no-config", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-bundle-" });
  try {
    const output = `${dir}/checklist-mcp.mjs`;
    const built = await new Deno.Command(Deno.execPath(), {
      args: await bundleArgs(output),
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
    const source = await Deno.readTextFile(output);
    const leftover =
      /^import\s[^\n]*from\s+["'](?:\.\.?\/|hono|zod|@modelcontextprotocol)|\bimport\(["']\.\.?\//m;
    assert.doesNotMatch(source, leftover, "imports left unbundled");
    // A Node built-in imported statically is loaded at every start: the stdio path needs no listener.
    assert.doesNotMatch(source, /^import\s[^\n]*from\s+["']node:http["']/m, "node:http loaded at start");

    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: ["run", "--no-config", "-A", output, "--stdio"],
      env: serverEnv({ LOG_LEVEL: "warn" }),
      cwd: dir, // far from the project: nothing but the bundle
      stderr: "ignore",
    });
    const client = new Client({ name: "bundle-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      assert.equal(client.getServerVersion()?.name, "checklist-mcp");
      const created = await call(client, "createTask", { name: "from the bundle" });
      assert.ok(!created.isError);
      const missing = await call(client, "getTask", { id: "nope" });
      assert.equal(missing.isError, true);
      // The plan view ships inside the bundle too.
      const view = await client.readResource({ uri: "ui://checklist/plan.html" });
      assert.equal((view.contents[0] as { text: string }).text, PLAN_HTML);
    } finally {
      await client.close();
    }

    // The dashboard ships inside the bundle: its page and script are served with nothing else around.
    const port = freePort();
    const server = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-config", "-A", output, "--http"],
      env: serverEnv({ LOG_LEVEL: "warn", PORT: String(port), HOST: "127.0.0.1" }),
      clearEnv: true,
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitForHealth(url, server);
      const page = await (await fetch(`${url}/`)).text();
      const script = page.match(/<script src="(\/assets\/[^"]+)"/)?.[1];
      assert.ok(script, "the page names its script");
      const served = await fetch(`${url}${script}`);
      assert.equal(served.status, 200);
      assert.equal(await served.text(), DASHBOARD_JS);
    } finally {
      await terminate(server);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
