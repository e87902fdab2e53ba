/**
 * The release smoke test (scripts/release/smoke.ts, `deno task smoke`) passes against a real server
 * over stdio and fails, with exit code 1 and a reason, against anything else: the release workflow
 * relies on it to stop a broken binary. (The bundle case is in mcpb_test.ts.)
 */
import assert from "node:assert/strict";
import { CONFIG, MAIN } from "../support/paths.ts";
import { projectVersion } from "../../scripts/release/settings.ts";
import { runTask } from "../support/tasks.ts";

const serve = [Deno.execPath(), "run", "-A", "--config", CONFIG, MAIN, "--stdio"];

Deno.test("deno task smoke passes against deno run main.ts --stdio", async () => {
  const version = await projectVersion();
  const run = await runTask("smoke", ["--expect-version", version, "--", ...serve], { LOG_LEVEL: "warn" });
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    new RegExp(
      `^smoke ok: checklist-mcp ${
        version.replaceAll(".", "\\.")
      }, \\d+ tools, created and read task \\S+\\n$`,
    ),
  );
});

Deno.test("deno task smoke fails when the server is not what was built", async (t) => {
  await t.step("a process that is not an MCP server", async () => {
    const run = await runTask("smoke", ["--", Deno.execPath(), "eval", "console.log('hello')"]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /smoke failed: /);
  });
  await t.step("a server reporting another version", async () => {
    const run = await runTask("smoke", ["--expect-version", "0.0.0-other", "--", ...serve], {
      LOG_LEVEL: "warn",
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /smoke failed: initialize: version .* expected 0\.0\.0-other/);
  });
  await t.step("a server without the task tools", async () => {
    const run = await runTask("smoke", ["--", ...serve], { LOG_LEVEL: "warn", CHECKLIST_TOOLS: "checklist" });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /smoke failed: tools\/list: createTask or getTask missing/);
  });
  await t.step("no command", async () => {
    const run = await runTask("smoke", []);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /usage: deno task smoke/);
  });
});
