/** Namespace names from OAuth claims: always valid, kept when already valid, distinct for distinct values. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { namespaceFromClaim } from "../../lib/access/namespace.ts";
import { isNamespace } from "../../lib/domain/schemas.ts";

Deno.test("namespaceFromClaim keeps a valid name and maps any other value to a readable valid one", async () => {
  assert.equal(await namespaceFromClaim("alice"), "alice");
  assert.equal(await namespaceFromClaim("team.a_b-1"), "team.a_b-1");
  assert.match(await namespaceFromClaim("auth0|6612ab"), /^auth0_6612ab-[0-9a-f]{16}$/);
  assert.match(await namespaceFromClaim("bob@example.com"), /^bob_example\.com-[0-9a-f]{16}$/);
  const long = await namespaceFromClaim("x".repeat(65));
  assert.equal(long.length, 64);
  assert.ok(isNamespace(long));
  assert.notEqual(
    await namespaceFromClaim("a|b"),
    await namespaceFromClaim("a/b"),
    "same shape, different hash",
  );
});

Deno.test("namespaceFromClaim: every value gives a valid name; distinct values give distinct names", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ minLength: 1, maxLength: 200, unit: "grapheme" }),
      fc.string({ minLength: 1 }),
      async (a, b) => {
        const [na, nb] = [await namespaceFromClaim(a), await namespaceFromClaim(b)];
        assert.ok(isNamespace(na), `${JSON.stringify(a)} -> ${na}`);
        if (isNamespace(a)) assert.equal(na, a);
        if (a !== b) assert.notEqual(na, nb);
      },
    ),
    { seed: 12, numRuns: 500 },
  );
});
