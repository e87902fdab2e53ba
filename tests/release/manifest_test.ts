/**
 * The MCP Bundle manifest (manifest.json, written by `deno task manifest`): what mcpb 2.1.2 accepts,
 * tools equal to the server's live `tools/list`, every user setting mapped into the server's
 * environment, and a server that starts with every default a client fills in.
 */
import assert from "node:assert/strict";
import { buildManifest, manifestText, PLATFORMS } from "../../scripts/release/manifest.ts";
import { smoke } from "../../scripts/release/smoke.ts";
import { serverEnv } from "../support/env.ts";
import { connectInMemory } from "../support/harness.ts";
import { CONFIG, MAIN, ROOT } from "../support/paths.ts";
import { projectVersion } from "../../scripts/release/settings.ts";
import { runTask } from "../support/tasks.ts";

const MANIFEST = `${ROOT}/manifest.json`;

interface UserConfigEntry {
  type: string;
  title: string;
  description: string;
  default?: string | number;
}

interface Manifest {
  manifest_version: string;
  version: string;
  server: {
    type: string;
    entry_point: string;
    mcp_config: { command: string; args: string[]; env: Record<string, string> };
  };
  tools: { name: string; description?: string }[];
  user_config: Record<string, UserConfigEntry>;
  compatibility: { platforms: string[] };
}

async function readManifest(): Promise<Manifest> {
  return JSON.parse(await Deno.readTextFile(MANIFEST));
}

Deno.test("manifest.json lists the tools of the live tools/list (re-run deno task manifest when it fails)", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const manifest = await readManifest();
  assert.deepEqual(
    manifest.tools,
    tools.map(({ name, description }) => ({ name, description })),
    "manifest.json is stale: run `deno task manifest`",
  );
  // The whole file is what the task writes today, so no other field goes stale either.
  const expected = manifestText(buildManifest({ version: await projectVersion(), tools: manifest.tools }));
  assert.equal(
    await Deno.readTextFile(MANIFEST),
    expected,
    "manifest.json is stale: run `deno task manifest`",
  );
});

Deno.test("manifest.json is a binary server of deno.json's version, started over stdio", async () => {
  const manifest = await readManifest();
  assert.equal(manifest.manifest_version, "0.4");
  assert.equal(manifest.version, await projectVersion());
  assert.equal(manifest.server.type, "binary");
  assert.equal(manifest.server.entry_point, "server/checklist-mcp");
  assert.equal(manifest.server.mcp_config.command, "${__dirname}/server/checklist-mcp");
  assert.deepEqual(manifest.server.mcp_config.args, ["--stdio"]);
  assert.deepEqual(manifest.compatibility.platforms, ["darwin", "linux", "win32"]);
});

Deno.test("mcpb validate accepts manifest.json and each platform's manifest, and rejects a broken one", async () => {
  const ok = await runTask("mcpb", ["validate", MANIFEST]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /Manifest schema validation passes!/);
  const dir = await Deno.makeTempDir({ prefix: "checklist-manifest-" });
  try {
    for (const platform of PLATFORMS) {
      const out = `${dir}/${platform}.json`;
      const written = await runTask("manifest", ["--platform", platform, "--out", out]);
      assert.equal(written.code, 0, written.stderr);
      const manifest: Manifest = JSON.parse(await Deno.readTextFile(out));
      assert.deepEqual(manifest.compatibility.platforms, [platform]);
      const exe = platform === "win32" ? ".exe" : "";
      assert.equal(manifest.server.entry_point, `server/checklist-mcp${exe}`);
      assert.equal(manifest.server.mcp_config.command, `\${__dirname}/server/checklist-mcp${exe}`);
      const valid = await runTask("mcpb", ["validate", out]);
      assert.equal(valid.code, 0, `${platform}: ${valid.stdout}${valid.stderr}`);
    }
    // The validator really checks: a manifest without an author, or with an unknown server type, fails.
    const { author: _, ...noAuthor } = await readManifest() as unknown as Record<string, unknown>;
    const manifest = await readManifest();
    for (
      const [name, broken] of [
        ["no-author", noAuthor],
        ["bad-type", { ...manifest, server: { ...manifest.server, type: "deno" } }],
      ] as const
    ) {
      await Deno.writeTextFile(`${dir}/${name}.json`, JSON.stringify(broken));
      const run = await runTask("mcpb", ["validate", `${dir}/${name}.json`]);
      assert.equal(run.code, 1, `${name} was accepted`);
    }
    const badPlatform = await runTask("manifest", ["--platform", "beos", "--out", `${dir}/beos.json`]);
    assert.equal(badPlatform.code, 1);
    assert.match(badPlatform.stderr, /--platform must be one of darwin, linux, win32/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every user_config setting reaches the server's environment under its variable", async () => {
  const manifest = await readManifest();
  const env = manifest.server.mcp_config.env;
  const wanted = [
    "FILE_PATH",
    "CHECKLIST_NAMESPACE",
    "CHECKLIST_AGENT",
    "KV_PATH",
    "HISTORY_SIZE",
    "WORK_CACHE_SIZE",
    "CHECKLIST_TOOLS",
    "LOG_LEVEL",
    "REPO_DIR",
  ];
  assert.deepEqual(Object.keys(env).sort(), [...wanted].sort());
  const referenced = Object.values(env).map((value) => value.match(/^\$\{user_config\.([a-z_]+)\}$/)?.[1]);
  assert.deepEqual(referenced.sort(), Object.keys(manifest.user_config).sort(), "one setting per variable");
  for (const [key, entry] of Object.entries(manifest.user_config)) {
    assert.ok(entry.title && entry.description, `${key} has a title and a description`);
    assert.ok(entry.default !== undefined, `${key} has a default, so no placeholder reaches the server`);
  }
});

Deno.test("the bundle's server starts with every user_config default a client fills in", async () => {
  const manifest = await readManifest();
  const filled = Object.fromEntries(
    Object.entries(manifest.server.mcp_config.env).map(([name, value]) => {
      const key = value.match(/^\$\{user_config\.([a-z_]+)\}$/)![1]!;
      return [name, String(manifest.user_config[key]!.default)];
    }),
  );
  const report = await smoke({
    command: Deno.execPath(),
    args: ["run", "-A", "--config", CONFIG, MAIN, ...manifest.server.mcp_config.args],
    env: serverEnv({ ...filled, LOG_LEVEL: "warn" }),
  });
  assert.equal(report.server, "checklist-mcp");
});
