/**
 * `deno task smoke [--expect-version X] -- COMMAND [ARGS…]` starts COMMAND as an MCP server over stdio
 * (e.g. `dist/checklist-mcp --stdio`), initializes with a real SDK client, lists the tools and makes
 * one change and one read (`createTask`, then `getTask` of the id it got). It prints one line on
 * success and exits 1 with the reason otherwise. The release workflow runs it on each binary its
 * runner can execute; the tests run it on `deno run main.ts --stdio` and on the bundle.
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** What a passing smoke test saw. */
export interface SmokeReport {
  server: string;
  version: string;
  tools: number;
  taskId: string;
}

/** Options of {@link smoke}. */
export interface SmokeOptions {
  command: string;
  args: string[];
  /** The child's environment (this process's by default: the child may need Deno's cache). */
  env?: Record<string, string>;
  /** When set, the version the server must report at initialize. */
  expectVersion?: string;
  /** Gives up after this long (default 60 s: a cold binary on a busy runner). */
  timeoutMs?: number;
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Runs the smoke test against one server command; throws with the reason when it fails. */
export async function smoke(options: SmokeOptions): Promise<SmokeReport> {
  const transport = new StdioClientTransport({
    command: options.command,
    args: options.args,
    env: options.env ?? Deno.env.toObject(),
    stderr: "inherit",
  });
  const client = new Client({ name: "checklist-mcp-smoke", version: "0.0.0" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const ms = options.timeoutMs ?? 60_000;
    timer = setTimeout(() => reject(new Error(`no complete answer within ${ms} ms`)), ms);
  });
  const run = async (): Promise<SmokeReport> => {
    await client.connect(transport);
    const info = client.getServerVersion();
    check(info?.name === "checklist-mcp", `initialize: server name ${JSON.stringify(info?.name)}`);
    if (options.expectVersion !== undefined) {
      check(
        info.version === options.expectVersion,
        `initialize: version ${info.version}, expected ${options.expectVersion}`,
      );
    }
    const { tools } = await client.listTools();
    const names = new Set(tools.map((t) => t.name));
    check(names.has("createTask") && names.has("getTask"), "tools/list: createTask or getTask missing");
    const created = await client.callTool({ name: "createTask", arguments: { name: "smoke test" } });
    check(!created.isError, `createTask failed: ${JSON.stringify(created.content)}`);
    const task = (created.structuredContent as { task?: { id?: unknown } } | undefined)?.task;
    check(typeof task?.id === "string", "createTask: no task id in structuredContent");
    const read = await client.callTool({ name: "getTask", arguments: { id: task.id } });
    const name = (read.structuredContent as { task?: { name?: unknown } } | undefined)?.task?.name;
    check(!read.isError && name === "smoke test", `getTask did not return the task just created`);
    return { server: info.name, version: info.version, tools: tools.length, taskId: task.id };
  };
  try {
    return await Promise.race([run(), timeout]);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

/** Parses `[--expect-version X] [--] COMMAND [ARGS…]`. */
export function parseSmokeArgs(args: readonly string[]): SmokeOptions {
  const rest = [...args];
  let expectVersion: string | undefined;
  while (rest[0]?.startsWith("--") && rest[0] !== "--") {
    const flag = rest.shift()!;
    if (flag !== "--expect-version" || rest[0] === undefined) {
      throw new Error(`unknown or incomplete ${flag}`);
    }
    expectVersion = rest.shift();
  }
  if (rest[0] === "--") rest.shift();
  const [command, ...commandArgs] = rest;
  if (!command) throw new Error("usage: deno task smoke [--expect-version X] -- COMMAND [ARGS…]");
  return { command, args: commandArgs, expectVersion };
}

if (import.meta.main) {
  try {
    const options = parseSmokeArgs(Deno.args);
    const report = await smoke(options);
    console.log(
      `smoke ok: ${report.server} ${report.version}, ${report.tools} tools, created and read task ${report.taskId}`,
    );
  } catch (error) {
    console.error(`smoke failed: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
