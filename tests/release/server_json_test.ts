/**
 * server.json for the MCP Registry, written by `deno task server-json` from a folder of release
 * assets. The schema's URL (static.modelcontextprotocol.io, 2025-09-29) cannot be fetched here, so
 * the rules checked are written out below from that schema: the name pattern
 * `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$` (reverse-DNS, one slash), a description of 1–100 characters, an
 * exact version (no range, not "latest"), packages with only the Package fields (its
 * `additionalProperties: false`), `registryType`, `identifier`, `version` and `transport` present,
 * `fileSha256` matching `^[a-f0-9]{64}$`, and remotes of type `streamable-http` or `sse` with a URL.
 * Beyond the schema: the registry's rules for mcpb (an https GitHub release URL, the hash of the
 * file) and ours (the version is deno.json's, the name is `io.github.<owner>/checklist-mcp`).
 */
import assert from "node:assert/strict";
import { projectVersion } from "../../scripts/release/settings.ts";
import { runTask } from "../support/tasks.ts";

const PACKAGE_FIELDS = new Set([
  "registryType",
  "registryBaseUrl",
  "identifier",
  "version",
  "fileSha256",
  "runtimeHint",
  "transport",
  "runtimeArguments",
  "packageArguments",
  "environmentVariables",
]);

interface Entry {
  $schema: string;
  name: string;
  description: string;
  version: string;
  repository: { url: string; source: string };
  packages: Record<string, unknown>[];
  remotes: { type: string; url: string; headers?: { name: string; isSecret?: boolean }[] }[];
}

