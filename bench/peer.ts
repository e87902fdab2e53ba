/**
 * The comparison server: `task-orchestrator-mcp` 1.1.0 (a Node server) over stdio, installed into
 * `.bench/` (gitignored) with npm on first use.
 */
import { serverEnv } from "../tests/support/env.ts";
import { ROOT } from "../tests/support/paths.ts";
import type { ServerCommand } from "./commands.ts";

/** Where the npm comparison server is installed, and the benchmarks' scratch space (gitignored). */
export const BENCH_DIR: string = `${ROOT}/.bench`;

const ORCHESTRATOR = "task-orchestrator-mcp";
const ORCHESTRATOR_VERSION = "1.1.0";

/**
 * `task-orchestrator-mcp` 1.1.0 over stdio; installed into `.bench/` with npm on first use. Runs in
 * a scratch directory so it writes nothing into the project.
 */
export async function orchestratorStdio(note: (line: string) => void): Promise<ServerCommand> {
  const pkgDir = `${BENCH_DIR}/node_modules/${ORCHESTRATOR}`;
  const pkgJson = `${pkgDir}/package.json`;
  const installed = await Deno.readTextFile(pkgJson).then((t) => JSON.parse(t).version).catch(() =>
    undefined
  );
  if (installed !== ORCHESTRATOR_VERSION) {
    note(`installing ${ORCHESTRATOR}@${ORCHESTRATOR_VERSION} into .bench/ with npm`);
    await Deno.mkdir(BENCH_DIR, { recursive: true });
    const result = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        BENCH_DIR,
        "--no-audit",
        "--no-fund",
        `${ORCHESTRATOR}@${ORCHESTRATOR_VERSION}`,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!result.success) throw new Error(`npm install failed: ${new TextDecoder().decode(result.stderr)}`);
  }
  const pkg = JSON.parse(await Deno.readTextFile(pkgJson)) as { bin: string | Record<string, string> };
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin[ORCHESTRATOR] ?? Object.values(pkg.bin)[0]!;
  const scratch = await Deno.makeTempDir({ prefix: "bench-orchestrator-" });
  return {
    label: `${ORCHESTRATOR} ${ORCHESTRATOR_VERSION}`,
    command: "node",
    args: [`${pkgDir}/${bin}`],
    cwd: scratch,
    env: serverEnv(),
  };
}
