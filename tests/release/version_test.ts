/**
 * One version per release: the tag must be `v` + deno.json's "version" (the release workflow runs
 * `deno task version --tag …` first), and the server reports that same version at initialize.
 */
import assert from "node:assert/strict";
import { connectInMemory } from "../support/harness.ts";
import { projectVersion } from "../../scripts/release/settings.ts";
import { runTask } from "../support/tasks.ts";

Deno.test("deno task version prints deno.json's version and accepts the tag v + that version", async () => {
  const version = await projectVersion();
  assert.match(version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, "deno.json's version is an exact semver");
  const plain = await runTask("version");
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout.trim(), version);
  const tagged = await runTask("version", ["--tag", `v${version}`]);
  assert.equal(tagged.code, 0, tagged.stderr);
  assert.equal(tagged.stdout.trim(), version);
  const ref = await runTask("version", ["--tag", `refs/tags/v${version}`]);
  assert.equal(ref.code, 0, ref.stderr);
});

Deno.test("deno task version refuses a tag that differs from deno.json's version, naming both", async () => {
  const version = await projectVersion();
  for (const tag of [`v${version}.1`, version, `v${version}-rc.1`, "latest", ""]) {
    const run = await runTask("version", ["--tag", tag]);
    assert.equal(run.code, 1, `tag ${JSON.stringify(tag)} was accepted`);
    assert.equal(run.stdout, "", "nothing printed on stdout for a refused tag");
    assert.match(
      run.stderr,
      new RegExp(`does not match deno\\.json's version ${version.replaceAll(".", "\\.")}`),
    );
  }
});

Deno.test("the server reports deno.json's version at initialize", async () => {
  await using conn = await connectInMemory();
  assert.equal(conn.client.getServerVersion()?.version, await projectVersion());
});
