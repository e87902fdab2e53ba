/**
 * The MCP Inspector's command line (`@modelcontextprotocol/inspector` 2.12.0, a client nobody here
 * wrote) still connects, over HTTP and over stdio, lists the tools and calls one.
 */
import assert from "node:assert/strict";
import { MAIN } from "../support/paths.ts";
import { runToEnd, spawnServer } from "../support/server_process.ts";

const INSPECTOR = "npm:@modelcontextprotocol/inspector@2.12.0";

/** Runs the Inspector's CLI with `args`; its JSON answer. */
async function inspect(args: string[]): Promise<Record<string, unknown>> {
  const { code, stdout, stderr } = await runToEnd([
    "run",
    "-A",
    "--no-config",
    "--no-lock",
    INSPECTOR,
    "--cli",
    ...args,
  ], {
    env: { LOG_LEVEL: "error" },
  });
  assert.equal(code, 0, `the Inspector exited ${code}:\n${stdout}\n${stderr}`);
  return JSON.parse(stdout.slice(stdout.indexOf("{")));
}

Deno.test("the Inspector lists the tools and calls one over HTTP", async () => {
  await using server = await spawnServer({ env: { LOG_LEVEL: "error" } });
  const url = `${server.url}/mcp`;
  const listed = await inspect([url, "--method", "tools/list"]) as { tools: { name: string }[] };
  assert.ok(listed.tools.some((t) => t.name === "createTask"));
  const called = await inspect([
    url,
    "--method",
    "tools/call",
    "--tool-name",
    "createTask",
    "--tool-arg",
    "name=From the Inspector",
  ]);
  assert.notEqual(called.isError, true, JSON.stringify(called));
  assert.match(JSON.stringify(called.structuredContent), /From the Inspector/);
});

Deno.test("the Inspector lists the tools over stdio", async () => {
  // From the project root, where Deno finds deno.json (the Inspector would take `--config` for its own).
  const listed = await inspect([Deno.execPath(), "run", "-A", MAIN, "--stdio", "--method", "tools/list"]) as {
    tools: { name: string }[];
  };
  assert.ok(listed.tools.some((t) => t.name === "claimTask"));
});
