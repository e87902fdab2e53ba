/**
 * What ends a server process (lib/process_exits.ts): once it serves, a stray rejection or a throw in
 * a timer is logged and the process goes on; its exits log their code and reason.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT } from "./support/paths.ts";
import { serverEnv } from "./support/env.ts";
import { mainArgs, runToEnd, spawnServer } from "./support/server_process.ts";
import { lines } from "./support/streams.ts";

const MODULE = new URL("../lib/process_exits.ts", import.meta.url).href;
const LOG = new URL("../lib/log.ts", import.meta.url).href;

/** Runs `code` with the module's exports and a logger in scope; returns the exit code, stdout and log. */
async function run(code: string): Promise<{ code: number; stdout: string; log: Record<string, unknown>[] }> {
  const script = `import { exitWith, keepServing, refuseStart } from ${JSON.stringify(MODULE)};
import { createLogger } from ${JSON.stringify(LOG)};
const log = createLogger();
${code}`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", CONFIG, script],
    cwd: ROOT,
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  const stderr = decoder.decode(output.stderr).trim();
  const log = stderr === "" ? [] : stderr.split("\n").map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      return { unstructured: line };
    }
  });
  return { code: output.code, stdout: decoder.decode(output.stdout), log };
}

Deno.test("a serving process logs a stray rejection and a throw in a timer, and goes on", async () => {
  const result = await run(`
keepServing(log);
Promise.reject(new Error("a background job failed"));
setTimeout(() => { throw new Error("a timer callback threw"); }, 10);
setTimeout(() => { console.log("still serving"); exitWith(log, 0, "done"); }, 100);
`);
  assert.equal(result.code, 0, JSON.stringify(result.log));
  assert.equal(result.stdout, "still serving\n");
  const lines = result.log.map((
    r,
  ) => [r.level, r.msg, (r.error as { message?: string })?.message ?? r.reason]);
  // The two failures in either order: on a busy machine the 10 ms timer may fire before the rejection is seen.
  assert.deepEqual(lines.slice(0, 2).sort(), [
    ["error", "uncaught error; the server goes on", "a timer callback threw"],
    ["error", "unhandled rejection; the server goes on", "a background job failed"],
  ]);
  assert.deepEqual(lines.slice(2), [["info", "exiting", "done"]]);
  assert.equal(result.log[2]!.exitCode, 0);
});

Deno.test("a refused start is one line with its reason and exit code 1", async () => {
  const result = await run(`refuseStart(log, new Error("FILE_PATH /x is not a file."));`);
  assert.equal(result.code, 1);
  assert.deepEqual(result.log.map((r) => [r.level, r.msg, r.error, r.exitCode]), [
    ["error", "cannot start", "FILE_PATH /x is not a file.", 1],
  ]);
});

Deno.test("a log line to a closed stderr never ends the process", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--config",
      CONFIG,
      `import { createLogger } from ${JSON.stringify(LOG)};
const log = createLogger();
await new Promise((resolve) => setTimeout(resolve, 200));
log.error("nobody reads this");
console.log("still here");`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await child.stderr.cancel(); // the reader goes away
  const stdout = await new Response(child.stdout).text();
  assert.equal((await child.status).code, 0);
  assert.equal(stdout, "still here\n");
});

Deno.test("a server's clean stop logs its exit code and reason: stdio at the end of its input, HTTP on a signal", async () => {
  const stdio = await runToEnd(mainArgs(["--stdio"]));
  assert.equal(stdio.code, 0, stdio.stderr);
  const stdioExit = stdio.stderr.trim().split("\n").map((line) => JSON.parse(line)).at(-1);
  assert.deepEqual([stdioExit.msg, stdioExit.exitCode, stdioExit.reason], [
    "exiting",
    0,
    "stdin ended (a clean stop)",
  ]);

  const http = await spawnServer();
  const { code, stderr } = await http.stop();
  assert.equal(code, 0, stderr);
  // (`deno run main.ts` without --http: the runtime's own "did you mean deno serve?" line comes first.)
  const httpExit = stderr.trim().split("\n").filter((line) => line.startsWith("{")).map((line) =>
    JSON.parse(line)
  )
    .at(-1);
  assert.deepEqual([httpExit.msg, httpExit.exitCode], ["exiting", 0]);
  assert.match(httpExit.reason, /signal/);
});

Deno.test("a stdio server stopped by SIGTERM logs why and exits with code 0", {
  ignore: Deno.build.os === "windows",
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-sigterm-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: mainArgs(["--stdio"]),
    cwd: ROOT,
    env: serverEnv({ LOG_LEVEL: "info", KV_PATH: `${dir}/store.sqlite` }),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const writer = child.stdin.getWriter();
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    };
    await writer.write(new TextEncoder().encode(JSON.stringify(initialize) + "\n"));
    const out = lines(child.stdout);
    assert.match(String((await out.next()).value), /"id":1/);
    child.kill("SIGTERM");
    const { code } = await child.status;
    const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
    const log = stderr.trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(code, 0, stderr);
    assert.deepEqual(
      log.filter((r) => r.msg === "exiting").map((r) => [r.exitCode, r.reason]),
      [[0, "SIGTERM asked for a clean stop"]],
    );
    await writer.close().catch(() => {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
