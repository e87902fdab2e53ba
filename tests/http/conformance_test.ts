/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the real HTTP
 * server (a `main.ts` process on a loopback port), at both protocol eras: every scenario a revision
 * requires (`--requirements 2025-11-25`, with sessions and with `STATELESS=1`, and
 * `--requirements 2026-07-28`), plus `http-header-validation`, which 2026-07-28 asks of every server
 * though the suite does not score it yet. A run passes when the suite exits 0: every failure is in
 * the expected-failures file beside this one (each needs the suite's own diagnostic tools, prompts
 * or resources, and says so), and no entry there has gone stale.
 */
import assert from "node:assert/strict";
import { runToEnd, spawnServer } from "../support/server_process.ts";

/** The suite, pinned; `deno run` fetches it from npm the first time. */
const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";

/** The expected-failures file of a run. */
function baseline(name: string): string {
  return new URL(`./conformance/expected_failures_${name}.yaml`, import.meta.url).pathname;
}

interface Outcome {
  code: number;
  output: string;
}

/** Runs the suite with `args` against `url`. */
async function suite(url: string, args: string[]): Promise<Outcome> {
  const { code, stdout, stderr } = await runToEnd([
    "run",
    "-A",
    "--no-config",
    "--no-lock",
    CONFORMANCE,
    "server",
    "--url",
    url,
    ...args,
  ], { env: { NO_COLOR: "1" } });
  return { code, output: `${stdout}\n${stderr}` };
}

function assertPassed(name: string, outcome: Outcome): void {
  assert.equal(outcome.code, 0, `${name}: the suite exited ${outcome.code}:\n${outcome.output.slice(-6000)}`);
  assert.match(outcome.output, /passed/i, `${name}: the suite ran no scenario:\n${outcome.output}`);
}

Deno.test("the conformance suite: what 2025-11-25 requires, with sessions", async () => {
  await using server = await spawnServer({ args: ["--http"] });
  const outcome = await suite(`${server.url}/mcp`, [
    "--requirements",
    "2025-11-25",
    "--expected-failures",
    baseline("2025-11-25"),
  ]);
  assertPassed("2025-11-25", outcome);
  assert.match(outcome.output, /resources-subscribe: \d+ passed, 0 failed/, "subscriptions are served");
});

Deno.test("the conformance suite: what 2025-11-25 requires, with STATELESS=1", async () => {
  await using server = await spawnServer({ env: { STATELESS: "1" }, args: ["--http"] });
  const outcome = await suite(`${server.url}/mcp`, [
    "--requirements",
    "2025-11-25",
    "--expected-failures",
    baseline("2025-11-25_stateless"),
  ]);
  assertPassed("2025-11-25, stateless", outcome);
});

Deno.test("the conformance suite: what 2026-07-28 requires, and its header validation", async (t) => {
  await using server = await spawnServer({ args: ["--http"] });
  const url = `${server.url}/mcp`;
  const [required, headers] = await Promise.all([
    suite(url, ["--requirements", "2026-07-28", "--expected-failures", baseline("2026-07-28")]),
    suite(url, ["--spec-version", "2026-07-28", "--scenario", "http-header-validation"]),
  ]);
  await t.step("--requirements 2026-07-28", () => {
    assertPassed("2026-07-28", required);
    for (const scenario of ["server-stateless", "caching", "sep-2164-resource-not-found", "tools-list"]) {
      assert.match(required.output, new RegExp(`${scenario}: [1-9]\\d* passed`), `${scenario} ran`);
    }
  });
  await t.step("http-header-validation", () => {
    assertPassed("http-header-validation", headers);
    assert.match(headers.output, /Passed: (\d+)\/\1, 0 failed/);
  });
});

Deno.test("the conformance run catches a real failure: rebinding guard opened by configuration", async () => {
  await using server = await spawnServer({
    env: { ALLOWED_HOSTS: "*", ALLOWED_ORIGINS: "http://evil.example.com" },
    args: ["--http"],
  });
  const outcome = await suite(`${server.url}/mcp`, [
    "--spec-version",
    "2026-07-28",
    "--scenario",
    "dns-rebinding-protection",
  ]);
  assert.notEqual(outcome.code, 0, outcome.output);
  assert.throws(() => assertPassed("dns-rebinding-protection", outcome));
});

Deno.test("a stale expected failure fails the run: a check that passes may not be excused", async () => {
  await using server = await spawnServer({ args: ["--http"] });
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(file, "server:\n  - tools-list\n");
    const outcome = await suite(`${server.url}/mcp`, [
      "--spec-version",
      "2026-07-28",
      "--scenario",
      "tools-list",
      "--expected-failures",
      file,
    ]);
    assert.notEqual(outcome.code, 0, outcome.output);
  } finally {
    await Deno.remove(file);
  }
});
