/**
 * `deno task server-json --assets DIR [--repository OWNER/NAME] [--tag vX.Y.Z] [--remote-url URL]
 * [--out PATH]` writes the MCP Registry entry (`server.json`, schema 2025-09-29) of a release: one
 * `mcpb` package per `.mcpb` file in DIR, each with its GitHub release download URL and the SHA-256
 * of the file, plus a hosted `streamable-http` remote. The repository defaults to `GITHUB_REPOSITORY`
 * (set in GitHub Actions), else `checklist-mcp/checklist-mcp`; the registry name is
 * `io.github.<owner>/checklist-mcp`. The tag defaults to `v` + deno.json's version and must equal it.
 * The remote URL defaults to `MCP_REMOTE_URL`, else an example Deno Deploy address. `--schema URL`
 * (or `MCP_SERVER_SCHEMA`) names another dated schema of the registry, for when the registry stops
 * accepting this one: the fields written are valid in the later schemas too. `--out` defaults to
 * `server.json` in the current directory. Exit 1 with the reason, writing nothing, on a bad
 * argument or an assets folder without bundles.
 */
import { toHex } from "../../lib/auth/credential.ts";
import { BINARY_NAME, DESCRIPTION, projectVersion, USER_SETTINGS } from "./settings.ts";
import { tagMismatch } from "./version.ts";

/** The registry schema this file follows unless told otherwise. */
export const SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json";
/** The repository when neither `--repository` nor `GITHUB_REPOSITORY` names one. */
export const DEFAULT_REPOSITORY = "checklist-mcp/checklist-mcp";
/** The remote when neither `--remote-url` nor `MCP_REMOTE_URL` names one: an example address. */
export const DEFAULT_REMOTE_URL = "https://checklist-mcp.deno.dev/mcp";

/** Options of {@link buildServerJson}. */
export interface ServerJsonOptions {
  /** The folder of release assets; every `*.mcpb` in it becomes a package. */
  assets: string;
  /** `owner/name` of the GitHub repository that holds the release. */
  repository: string;
  tag: string;
  version: string;
  remoteUrl: string;
  /** The `$schema` URL; {@link SERVER_SCHEMA} when absent. */
  schema?: string;
}

/** The SHA-256 of a file, as 64 lowercase hex digits. */
export async function fileSha256(path: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(path))));
}

/** The registry entry of one release; throws with the reason on a bad argument or no bundles. */
export async function buildServerJson(options: ServerJsonOptions): Promise<Record<string, unknown>> {
  const { repository, tag, version } = options;
  if (!/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/.test(repository)) {
    throw new Error(`repository must be OWNER/NAME, not ${JSON.stringify(repository)}`);
  }
  const problem = tagMismatch(tag, version);
  if (problem) throw new Error(problem);
  if (!/^https:\/\/[^\s/]+\/\S*$/.test(options.remoteUrl)) {
    throw new Error(`remote URL must be an https URL, not ${JSON.stringify(options.remoteUrl)}`);
  }
  const schema = options.schema ?? SERVER_SCHEMA;
  if (
    !/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/\d{4}-\d{2}-\d{2}\/server\.schema\.json$/.test(
      schema,
    )
  ) {
    throw new Error(`schema must be a dated registry schema URL, not ${JSON.stringify(schema)}`);
  }
  const owner = repository.split("/")[0]!;
  const files: string[] = [];
  for await (const entry of Deno.readDir(options.assets)) {
    if (entry.isFile && entry.name.endsWith(".mcpb")) files.push(entry.name);
  }
  if (files.length === 0) throw new Error(`no .mcpb file in ${options.assets}`);
  files.sort();
  const environmentVariables = USER_SETTINGS.map((s) => ({
    name: s.env,
    description: s.description,
    isRequired: false,
    format: s.kind,
    ...(s.default === "" ? {} : { default: String(s.default) }),
  }));
  const packages = [];
  for (const file of files) {
    packages.push({
      registryType: "mcpb",
      identifier: `https://github.com/${repository}/releases/download/${encodeURIComponent(tag)}/${
        encodeURIComponent(file)
      }`,
      version,
      fileSha256: await fileSha256(`${options.assets}/${file}`),
      transport: { type: "stdio" },
      environmentVariables,
    });
  }
  return {
    $schema: schema,
    name: `io.github.${owner}/${BINARY_NAME}`,
    description: DESCRIPTION,
    repository: { url: `https://github.com/${repository}`, source: "github" },
    version,
    websiteUrl: `https://github.com/${repository}#install`,
    packages,
    remotes: [{
      type: "streamable-http",
      url: options.remoteUrl,
      headers: [{
        name: "Authorization",
        description: "Bearer token of the hosted server (its AUTH_TOKEN, or a token from its tokens file)",
        isRequired: true,
        isSecret: true,
        value: "Bearer {token}",
        variables: { token: { description: "The access token", isRequired: true, isSecret: true } },
      }],
    }],
  };
}

if (import.meta.main) {
  const args = Deno.args;
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  try {
    const assets = value("--assets");
    if (!assets) {
      throw new Error("usage: deno task server-json --assets DIR [--repository OWNER/NAME] [--tag vX.Y.Z]");
    }
    const version = await projectVersion();
    const entry = await buildServerJson({
      assets,
      version,
      repository: value("--repository") || Deno.env.get("GITHUB_REPOSITORY") || DEFAULT_REPOSITORY,
      tag: (value("--tag") ?? `v${version}`).replace(/^refs\/tags\//, ""),
      remoteUrl: value("--remote-url") || Deno.env.get("MCP_REMOTE_URL") || DEFAULT_REMOTE_URL,
      schema: value("--schema") || Deno.env.get("MCP_SERVER_SCHEMA") || undefined,
    });
    const out = value("--out") ?? "server.json";
    await Deno.writeTextFile(out, `${JSON.stringify(entry, null, 2)}\n`);
    console.error(`wrote ${out}: ${entry.name} ${version}, ${(entry.packages as unknown[]).length} bundles`);
  } catch (error) {
    console.error(`server-json: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
