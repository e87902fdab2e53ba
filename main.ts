/**
 * The one entry: `deno run main.ts` serves HTTP, `deno run main.ts --stdio` serves stdio, and the
 * default export `{ fetch }` serves `deno serve main.ts` and Deno Deploy.
 */
import { type Config, loadConfig } from "./lib/config.ts";
import { createLogger, type Logger } from "./lib/log.ts";
import { createServer } from "./lib/mcp/server.ts";
import { openStore } from "./lib/store/open_store.ts";
import type { Store } from "./lib/store/store.ts";

interface Runtime {
  config: Config;
  log: Logger;
  store: Store;
}

async function boot(args: readonly string[]): Promise<Runtime> {
  const config = loadConfig(Deno.env.toObject(), args);
  const log = createLogger({ level: config.logLevel });
  const store = await openStore(config, log);
  return { config, log, store };
}

function serverFactory({ config, log, store }: Runtime) {
  return () => createServer({ store, log, groups: config.groups, workCacheSize: config.workCacheSize });
}

async function serveStdio(runtime: Runtime): Promise<void> {
  const { StdioServerTransport } = await import("./lib/mcp/sdk.ts");
  const server = serverFactory(runtime)();
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  runtime.log.info("serving stdio", { store: runtime.store.kind });
  await closed;
  await runtime.store.close();
}

async function serveHttp(runtime: Runtime): Promise<void> {
  const { createApp } = await import("./lib/http/app.ts");
  const { config, log } = runtime;
  const { app, close } = createApp({ ...runtime, makeServer: serverFactory(runtime) });
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    onListen: ({ hostname, port }) =>
      log.info("serving http", { url: `http://${hostname}:${port}/mcp`, store: runtime.store.kind }),
  }, app.fetch);
  const stop = async () => {
    await close();
    await server.shutdown();
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await server.finished;
  await runtime.store.close();
}

/** Starts the server the arguments and environment ask for; exits 1 with a clear message on a bad start. */
export async function main(args: readonly string[]): Promise<void> {
  let runtime: Runtime;
  try {
    runtime = await boot(args);
  } catch (error) {
    createLogger().error("cannot start", { error: (error as Error).message });
    Deno.exit(1);
  }
  if (runtime.config.transport === "stdio") await serveStdio(runtime);
  else await serveHttp(runtime);
}

let app: Promise<(request: Request) => Response | Promise<Response>> | undefined;

/** For `deno serve main.ts` and Deno Deploy: the HTTP app, built on the first request. */
export default {
  fetch(request: Request): Promise<Response> {
    app ??= boot([]).then(async (runtime) => {
      const { createApp } = await import("./lib/http/app.ts");
      return createApp({ ...runtime, makeServer: serverFactory(runtime) }).app.fetch;
    });
    return app.then((fetch) => fetch(request));
  },
} satisfies Deno.ServeDefaultExport;

if (import.meta.main) await main(Deno.args);
