/**
 * `deno task export [--out FILE] [--namespace NAME] [--format tasks]` prints the configured store
 * (FILE_PATH or KV_PATH, or the `--file` / `--kv` flags) as one JSON document: every namespace, or
 * NAME alone; `--format tasks` prints the `"default"` session (of NAME, else of namespace `default`)
 * as a bare array of tasks instead (task-orchestrator's file format).
 * `deno task import FILE [--replace] [--namespace NAME]` loads either (with NAME: into that namespace
 * only). Logs and errors go to stderr; the exit code is 1 on any error, and an import then changed
 * nothing.
 */
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/log.ts";
import { openStore } from "../lib/store/open_store.ts";
import { exportStore, exportTasks, importStore } from "../lib/store/transfer.ts";

const USAGE =
  "usage: transfer.ts export [--out FILE] [--namespace NAME] [--format store|tasks] | import FILE [--replace] [--namespace NAME]   (store from FILE_PATH or KV_PATH)";

async function run(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const config = loadConfig(Deno.env.toObject(), rest);
  if (!config.filePath && !config.kvPath && Deno.env.get("DENO_DEPLOYMENT_ID") === undefined) {
    throw new Error(
      "Set FILE_PATH or KV_PATH (or pass --file / --kv): the memory store has nothing to move.",
    );
  }
  const log = createLogger({ level: config.logLevel === "info" ? "warn" : config.logLevel });
  // Only the flag chooses one namespace: CHECKLIST_NAMESPACE is the stdio server's, not a filter here.
  const namespace = valueOf(rest, "--namespace") === undefined ? undefined : config.namespace;
  const where = namespace === undefined ? "" : ` namespace "${namespace}" of`;
  if (command === "export") {
    const out = valueOf(rest, "--out");
    const format = valueOf(rest, "--format") ?? "store";
    if (format !== "store" && format !== "tasks") throw new Error(USAGE);
    const store = await openStore(config, log);
    try {
      const text = format === "tasks"
        ? await exportTasks(store, { namespace })
        : await exportStore(store, { namespace });
      if (out) await Deno.writeTextFile(out, text);
      else await Deno.stdout.write(new TextEncoder().encode(text));
    } finally {
      await store.close();
    }
    return;
  }
  if (command === "import") {
    const file = rest.find((a, i) =>
      !a.startsWith("--") &&
      !["--file", "--kv", "--out", "--namespace", "--format"].includes(rest[i - 1] ?? "")
    );
    if (!file) throw new Error(USAGE);
    const text = await Deno.readTextFile(file);
    const store = await openStore(config, log);
    try {
      const { counts, repairs, namespaces } = await importStore(store, text, {
        replace: rest.includes("--replace"),
        namespace,
      });
      for (const repair of repairs) console.error(`repaired: ${repair}`);
      const across = namespace === undefined && namespaces.length > 1
        ? ` in ${namespaces.length} namespaces`
        : "";
      console.error(
        `Imported ${counts.sessions} sessions (${counts.tasks} tasks), ${counts.works} work entries and ${counts.progress} progress documents${across} into the${where} ${store.kind} store.`,
      );
    } finally {
      await store.close();
    }
    return;
  }
  throw new Error(USAGE);
}

function valueOf(args: string[], flag: string): string | undefined {
  const i = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (i < 0) return undefined;
  return args[i]!.includes("=") ? args[i]!.split("=", 2)[1] : args[i + 1];
}

if (import.meta.main) {
  try {
    await run(Deno.args);
  } catch (error) {
    console.error(
      `${(error as Error).name === "DomainError" ? "refused" : "error"}: ${(error as Error).message}`,
    );
    Deno.exit(1);
  }
}
