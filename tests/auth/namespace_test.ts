/** Namespace names from OAuth claims: always valid, kept when already valid, one-to-one. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { namespaceFromClaim } from "../../lib/auth/namespace.ts";
import { isNamespace } from "../../lib/domain/schemas.ts";

Deno.test("namespaceFromClaim keeps a valid name and maps any other value to a readable valid one", () => {
  assert.equal(namespaceFromClaim("alice"), "alice");
  assert.equal(namespaceFromClaim("team.a_b-1"), "team.a_b-1");
  assert.match(namespaceFromClaim("auth0|6612ab"), /^auth0_6612ab-[0-9a-f]{16}$/);
  assert.match(namespaceFromClaim("bob@example.com"), /^bob_example\.com-[0-9a-f]{16}$/);
  const long = namespaceFromClaim("x".repeat(65));
  assert.equal(long.length, 64);
  assert.ok(isNamespace(long));
  assert.notEqual(namespaceFromClaim("a|b"), namespaceFromClaim("a/b"), "same shape, different hash");
});

Deno.test("namespaceFromClaim: a claim that is another user's mapped name gets a namespace of its own", () => {
  const first = namespaceFromClaim("auth0|66a1");
  assert.match(first, /^auth0_66a1-[0-9a-f]{16}$/);
  const second = namespaceFromClaim(first);
  assert.notEqual(second, first);
  assert.ok(isNamespace(second));
  assert.ok(second.startsWith(`${first}-`), "still readable");
  // A valid name that only looks mapped is mapped too; upper-case hex is not the mapped form.
  assert.notEqual(namespaceFromClaim("team-0123456789abcdef"), "team-0123456789abcdef");
  assert.equal(namespaceFromClaim("team-0123456789ABCDEF"), "team-0123456789ABCDEF");
});

/** Claim values of every kind: any text, valid names, mapped names, and names that look mapped. */
function claimValue(): fc.Arbitrary<string> {
  const text = fc.string({ minLength: 1, maxLength: 80, unit: "grapheme" });
  const name = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
  const hex = fc.stringMatching(/^[0-9a-f]{16}$/);
  const looksMapped = fc.tuple(fc.stringMatching(/^[A-Za-z0-9._-]{1,47}$/), hex).map(([a, h]) => `${a}-${h}`);
  const mapped = fc.oneof(text, name).map(namespaceFromClaim);
  const mappedTwice = mapped.map(namespaceFromClaim);
  return fc.oneof(text, fc.string({ minLength: 1 }), name, looksMapped, mapped, mappedTwice);
}

Deno.test("namespaceFromClaim is one-to-one over arbitrary values, mapped-looking ones included", () => {
  fc.assert(
    fc.property(claimValue(), claimValue(), (a, b) => {
      const [na, nb] = [namespaceFromClaim(a), namespaceFromClaim(b)];
      assert.ok(isNamespace(na), `${JSON.stringify(a)} -> ${na}`);
      if (isNamespace(a) && !/-[0-9a-f]{16}$/.test(a)) assert.equal(na, a);
      if (a !== b) assert.notEqual(na, nb, `${JSON.stringify(a)} and ${JSON.stringify(b)} share ${na}`);
    }),
    { seed: 12, numRuns: 2000 },
  );
  // Each value against its own mapped name, the pair the attack uses.
  fc.assert(
    fc.property(claimValue(), (a) => {
      const mapped = namespaceFromClaim(a);
      if (mapped !== a) assert.notEqual(namespaceFromClaim(mapped), mapped);
    }),
    { seed: 13, numRuns: 2000 },
  );
});
