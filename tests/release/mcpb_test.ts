/**
 * An MCP Bundle as the release workflow packs it, with a stand-in for the compiled binary (which
 * cannot be built here, see docs/development.md "Packaging"): the single-file JS bundle of `deno task bundle`
 * behind a small launcher at the manifest's entry point. `mcpb pack` packs it, `mcpb info` reads it,
 * and the unpacked bundle's entry point, started as the manifest says, passes the smoke test.
 */
import assert from "node:assert/strict";
import type { Platform } from "../../scripts/release/manifest.ts";
import { smoke } from "../../scripts/release/smoke.ts";
import { serverEnv } from "../support/env.ts";
import { CONFIG, ROOT } from "../support/paths.ts";
import { projectVersion } from "../../scripts/release/settings.ts";
import { runTask } from "../support/tasks.ts";

const PLATFORM =
  ({ darwin: "darwin", linux: "linux", windows: "win32" } as Record<string, Platform>)[Deno.build.os];

/** Builds the `bundle` task's single file at `output`. */
async function buildBundle(output: string): Promise<void> {
  const task: string = JSON.parse(await Deno.readTextFile(CONFIG)).tasks.bundle;
  const args = task.split(" ").slice(1).map((arg) => (arg === "dist/checklist-mcp.mjs" ? output : arg));
  const built = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
}

Deno.test({
  name: "mcpb packs a bundle around a stand-in binary; mcpb info reads it and its entry point serves stdio",
  // The stand-in binary is a POSIX shell launcher: it cannot run on Windows.
  ignore: PLATFORM === undefined || PLATFORM === "win32",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-mcpb-" });
    try {
      const stage = `${dir}/stage`;
      await Deno.mkdir(`${stage}/server`, { recursive: true });
      await buildBundle(`${stage}/server/checklist-mcp.mjs`);
      const launcher = `${stage}/server/checklist-mcp`;
      await Deno.writeTextFile(
        launcher,
        `#!/bin/sh\nexec '${Deno.execPath()}' run --no-config -A "$(dirname "$0")/checklist-mcp.mjs" "$@"\n`,
      );
      await Deno.chmod(launcher, 0o755);
      const written = await runTask("manifest", ["--platform", PLATFORM!, "--out", `${stage}/manifest.json`]);
      assert.equal(written.code, 0, written.stderr);

      const bundle = `${dir}/checklist-mcp-${await projectVersion()}-test.mcpb`;
      const packed = await runTask("mcpb", ["pack", stage, bundle]);
      assert.equal(packed.code, 0, packed.stdout + packed.stderr);
      const size = (await Deno.stat(bundle)).size;
      assert.ok(size > 0);

      const info = await runTask("mcpb", ["info", bundle]);
      assert.equal(info.code, 0, info.stdout + info.stderr);
      assert.match(
        info.stdout,
        new RegExp(`^File: ${bundle.split("/").pop()!.replaceAll(".", "\\.")}$`, "m"),
      );
      assert.match(info.stdout, new RegExp(`^Size: ${(size / 1024).toFixed(2)} KB$`, "m"));
      assert.match(info.stdout, /Not signed/);

      // What a client gets: the manifest as staged, and an entry point it can start as the manifest says.
      const unpacked = `${dir}/unpacked`;
      const opened = await runTask("mcpb", ["unpack", bundle, unpacked]);
      assert.equal(opened.code, 0, opened.stdout + opened.stderr);
      const manifest = JSON.parse(await Deno.readTextFile(`${unpacked}/manifest.json`));
      assert.deepEqual(manifest, JSON.parse(await Deno.readTextFile(`${stage}/manifest.json`)));
      const entry = await Deno.stat(`${unpacked}/${manifest.server.entry_point}`);
      assert.ok(entry.isFile && (entry.mode! & 0o111) !== 0, "the entry point is kept executable");
      const { command, args } = manifest.server.mcp_config as { command: string; args: string[] };
      const report = await smoke({
        command: command.replace("${__dirname}", unpacked),
        args,
        env: serverEnv({ LOG_LEVEL: "warn" }),
        expectVersion: await projectVersion(),
      });
      assert.ok(report.tools > 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
