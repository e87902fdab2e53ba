/** The allow-list rules and the exposure check on their own. */
import assert from "node:assert/strict";
import { tokensMatch } from "../../lib/auth/credential.ts";
import {
  allowLists,
  assertSafeExposure,
  hostAllowed,
  isLoopbackAddress,
  originAllowed,
  parseHostPort,
} from "../../lib/http/guards.ts";

Deno.test("parseHostPort reads names, ports and IPv6 literals", () => {
  assert.deepEqual(parseHostPort("LocalHost:8585"), { host: "localhost", port: "8585" });
  assert.deepEqual(parseHostPort("example.com"), { host: "example.com" });
  assert.deepEqual(parseHostPort("[::1]:80"), { host: "[::1]", port: "80" });
  assert.deepEqual(parseHostPort("[::1]"), { host: "[::1]" });
  assert.deepEqual(parseHostPort("fe80::1"), { host: "[fe80::1]" });
  for (const bad of ["", "a:b", "[::1", "[::1]x", "host:123456", "a b", "evil.com/x", "x@y"]) {
    assert.equal(parseHostPort(bad), undefined, bad);
  }
});

Deno.test("hostAllowed: entries without a port allow every port; * allows all", () => {
  const { hosts } = allowLists({ allowedHosts: ["mcp.example.com", "pinned.example.com:8443"] });
  assert.ok(hostAllowed("localhost:1", hosts));
  assert.ok(hostAllowed("127.0.0.1", hosts));
  assert.ok(hostAllowed("[::1]:8585", hosts));
  assert.ok(hostAllowed("MCP.example.com:443", hosts));
  assert.ok(hostAllowed("pinned.example.com:8443", hosts));
  assert.ok(!hostAllowed("pinned.example.com:8444", hosts));
  assert.ok(!hostAllowed("evil.example.com", hosts));
  assert.ok(!hostAllowed(undefined, hosts));
  assert.ok(!hostAllowed("127.0.0.2", hosts), "only the loopback names, not the whole range");
  assert.ok(hostAllowed("anything.example", ["*"]));
});

Deno.test("allowLists adds a concrete HOST, not a wildcard address", () => {
  assert.ok(allowLists({ host: "192.0.2.7" }).hosts.includes("192.0.2.7"));
  assert.ok(!allowLists({ host: "0.0.0.0" }).hosts.includes("0.0.0.0"));
  assert.ok(!allowLists({ host: "::" }).hosts.includes("::"));
});

Deno.test("originAllowed: absent passes, loopback passes, listed origins match exactly", () => {
  const origins = ["https://app.example.com", "http://tools.example.com:8080"];
  assert.ok(originAllowed(undefined, origins));
  assert.ok(originAllowed("http://localhost:3000", origins));
  assert.ok(originAllowed("https://[::1]", origins));
  assert.ok(originAllowed("https://app.example.com", origins));
  assert.ok(originAllowed("https://app.example.com:443", origins));
  assert.ok(originAllowed("http://tools.example.com:8080", origins));
  for (
    const bad of [
      "null",
      "",
      "https://app.example.com.evil.com",
      "http://app.example.com",
      "http://tools.example.com",
      "chrome-extension://abc",
      "file:///etc",
      "http://localhost.evil.com",
    ]
  ) {
    assert.ok(!originAllowed(bad, origins), bad);
  }
});

Deno.test("isLoopbackAddress covers the loopback names and 127.0.0.0/8 only", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"]) {
    assert.ok(isLoopbackAddress(host), host);
  }
  for (
    const host of ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1", "example.com", "128.0.0.1", "Deno Deploy"]
  ) {
    assert.ok(!isLoopbackAddress(host), host);
  }
});

Deno.test("assertSafeExposure refuses a non-loopback address without a token unless told", () => {
  const none = { authToken: undefined, allowUnauthenticatedRemote: false };
  assert.throws(
    () => assertSafeExposure(none, "0.0.0.0"),
    /Refusing to serve 0\.0\.0\.0.*AUTH_TOKEN.*ALLOW_UNAUTHENTICATED_REMOTE=1/s,
  );
  assert.throws(() => assertSafeExposure(none, "192.168.1.5"));
  assertSafeExposure(none, "127.0.0.1");
  assertSafeExposure(none, "localhost");
  assertSafeExposure({ ...none, authToken: "t" }, "0.0.0.0");
  assertSafeExposure({ ...none, allowUnauthenticatedRemote: true }, "0.0.0.0");
  // The tokens file or OAuth (an authenticator was built) counts as access control too.
  assertSafeExposure({ ...none, authenticated: true }, "0.0.0.0");
  assert.throws(() => assertSafeExposure({ ...none, authenticated: false }, "0.0.0.0"), /AUTH_TOKENS_FILE/);
});

Deno.test("tokensMatch compares exactly, whatever the lengths", async () => {
  assert.equal(await tokensMatch("abc", "abc"), true);
  assert.equal(await tokensMatch("abc", "abd"), false);
  assert.equal(await tokensMatch("abc", "abcd"), false);
  assert.equal(await tokensMatch("", "abc"), false);
});
