/** The commit guard's flags and what it reads from the environment (docs/guard.md "Flags"). */
import assert from "node:assert/strict";
import { GUARD_USAGE, guardSettings, parseGuardFlags } from "../../lib/guard/guard_args.ts";
import { GuardError } from "../../lib/guard/guard_error.ts";

Deno.test("flags: values by space or =, each checked; mistakes are usage errors naming the flag", () => {
  const flags = parseGuardFlags([
    "--session",
    "shop",
    "--agent=ui",
    "--warn",
    "--strict",
    "--file",
    "t.json",
  ]);
  assert.deepEqual(flags, {
    session: "shop",
    agent: "ui",
    file: "t.json",
    warn: true,
    strict: true,
    install: false,
    force: false,
    help: false,
  });
  assert.equal(parseGuardFlags([]).session, "default");
  const mistakes: [string[], RegExp][] = [
    [["--bogus"], /unknown flag --bogus/],
    [["extra"], /unexpected argument "extra"/],
    [["--session"], /--session needs a value/],
    [["--session", "--warn"], /--session needs a value/],
    [["--agent", "not ok"], /--agent "not ok": an agent name/],
    [["--session", "a", "--session", "b"], /given twice/],
    [["--url", "ftp://x"], /not an http/],
    [["--url", "http://h/mcp", "--file", "x"], /give one store: --url or --file/],
    [["--url", "http://h/mcp", "--namespace", "n"], /namespace is in the URL/],
    [["--force"], /--force goes with --install/],
    [["--warn=1"], /--warn takes no value/],
  ];
  for (const [args, message] of mistakes) {
    assert.throws(() => parseGuardFlags(args), (error: unknown) => {
      assert.ok(error instanceof GuardError && error.kind === "usage", String(error));
      assert.match(error.message, message);
      assert.ok(error.message.endsWith(GUARD_USAGE), "the usage line follows");
      return true;
    });
  }
});

Deno.test("settings: a flag wins over its variable, a store flag over both store variables; paths from where it started", () => {
  const env = {
    FILE_PATH: "rel/tasks.json",
    CHECKLIST_AGENT: "backend",
    CHECKLIST_NAMESPACE: "team",
    AUTH_TOKEN: " secret ",
    PORT: "not a port",
  };
  const fromEnv = guardSettings(parseGuardFlags([]), env, "/repo/sub");
  assert.deepEqual(fromEnv, {
    store: { kind: "file", path: "/repo/sub/rel/tasks.json" },
    namespace: "team",
    session: "default",
    agent: "backend",
  });
  const byFlags = guardSettings(parseGuardFlags(["--kv", "/abs/t.kv", "--agent", "ui"]), env, "/repo");
  assert.deepEqual(byFlags.store, { kind: "kv", path: "/abs/t.kv" });
  assert.equal(byFlags.agent, "ui");
  const url = guardSettings(parseGuardFlags(["--url", "http://127.0.0.1:1/mcp/team"]), env, "/repo");
  assert.deepEqual(url.store, { kind: "url", url: "http://127.0.0.1:1/mcp/team", token: "secret" });
  assert.deepEqual(guardSettings(parseGuardFlags([]), {}, "/repo").store, { kind: "none" });
  assert.deepEqual(guardSettings(parseGuardFlags([]), { KV_PATH: ":memory:" }, "/r").store, {
    kind: "kv",
    path: ":memory:",
  });
  const invalid = { FILE_PATH: "t.json", CHECKLIST_AGENT: "not a name", CHECKLIST_NAMESPACE: "no/slash" };
  const flagged = guardSettings(parseGuardFlags(["--agent", "ui", "--namespace", "team"]), invalid, "/r");
  assert.deepEqual([flagged.agent, flagged.namespace], ["ui", "team"], "a flag's variable is not even read");
  assert.throws(
    () => guardSettings(parseGuardFlags([]), { FILE_PATH: "a", KV_PATH: "b" }, "/repo"),
    (error: unknown) =>
      error instanceof GuardError && error.kind === "unreachable" && /not both/.test(error.message),
  );
});