async function sha256Hex(path: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(path)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A folder of stand-in release assets: two bundles, an archive and a checksum file. */
async function standInAssets(version: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-assets-" });
  for (const target of ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"]) {
    const bytes = crypto.getRandomValues(new Uint8Array(4096));
    await Deno.writeFile(`${dir}/checklist-mcp-${version}-${target}.mcpb`, bytes);
  }
  await Deno.writeTextFile(`${dir}/checklist-mcp-${version}-x86_64-unknown-linux-gnu.tar.gz`, "archive");
  await Deno.writeTextFile(`${dir}/SHA256SUMS`, "sums");
  return dir;
}

Deno.test("server-json writes a registry entry for stand-in assets that meets the 2025-09-29 rules", async () => {
  const version = await projectVersion();
  const assets = await standInAssets(version);
  try {
    const out = `${assets}/server.json`;
    const run = await runTask("server-json", [
      "--assets",
      assets,
      "--repository",
      "octo-org/checklist-mcp",
      "--tag",
      `v${version}`,
      "--out",
      out,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const entry: Entry = JSON.parse(await Deno.readTextFile(out));

    assert.equal(
      entry.$schema,
      "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
    );
    assert.match(entry.name, /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    assert.equal(entry.name.split("/").length, 2, "exactly one slash");
    assert.equal(entry.name, "io.github.octo-org/checklist-mcp");
    assert.ok(entry.description.length >= 1 && entry.description.length <= 100, entry.description);
    assert.equal(entry.version, version);
    assert.doesNotMatch(entry.version, /^[\^~<>=]|[*x]$|^latest$/, "an exact version, not a range");
    assert.deepEqual(entry.repository, {
      url: "https://github.com/octo-org/checklist-mcp",
      source: "github",
    });

    const bundles = [...Deno.readDirSync(assets)].map((e) => e.name).filter((n) => n.endsWith(".mcpb"))
      .sort();
    assert.equal(entry.packages.length, bundles.length, "one package per .mcpb, nothing else");
    for (const [i, pkg] of entry.packages.entries()) {
      const file = bundles[i]!;
      for (const key of Object.keys(pkg)) assert.ok(PACKAGE_FIELDS.has(key), `unknown package field ${key}`);
      assert.equal(pkg.registryType, "mcpb");
      assert.equal(
        pkg.identifier,
        `https://github.com/octo-org/checklist-mcp/releases/download/v${version}/${file}`,
      );
      assert.equal(pkg.version, version);
      assert.match(String(pkg.fileSha256), /^[a-f0-9]{64}$/);
      assert.equal(pkg.fileSha256, await sha256Hex(`${assets}/${file}`), `${file}: hash of the file`);
      assert.deepEqual(pkg.transport, { type: "stdio" });
      const names = (pkg.environmentVariables as { name: string }[]).map((v) => v.name);
      assert.ok(names.includes("FILE_PATH") && names.includes("CHECKLIST_NAMESPACE"), names.join());
    }

    assert.ok(entry.remotes.length >= 1);
    for (const remote of entry.remotes) {
      assert.equal(remote.type, "streamable-http");
      assert.match(remote.url, /^https:\/\/\S+\/mcp$/);
      const auth = remote.headers?.find((h) => h.name === "Authorization");
      assert.equal(auth?.isSecret, true, "the bearer token is marked secret");
    }
  } finally {
    await Deno.remove(assets, { recursive: true });
  }
});

Deno.test("server-json takes the owner from GITHUB_REPOSITORY, else the documented default; the schema and remote can be set", async (t) => {
  const version = await projectVersion();
  const assets = await standInAssets(version);
  try {
    const out = `${assets}/server.json`;
    await t.step("GITHUB_REPOSITORY (set in GitHub Actions)", async () => {
      const run = await runTask("server-json", ["--assets", assets, "--out", out], {
        GITHUB_REPOSITORY: "someone/checklist-mcp",
      });
      assert.equal(run.code, 0, run.stderr);
      const entry: Entry = JSON.parse(await Deno.readTextFile(out));
      assert.equal(entry.name, "io.github.someone/checklist-mcp");
      assert.match(String(entry.packages[0]!.identifier), /^https:\/\/github\.com\/someone\/checklist-mcp\//);
    });
    await t.step("the default, checklist-mcp/checklist-mcp", async () => {
      const run = await runTask("server-json", ["--assets", assets, "--out", out], { GITHUB_REPOSITORY: "" });
      assert.equal(run.code, 0, run.stderr);
      const entry: Entry = JSON.parse(await Deno.readTextFile(out));
      assert.equal(entry.name, "io.github.checklist-mcp/checklist-mcp");
    });
    await t.step("MCP_SERVER_SCHEMA names a later dated schema", async () => {
      const schema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
      const run = await runTask("server-json", ["--assets", assets, "--out", out], {
        MCP_SERVER_SCHEMA: schema,
      });
      assert.equal(run.code, 0, run.stderr);
      const entry: Entry = JSON.parse(await Deno.readTextFile(out));
      assert.equal(entry.$schema, schema);
    });
    await t.step("MCP_REMOTE_URL names the hosted endpoint", async () => {
      const run = await runTask("server-json", ["--assets", assets, "--out", out], {
        MCP_REMOTE_URL: "https://tasks.example.com/mcp",
      });
      assert.equal(run.code, 0, run.stderr);
      const entry: Entry = JSON.parse(await Deno.readTextFile(out));
      assert.equal(entry.remotes[0]!.url, "https://tasks.example.com/mcp");
    });
  } finally {
    await Deno.remove(assets, { recursive: true });
  }
});

Deno.test("server-json refuses a wrong tag, a bad repository or no bundles, and writes nothing", async (t) => {
  const version = await projectVersion();
  const assets = await standInAssets(version);
  const empty = await Deno.makeTempDir({ prefix: "checklist-assets-empty-" });
  try {
    const out = `${empty}/server.json`;
    const cases: [string, string[], RegExp][] = [
      [
        "a tag of another version",
        ["--assets", assets, "--tag", "v99.0.0"],
        /does not match deno\.json's version/,
      ],
      ["a repository without an owner", ["--assets", assets, "--repository", "checklist-mcp"], /OWNER\/NAME/],
      ["an assets folder without bundles", ["--assets", empty], /no \.mcpb file/],
      ["an http remote", ["--assets", assets, "--remote-url", "http://example.com/mcp"], /https URL/],
      [
        "a schema that is not the registry's",
        ["--assets", assets, "--schema", "https://example.com/s.json"],
        /dated registry schema URL/,
      ],
    ];
    for (const [name, args, reason] of cases) {
      await t.step(name, async () => {
        const run = await runTask("server-json", [...args, "--out", out]);
        assert.equal(run.code, 1);
        assert.match(run.stderr, reason);
        await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
      });
    }
  } finally {
    await Deno.remove(assets, { recursive: true });
    await Deno.remove(empty, { recursive: true });
  }
});
