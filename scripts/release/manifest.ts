/**
 * `deno task manifest` writes `manifest.json`, the MCP Bundle (mcpb, manifest_version 0.4) manifest:
 * a `binary` server started as `server/checklist-mcp --stdio`, the user settings mapped into its
 * environment, and the tools as the server's own `tools/list` reports them, so re-running the task
 * is all a new or renamed tool needs (a test fails while the file is stale).
 * `--platform darwin|linux|win32 --out PATH` writes the manifest of one platform's bundle instead
 * (the release workflow packs one bundle per platform, each holding that platform's binary).
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createLogger } from "../../lib/log.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { BINARY_NAME, DESCRIPTION, projectVersion, USER_SETTINGS } from "./settings.ts";

/** The manifest version of @anthropic-ai/mcpb 2.1.2's newest schema. */
export const MANIFEST_VERSION = "0.4";
/** The platforms a bundle can name (mcpb `compatibility.platforms`). */
export const PLATFORMS = ["darwin", "linux", "win32"] as const;
/** One of {@link PLATFORMS}. */
export type Platform = typeof PLATFORMS[number];

/** A tool as the manifest lists it. */
export interface ManifestTool {
  name: string;
  description?: string;
}

/** The tools a client sees in `tools/list` of a server with every group on. */
export async function liveTools(): Promise<ManifestTool[]> {
  const server = createServer({
    store: new MemoryStore(),
    log: createLogger({ level: "error" }),
    features: [PLAN_VIEW],
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "checklist-mcp-manifest", version: "0.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    return tools.map((
      { name, description },
    ) => (description === undefined ? { name } : { name, description }));
  } finally {
    await client.close();
    await server.close();
  }
}

/** Where a bundle holds the binary, relative to the bundle's root. */
export function entryPoint(platform?: Platform): string {
  return `server/${BINARY_NAME}${platform === "win32" ? ".exe" : ""}`;
}

/** Options of {@link buildManifest}. */
export interface ManifestOptions {
  version: string;
  tools: readonly ManifestTool[];
  /** One platform's bundle; all platforms (with a Windows override) when absent. */
  platform?: Platform;
}

/** The manifest, as a plain object in the order it is written. */
export function buildManifest({ version, tools, platform }: ManifestOptions): Record<string, unknown> {
  const userConfig = Object.fromEntries(
    USER_SETTINGS.map((s) => [s.key, {
      type: s.kind,
      title: s.title,
      description: s.description,
      required: false,
      default: s.default,
      ...(s.min === undefined ? {} : { min: s.min }),
      ...(s.max === undefined ? {} : { max: s.max }),
    }]),
  );
  const env = Object.fromEntries(USER_SETTINGS.map((s) => [s.env, `\${user_config.${s.key}}`]));
  const mcpConfig: Record<string, unknown> = {
    command: `\${__dirname}/${entryPoint(platform)}`,
    args: ["--stdio"],
    env,
  };
  if (platform === undefined) {
    mcpConfig.platform_overrides = { win32: { command: `\${__dirname}/${entryPoint("win32")}` } };
  }
  return {
    manifest_version: MANIFEST_VERSION,
    name: BINARY_NAME,
    display_name: "Checklist MCP",
    version,
    description: DESCRIPTION,
    long_description:
      "A task tree per session (start descends to the first unfinished leaf, complete names " +
      "the next task and shows progress), the original Checklist MCP tools over the same tree, work " +
      "summaries to hand over between agents, and a progress document per project. Data stays in memory " +
      "unless a task file or a Deno KV path is set. It speaks MCP 2026-07-28 and the handshake era " +
      "(2024-11-05 to 2025-11-25) on the same connection: each client gets the era its first message opens.",
    author: { name: "checklist-mcp contributors" },
    keywords: ["tasks", "planning", "checklist", "handoff", "agents"],
    server: { type: "binary", entry_point: entryPoint(platform), mcp_config: mcpConfig },
    tools: tools.map((t) => ({ ...t })),
    tools_generated: false,
    compatibility: { platforms: platform === undefined ? [...PLATFORMS] : [platform] },
    user_config: userConfig,
  };
}

/** The text of a manifest file: two-space JSON and a final newline (what `deno fmt` keeps). */
export function manifestText(manifest: Record<string, unknown>): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

if (import.meta.main) {
  const args = Deno.args;
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  const platform = value("--platform");
  if (platform !== undefined && !(PLATFORMS as readonly string[]).includes(platform)) {
    console.error(`--platform must be one of ${PLATFORMS.join(", ")}, not ${JSON.stringify(platform)}`);
    Deno.exit(1);
  }
  const out = value("--out") ?? new URL("../../manifest.json", import.meta.url);
  const manifest = buildManifest({
    version: await projectVersion(),
    tools: await liveTools(),
    platform: platform as Platform | undefined,
  });
  await Deno.writeTextFile(out, manifestText(manifest));
  console.error(`wrote ${out instanceof URL ? "manifest.json" : out}`);
}
