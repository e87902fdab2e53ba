/** Configuration from the environment and CLI flags: the defaults, the overrides, the refusals. */
import assert from "node:assert/strict";
import { loadConfig, renamedSettings, TOOL_GROUPS } from "../lib/config.ts";
import { runMain } from "./support/server_process.ts";

Deno.test("loadConfig: with nothing set it serves HTTP on 127.0.0.1:8585 from memory with every group", () => {
  const config = loadConfig({}, []);
  assert.equal(config.transport, "http");
  assert.equal(config.port, 8585);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.filePath, undefined);
  assert.equal(config.kvPath, undefined);
  assert.equal(config.authToken, undefined);
  assert.equal(config.workCacheSize, 10);
  assert.equal(config.logLevel, "info");
  assert.deepEqual(config.groups, [...TOOL_GROUPS]);
  assert.deepEqual(config.groups, ["tasks", "checklist", "works", "progress", "history"]);
  assert.equal(config.historySize, 100);
});

Deno.test("loadConfig: HISTORY_SIZE is 0 to 10,000; 0 keeps no history", () => {
  assert.equal(loadConfig({ HISTORY_SIZE: "0" }).historySize, 0);
  assert.equal(loadConfig({ HISTORY_SIZE: "250" }).historySize, 250);
  for (const bad of ["-1", "10001", "many", "1.5"]) {
    assert.throws(() => loadConfig({ HISTORY_SIZE: bad }), /HISTORY_SIZE/);
  }
});

Deno.test("loadConfig: reads the environment", () => {
  const config = loadConfig({
    PORT: "9001",
    HOST: "0.0.0.0",
    FILE_PATH: "/tmp/tasks.json",
    WORK_CACHE_SIZE: "3",
    CHECKLIST_TOOLS: " tasks, checklist ",
    LOG_LEVEL: "debug",
    AUTH_TOKEN: "secret",
  });
  assert.equal(config.port, 9001);
  assert.equal(config.host, "0.0.0.0");
  assert.equal(config.filePath, "/tmp/tasks.json");
  assert.equal(config.workCacheSize, 3);
  assert.deepEqual(config.groups, ["tasks", "checklist"]);
  assert.equal(config.logLevel, "debug");
  assert.equal(config.authToken, "secret");
});

Deno.test("loadConfig: empty variables count as unset", () => {
  const config = loadConfig({ PORT: "", FILE_PATH: "", CHECKLIST_TOOLS: "" });
  assert.equal(config.port, 8585);
  assert.equal(config.filePath, undefined);
  assert.deepEqual(config.groups, [...TOOL_GROUPS]);
});

Deno.test("loadConfig: flags select stdio and override the environment", async (t) => {
  await t.step("--stdio", () => assert.equal(loadConfig({}, ["--stdio"]).transport, "stdio"));
  await t.step("--port N and --host H", () => {
    const config = loadConfig({ PORT: "9001", HOST: "0.0.0.0" }, ["--port", "1234", "--host", "localhost"]);
    assert.equal(config.port, 1234);
    assert.equal(config.host, "localhost");
  });
  await t.step("--flag=value", () => {
    const config = loadConfig({}, ["--port=4321", "--file=/tmp/x.json"]);
    assert.equal(config.port, 4321);
    assert.equal(config.filePath, "/tmp/x.json");
  });
  await t.step("a value that itself holds =", () => {
    assert.equal(loadConfig({}, ["--file=/tmp/a=b.json"]).filePath, "/tmp/a=b.json");
  });
  await t.step("--file beside --stdio", () => {
    const config = loadConfig({}, ["--stdio", "--file", "plan.json"]);
    assert.equal(config.transport, "stdio");
    assert.equal(config.filePath, "plan.json");
  });
});

