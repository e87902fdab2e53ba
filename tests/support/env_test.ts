/** The child environment of the harness: no setting of the shell that runs the tests reaches a child. */
import assert from "node:assert/strict";
import { loadConfig } from "../../lib/config.ts";
import { SERVER_ENV_NAMES, serverEnv } from "./env.ts";

Deno.test("the harness strips every variable the configuration reads", () => {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_target, name) => void (typeof name === "string" && read.add(name)),
  });
  loadConfig(env, ["--stdio"]);
  loadConfig(env, []);
  assert.ok(read.size > 0);
  assert.deepEqual([...read].filter((name) => !SERVER_ENV_NAMES.includes(name)), []);
});

Deno.test("serverEnv keeps the rest of the environment, adds NO_COLOR and the extra variables", () => {
  const env = serverEnv({ LOG_LEVEL: "warn" });
  assert.equal(env.NO_COLOR, "1");
  assert.equal(env.LOG_LEVEL, "warn");
  assert.equal(env.PATH, Deno.env.get("PATH"));
  for (const name of SERVER_ENV_NAMES) if (name !== "LOG_LEVEL") assert.equal(env[name], undefined, name);
});
