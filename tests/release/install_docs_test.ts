/**
 * README "Install": one block per client, each naming the version it was written for, which must be
 * deno.json's (a release that bumps the version fails here until the section is brought up to date),
 * and blocks that agree with what the release ships.
 */
import assert from "node:assert/strict";
import { ROOT } from "../support/paths.ts";
import { projectVersion } from "../../scripts/release/settings.ts";

const CLIENTS = ["Claude Code", "Claude Desktop", "VS Code", "Cursor", "Codex", "Goose", "Deno Deploy"];

/** The README's `## Install` section, as its `###` subsections by heading. */
async function installSections(): Promise<Map<string, string>> {
  const readme = await Deno.readTextFile(`${ROOT}/README.md`);
  const start = readme.indexOf("\n## Install\n");
  assert.ok(start !== -1, "README has an Install section");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const parts = section.split(/\n### /).slice(1);
  return new Map(parts.map((part) => [part.slice(0, part.indexOf("\n")).trim(), part]));
}

function fenced(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
}

Deno.test("README Install has a block for each client, each written for deno.json's version", async () => {
  const version = await projectVersion();
  const sections = await installSections();
  for (const client of CLIENTS) {
    const text = sections.get(client);
    assert.ok(text, `a "### ${client}" subsection`);
    assert.ok(text.includes(`_Written for checklist-mcp ${version}._`), `${client}: written for ${version}`);
    assert.ok(/```\w+\n/.test(text), `${client}: a copy-paste block`);
    const stale = [...text.matchAll(/checklist-mcp[ -]v?(\d+\.\d+\.\d+)/g)].filter((m) => m[1] !== version);
    assert.deepEqual(stale.map((m) => m[0]), [], `${client}: names only version ${version}`);
  }
});

Deno.test("README Install blocks start the server as the bundle does, and parse", async () => {
  const manifest = JSON.parse(await Deno.readTextFile(`${ROOT}/manifest.json`));
  const args: string[] = manifest.server.mcp_config.args;
  const sections = await installSections();
  const claudeCode = sections.get("Claude Code")!;
  assert.match(
    claudeCode,
    new RegExp(`^claude mcp add checklist .*-- checklist-mcp ${args.join(" ")}$`, "m"),
  );
  assert.match(claudeCode, /^claude mcp add --transport http checklist http:\/\/127\.0\.0\.1:8585\/mcp$/m);
  for (const [client, text] of sections) {
    for (const block of fenced(text, "json")) {
      const parsed = JSON.parse(block);
      const servers = parsed.mcpServers ?? parsed.servers;
      assert.ok(servers?.checklist, `${client}: a "checklist" server`);
      assert.deepEqual(servers.checklist.args, args, `${client}: started as the bundle starts it`);
    }
  }
  assert.match(
    sections.get("Codex")!,
    /^\[mcp_servers\.checklist\]\ncommand = "checklist-mcp"\nargs = \["--stdio"\]$/m,
  );
  assert.match(sections.get("VS Code")!, /"type": "stdio"/);
  const deploy = sections.get("Deno Deploy")!;
  for (const needed of ["main.ts", "Deno KV", "AUTH_TOKEN", "ALLOWED_HOSTS", "/healthz"]) {
    assert.ok(deploy.includes(needed), `Deno Deploy names ${needed}`);
  }
});
