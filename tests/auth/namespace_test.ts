/**
 * Namespace names from OAuth claims: always valid, kept when already valid, one-to-one, and (unless
 * `OAUTH_NAMESPACES=shared`) in a space of their own, `oauth.`, that no tokens-file name is by chance.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { namespaceFromClaim, OAUTH_NAMESPACE_PREFIX } from "../../lib/auth/namespace.ts";
import { OAUTH_NAMESPACE_MODES } from "../../lib/config.ts";
import { isNamespace } from "../../lib/domain/schemas.ts";

Deno.test("namespaceFromClaim keeps a valid name and maps any other value to a readable valid one", () => {
  assert.equal(namespaceFromClaim("alice"), "oauth.alice");
  assert.equal(namespaceFromClaim("alice", "shared"), "alice");
  assert.equal(namespaceFromClaim("team.a_b-1"), "oauth.team.a_b-1");
  assert.match(namespaceFromClaim("auth0|6612ab"), /^oauth\.auth0_6612ab-[0-9a-f]{16}$/);
  assert.match(namespaceFromClaim("auth0|6612ab", "shared"), /^auth0_6612ab-[0-9a-f]{16}$/);
  assert.match(namespaceFromClaim("bob@example.com"), /^oauth\.bob_example\.com-[0-9a-f]{16}$/);
  for (const mode of OAUTH_NAMESPACE_MODES) {
    const long = namespaceFromClaim("x".repeat(65), mode);
    assert.equal(long.length, 64);
    assert.ok(isNamespace(long));
  }
  // A valid name too long to keep behind the prefix is mapped, never cut into another's name.
  const sixty = "y".repeat(60);
  assert.equal(namespaceFromClaim(sixty, "shared"), sixty);
  assert.match(namespaceFromClaim(sixty), /^oauth\.y{41}-[0-9a-f]{16}$/);
  assert.notEqual(namespaceFromClaim("a|b"), namespaceFromClaim("a/b"), "same shape, different hash");
});

Deno.test("namespaceFromClaim: every claim-made name is in oauth., unless shared; a tokens-file name never is by chance", () => {
  for (const value of ["team-a", "default", "oauth", "x".repeat(70), "a b"]) {
    assert.ok(namespaceFromClaim(value).startsWith(OAUTH_NAMESPACE_PREFIX), value);
  }
  assert.notEqual(namespaceFromClaim("team-a"), "team-a");
  assert.equal(
    namespaceFromClaim("oauth.team-a"),
    "oauth.oauth.team-a",
    "a claim cannot name the prefix away",
  );
});

Deno.test("namespaceFromClaim: a claim that is another user's mapped name gets a namespace of its own", () => {
  for (const mode of OAUTH_NAMESPACE_MODES) {
    const first = namespaceFromClaim("auth0|66a1", mode);
    const bare = first.startsWith(OAUTH_NAMESPACE_PREFIX)
      ? first.slice(OAUTH_NAMESPACE_PREFIX.length)
      : first;
    assert.match(bare, /^auth0_66a1-[0-9a-f]{16}$/);
    for (const claim of [first, bare]) {
      const second = namespaceFromClaim(claim, mode);
      assert.notEqual(second, first);
      assert.ok(isNamespace(second));
    }
  }
  // A valid name that only looks mapped is mapped too; upper-case hex is not the mapped form.
  assert.notEqual(namespaceFromClaim("team-0123456789abcdef", "shared"), "team-0123456789abcdef");
  assert.equal(namespaceFromClaim("team-0123456789ABCDEF", "shared"), "team-0123456789ABCDEF");
});

/** Claim values of every kind: any text, valid names, mapped names, and names that look mapped. */
function claimValue(): fc.Arbitrary<string> {
  const text = fc.string({ minLength: 1, maxLength: 80, unit: "grapheme" });
  const name = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
  const hex = fc.stringMatching(/^[0-9a-f]{16}$/);
  const looksMapped = fc.tuple(fc.stringMatching(/^[A-Za-z0-9._-]{1,47}$/), hex).map(([a, h]) => `${a}-${h}`);
  const mapped = fc.oneof(text, name).chain((v) =>
    fc.constantFrom(...OAUTH_NAMESPACE_MODES.map((m) => namespaceFromClaim(v, m)))
  );
  const mappedTwice = mapped.map((v) => namespaceFromClaim(v));
  return fc.oneof(text, fc.string({ minLength: 1 }), name, looksMapped, mapped, mappedTwice);
}

Deno.test("namespaceFromClaim is one-to-one over arbitrary values, in either mode, mapped-looking ones included", () => {
  for (const [i, mode] of OAUTH_NAMESPACE_MODES.entries()) {
    const prefix = mode === "shared" ? "" : OAUTH_NAMESPACE_PREFIX;
    fc.assert(
      fc.property(claimValue(), claimValue(), (a, b) => {
        const [na, nb] = [namespaceFromClaim(a, mode), namespaceFromClaim(b, mode)];
        assert.ok(isNamespace(na), `${JSON.stringify(a)} -> ${na}`);
        assert.ok(na.startsWith(prefix));
        if (isNamespace(a) && !/-[0-9a-f]{16}$/.test(a) && prefix.length + a.length <= 64) {
          assert.equal(na, prefix + a);
        }
        if (a !== b) assert.notEqual(na, nb, `${JSON.stringify(a)} and ${JSON.stringify(b)} share ${na}`);
      }),
      { seed: 12 + i, numRuns: 2000 },
    );
    // Each value against its own mapped name (with and without the prefix), the pairs the attack uses.
    fc.assert(
      fc.property(claimValue(), (a) => {
        const mapped = namespaceFromClaim(a, mode);
        if (mapped !== a) assert.notEqual(namespaceFromClaim(mapped, mode), mapped);
        const bare = mapped.slice(prefix.length);
        if (bare !== a) assert.notEqual(namespaceFromClaim(bare, mode), mapped);
      }),
      { seed: 14 + i, numRuns: 2000 },
    );
  }
});
