/**
 * The official MCP conformance suite against the real HTTP server (a `main.ts` process on a loopback
 * port), in both session and stateless mode. A scenario passes when the suite exits 0 and every
 * check it reports (`--verbose` prints them as JSON) is a SUCCESS.
 */
import assert from "node:assert/strict";
import { runToEnd, spawnServer } from "../support/server_process.ts";

/** The suite, pinned; `deno run` fetches it from npm the first time. */
const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";

/** The protocol scenarios that apply to this server (the others need the suite's fixture tools). */
const SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "logging-set-level",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
] as const;

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

interface Outcome {
  code: number;
  checks: Check[];
  output: string;
}

async function runScenario(url: string, scenario: string): Promise<Outcome> {
  const { code, stdout, stderr } = await runToEnd([
    "run",
    "-A",
    "--no-config",
    "--no-lock",
    CONFORMANCE,
    "server",
    "--url",
    url,
    "--scenario",
    scenario,
    "--verbose",
  ], { env: { NO_COLOR: "1" } });
  // The checks are pretty-printed JSON: from a line "[" to the next line "]".
  const start = stdout.indexOf("\n[");
  const end = start === -1 ? -1 : stdout.indexOf("\n]", start);
  let checks: Check[] = [];
  if (end !== -1) {
    try {
      checks = JSON.parse(stdout.slice(start + 1, end + 2));
    } catch {
      checks = [];
    }
  }
  return { code, checks, output: `${stdout}\n${stderr}` };
}

function assertPassed(scenario: string, outcome: Outcome): void {
  const failed = outcome.checks.filter((c) => c.status !== "SUCCESS" && c.status !== "INFO");
  assert.equal(failed.length, 0, `${scenario}: ${JSON.stringify(failed, null, 2)}\n${outcome.output}`);
  assert.ok(
    outcome.checks.some((c) => c.status === "SUCCESS"),
    `${scenario} reported no check:\n${outcome.output}`,
  );
  assert.equal(outcome.code, 0, `${scenario} exited ${outcome.code}:\n${outcome.output}`);
}

Deno.test("MCP conformance suite (sessions mode)", async (t) => {
  await using server = await spawnServer({ args: ["--http"] });
  await runAll(t, `${server.url}/mcp`, SCENARIOS);
});

Deno.test("MCP conformance suite (stateless mode)", async (t) => {
  await using server = await spawnServer({ env: { STATELESS: "1" }, args: ["--http"] });
  // The multiple-streams scenario needs a session id to start (it stops with a warning without one).
  const applicable = SCENARIOS.filter((s) => s !== "server-sse-multiple-streams");
  await runAll(t, `${server.url}/mcp`, applicable);
});

async function runAll(t: Deno.TestContext, url: string, scenarios: readonly string[]): Promise<void> {
  const outcomes = await Promise.all(scenarios.map((scenario) => runScenario(url, scenario)));
  for (const [i, scenario] of scenarios.entries()) {
    await t.step(scenario, () => assertPassed(scenario, outcomes[i]!));
  }
}

Deno.test("the conformance check fails when the suite reports a failure", () => {
  const failing: Outcome = {
    code: 1,
    checks: [{ id: "localhost-host-rebinding-rejected", status: "FAILURE" }],
    output: "",
  };
  assert.throws(() => assertPassed("dns-rebinding-protection", failing), /FAILURE/);
  assert.throws(() => assertPassed("ping", { code: 0, checks: [], output: "" }), /reported no check/);
  assert.throws(() =>
    assertPassed("ping", { code: 1, checks: [{ id: "x", status: "SUCCESS" }], output: "" })
  );
});

Deno.test("the conformance run catches a real failure: rebinding guard opened by configuration", async () => {
  await using server = await spawnServer({
    env: { ALLOWED_HOSTS: "*", ALLOWED_ORIGINS: "http://evil.example.com" },
    args: ["--http"],
  });
  const outcome = await runScenario(`${server.url}/mcp`, "dns-rebinding-protection");
  assert.notEqual(outcome.code, 0);
  assert.ok(outcome.checks.some((c) => c.status === "FAILURE"), outcome.output);
  assert.throws(() => assertPassed("dns-rebinding-protection", outcome));
});
