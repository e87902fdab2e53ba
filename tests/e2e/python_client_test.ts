/**
 * The official Python SDK (`mcp` 2.3.0) pinned to 2026-07-28 connects over stdio and HTTP and gets
 * the same tools and replies as every other client (tests/e2e/python/pinned_client.py). The SDK is
 * installed from the machine's Python package index on first use, into a virtual environment in the
 * user's cache that every checkout shares (as Deno's own cache is shared), so a fresh clone does not
 * install it again; where Python or that index is missing, the test says so and is ignored.
 */
import assert from "node:assert/strict";
import { MAIN, ROOT } from "../support/paths.ts";
import { spawnServer } from "../support/server_process.ts";
import { serverEnv } from "../support/env.ts";

/** The SDK version the client is pinned to; the environment's name carries it, so a new pin makes a new one. */
const SDK = "mcp==2.3.0";
const VENV = `${userCache()}/checklist-mcp/python-${SDK.replace("==", "-")}`;
const PYTHON = `${VENV}/bin/python`;
const SCRIPT = new URL("./python/pinned_client.py", import.meta.url).pathname;

/** The user's cache directory (`XDG_CACHE_HOME`, else `~/.cache`); the checkout's `.ci/` without a home. */
function userCache(): string {
  const home = Deno.env.get("HOME");
  return Deno.env.get("XDG_CACHE_HOME") ?? (home ? `${home}/.cache` : `${ROOT}/.ci`);
}

/**
 * The venv's Python with the pinned SDK, made if needed; undefined (and why) when it cannot be. It is
 * made beside its place and renamed into it when complete, so test runs of two checkouts at once never
 * use a half-made one.
 */
function python(): { path?: string; why?: string } {
  const run = (command: string, args: string[]) => {
    try {
      const out = new Deno.Command(command, { args, stdout: "null", stderr: "piped" }).outputSync();
      return { ok: out.success, error: new TextDecoder().decode(out.stderr).trim().split("\n").pop() ?? "" };
    } catch (error) {
      return { ok: false, error: (error as Error).message };
    }
  };
  if (run(PYTHON, ["-c", "import mcp"]).ok) return { path: PYTHON };
  // One that exists and does not work (its Python gone, say) is replaced.
  removeIfThere(VENV);
  const staging = `${VENV}.${crypto.randomUUID()}`;
  try {
    const venv = run("python3", ["-m", "venv", staging]);
    if (!venv.ok) return { why: `python3 -m venv failed: ${venv.error}` };
    // No retries: an index that cannot be reached answers at once here, and CI has no time to wait.
    const pip = run(`${staging}/bin/python`, [
      "-m",
      "pip",
      "install",
      "-q",
      "--retries",
      "0",
      "--timeout",
      "5",
      SDK,
    ]);
    if (!pip.ok) return { why: `pip install ${SDK} failed: ${pip.error}` };
    try {
      Deno.renameSync(staging, VENV);
    } catch {
      // Another run made it meanwhile: theirs is used.
    }
  } finally {
    removeIfThere(staging);
  }
  if (!run(PYTHON, ["-c", "import mcp"]).ok) return { why: `pip install ${SDK} failed: import mcp fails` };
  return { path: PYTHON };
}

/** Removes a directory and what it holds, if it is there. */
function removeIfThere(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

const found = python();
if (!found.path) console.warn(`python_client_test ignored: ${found.why}`);

interface Outcome {
  version: string;
  tools: string[];
  made: { task: { name: string } };
  listed: { tasks: { name: string }[] };
  missing: { is_error: boolean; structured: { error: { code: string } } };
}

async function pinned(args: string[]): Promise<Outcome> {
  const out = await new Deno.Command(found.path!, {
    args: [SCRIPT, ...args],
    env: serverEnv({ LOG_LEVEL: "error" }),
    clearEnv: true,
    cwd: ROOT,
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(
    out.code,
    0,
    `the Python client exited ${out.code}:\n${stdout}\n${new TextDecoder().decode(out.stderr)}`,
  );
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

function check(outcome: Outcome): void {
  assert.equal(outcome.version, "2026-07-28");
  assert.ok(outcome.tools.includes("createTask") && outcome.tools.includes("claimTask"));
  assert.equal(outcome.made.task.name, "From Python");
  assert.ok(outcome.listed.tasks.some((t) => t.name === "From Python"));
  assert.equal(outcome.missing.is_error, true);
  assert.equal(outcome.missing.structured.error.code, "NOT_FOUND");
}

Deno.test({
  name: "the Python SDK pinned to 2026-07-28 works over HTTP",
  ignore: !found.path,
  fn: async () => {
    await using server = await spawnServer({ env: { LOG_LEVEL: "error" } });
    check(await pinned(["http", `${server.url}/mcp`]));
  },
});

Deno.test({
  name: "the Python SDK pinned to 2026-07-28 works over stdio",
  ignore: !found.path,
  fn: async () => {
    check(await pinned(["stdio", Deno.execPath(), "run", "-A", MAIN, "--stdio"]));
  },
});