Deno.test("loadConfig: a bad value is refused with the variable's name", async (t) => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ["PORT not a number", { PORT: "eighty" }, /PORT/],
    ["PORT out of range", { PORT: "70000" }, /PORT/],
    ["PORT not an integer", { PORT: "80.5" }, /PORT/],
    ["WORK_CACHE_SIZE zero", { WORK_CACHE_SIZE: "0" }, /WORK_CACHE_SIZE/],
    ["unknown tool group", { CHECKLIST_TOOLS: "tasks,bogus" }, /CHECKLIST_TOOLS/],
    ["no tool group", { CHECKLIST_TOOLS: " , " }, /CHECKLIST_TOOLS/],
    ["unknown log level", { LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    ["FILE_PATH with KV_PATH", { FILE_PATH: "a.json", KV_PATH: ":memory:" }, /FILE_PATH.*KV_PATH/],
  ];
  for (const [label, env, pattern] of cases) {
    await t.step(label, () => {
      assert.throws(() => loadConfig(env), (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.match(error.message, /^Invalid configuration/);
        assert.match(error.message, pattern);
        return true;
      });
    });
  }
  await t.step("a bad --port flag", () => {
    assert.throws(() => loadConfig({}, ["--port", "-1"]), /PORT/);
  });
  await t.step("a flag without its value", () => {
    assert.throws(() => loadConfig({}, ["--stdio", "--port"]), /--port needs a value/);
    assert.throws(() => loadConfig({}, ["--file", "--stdio"]), /--file needs a value/);
  });
  await t.step("--file with --kv", () => {
    assert.throws(() => loadConfig({}, ["--file", "a.json", "--kv", ":memory:"]), /FILE_PATH.*KV_PATH/);
  });
});

Deno.test("loadConfig: CHECKLIST_NAMESPACE or --namespace names the namespace; default is default; bad names refused", () => {
  assert.equal(loadConfig({}).namespace, "default");
  assert.equal(loadConfig({ CHECKLIST_NAMESPACE: "team-a.1_x" }).namespace, "team-a.1_x");
  assert.equal(loadConfig({ CHECKLIST_NAMESPACE: "a" }, ["--namespace", "b"]).namespace, "b");
  assert.equal(loadConfig({}, ["--namespace=c"]).namespace, "c");
  for (const bad of ["a/b", "a b", "x".repeat(65), "é"]) {
    assert.throws(() => loadConfig({ CHECKLIST_NAMESPACE: bad }), /CHECKLIST_NAMESPACE: a namespace name is/);
  }
  assert.throws(() => loadConfig({}, ["--namespace"]), /--namespace needs a value/);
});

Deno.test("loadConfig: MAX_CONNECTIONS and CONNECTION_IDLE_MINUTES; their old names are still read, the new ones win", async (t) => {
  await t.step("the new names", () => {
    const config = loadConfig({ MAX_CONNECTIONS: "7", CONNECTION_IDLE_MINUTES: "5" });
    assert.equal(config.maxConnections, 7);
    assert.equal(config.connectionIdleMinutes, 5);
    assert.deepEqual(renamedSettings({ MAX_CONNECTIONS: "7" }), []);
  });
  await t.step("the old names alone are read", () => {
    const env = { MAX_SESSIONS: "8", SESSION_IDLE_MINUTES: "6" };
    const config = loadConfig(env);
    assert.equal(config.maxConnections, 8);
    assert.equal(config.connectionIdleMinutes, 6);
    assert.deepEqual(renamedSettings(env), [
      { old: "MAX_SESSIONS", name: "MAX_CONNECTIONS", read: true },
      { old: "SESSION_IDLE_MINUTES", name: "CONNECTION_IDLE_MINUTES", read: true },
    ]);
  });
  await t.step("both set: the new name wins", () => {
    const env = { MAX_SESSIONS: "8", MAX_CONNECTIONS: "9" };
    assert.equal(loadConfig(env).maxConnections, 9);
    assert.deepEqual(renamedSettings(env), [{ old: "MAX_SESSIONS", name: "MAX_CONNECTIONS", read: false }]);
  });
  await t.step("a bad value is refused under the name it was given", () => {
    assert.throws(() => loadConfig({ MAX_SESSIONS: "0" }), /MAX_SESSIONS/);
    assert.throws(() => loadConfig({ MAX_CONNECTIONS: "0" }), /MAX_CONNECTIONS/);
  });
});

Deno.test("a server started with MAX_SESSIONS logs one warning naming MAX_CONNECTIONS", async () => {
  const { code, stderr } = await runMain({ env: { MAX_SESSIONS: "12" } });
  assert.equal(code, 0, stderr);
  const warnings = stderr.trim().split("\n").map((line) => JSON.parse(line)).filter((r) =>
    r.level === "warn" && r.setting !== undefined
  );
  assert.deepEqual(warnings.map((r) => [r.msg, r.setting, r.newName]), [
    ["a setting was read under its old name; rename it", "MAX_SESSIONS", "MAX_CONNECTIONS"],
  ]);
});
