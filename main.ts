/**
 * The one entry: `deno run main.ts` serves HTTP, `deno run main.ts --stdio` serves stdio, and the
 * default export `{ fetch }` serves `deno serve main.ts` and Deno Deploy. `main.ts guard …` (the
 * binary's `checklist-mcp guard`) is the commit guard, loaded only then; `deno task guard`, what a hook
 * runs at every commit, starts lib/guard/guard_main.ts itself and so skips this module's imports.
 */
import type { Authenticator } from "./lib/auth/authenticator.ts";
import { type Config, DEFAULTS, loadConfig, renamedSettings } from "./lib/config.ts";
import type { GitReader } from "./lib/git/git_recorder.ts";
import { createGitRecorder } from "./lib/git/git_recorder.ts";
import { createLogger, type Logger } from "./lib/log.ts";
import { createServer, type Era, type ServerScope } from "./lib/mcp/server.ts";
import { PLAN_VIEW } from "./lib/plan_view/server/plan_feature.ts";
import { errorReply } from "./lib/mcp/rpc_errors.ts";
import { ProtocolErrorCode } from "./lib/mcp/sdk.ts";
import { exitWith, keepServing, refuseStart } from "./lib/process_exits.ts";
import { serveOverStdio } from "./lib/mcp/stdio_serve.ts";
import { openStore } from "./lib/store/open_store.ts";
import type { Store } from "./lib/store/store.ts";

interface Runtime {
  config: Config;
  log: Logger;
  store: Store;
  /** Access control over HTTP (lib/auth); undefined when off. */
  access?: Authenticator;
}

/** Where HTTP will be reachable: the address (or a name for the place, e.g. Deno Deploy) and port. */
interface Place {
  host: string;
  port?: number;
}

/**
 * Reads the configuration, the access settings (the tokens file is read and checked here) and opens
 * the store. `listening` names where HTTP will be reachable: a non-loopback place without access
 * control is refused (guards.ts) before the store is touched, and so is OAuth without a fixed
 * audience where the place is not loopback (lib/auth/oauth.ts).
 */
async function boot(
  args: readonly string[],
  listening?: (config: Config) => Place | undefined,
): Promise<Runtime> {
  const env = Deno.env.toObject();
  const config = loadConfig(env, args);
  const log = createLogger({ level: config.logLevel });
  for (const { old, name, read } of renamedSettings(env)) {
    log.warn(
      read
        ? "a setting was read under its old name; rename it"
        : "a setting's old name is ignored: its new name is set",
      {
        setting: old,
        newName: name,
      },
    );
  }
  const where = listening?.(config);
  // Access control and the exposure guard are HTTP's alone: stdio never loads them (jose and the
  // hashes cost start-up time).
  let access: Authenticator | undefined;
  if (where !== undefined) {
    const [{ Authenticator }, { assertSafeExposure, loopbackOrigins }] = await Promise.all([
      import("./lib/auth/authenticator.ts"),
      import("./lib/http/guards.ts"),
    ]);
    access = await Authenticator.fromSettings({
      ...config,
      localOrigins: loopbackOrigins(where.host, where.port),
    }, log);
    assertSafeExposure({ ...config, authenticated: access !== undefined }, where.host);
  }
  const store = await openStore(config, log);
  return { config, log, store, access };
}

/**
 * Makes the MCP server of one connection (or one HTTP request), for the era the serving entry
 * names, working in `namespace` (`default` when absent) with `access`. Only a stdio server is given
 * `readGit` (docs/teams.md "Where the work lives"): over HTTP the server's directory is no agent's.
 */
function serverFactory({ config, log, store }: Runtime, readGit?: GitReader) {
  const features = [PLAN_VIEW];
  return (options: Partial<ServerScope> & { era: Era; sessionless?: boolean }) =>
    createServer({
      store,
      namespace: options.namespace,
      access: options.access,
      era: options.era,
      sessionless: options.sessionless,
      log,
      groups: config.groups,
      features,
      workCacheSize: config.workCacheSize,
      agent: config.agent,
      readGit,
    });
}

/**
 * Closes the store on the way out, waiting at most {@link DEFAULTS}.storeCloseMs: a store kept busy by
 * another process (a SQLite lock held) would otherwise hold the exit past its 2 s. What a store
 * leaves unreleased then, the next start reclaims; a change in flight is committed or not, never
 * half. A failure there is logged, never a reason to exit otherwise.
 */
async function closeStore({ store, log }: Runtime): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((
    resolve,
  ) => (timer = setTimeout(() => resolve("late"), DEFAULTS.storeCloseMs)));
  try {
    const closed = await Promise.race([store.close().then(() => "closed" as const), late]);
    if (closed === "late") {
      log.warn("the store did not close in time; exiting anyway (the next start reclaims what it held)", {
        waitedMs: DEFAULTS.storeCloseMs,
      });
    }
  } catch (error) {
    log.warn("closing the store failed", { error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The one clean stop: `end` stops what serves (the app's connections and streams, the listener, the
 * stdio connection), the store closes ({@link closeStore}), and the process exits 0 saying why.
 */
async function stop(
  runtime: Runtime,
  { reason, end }: { reason: string; end?: () => Promise<void> },
): Promise<never> {
  await end?.();
  await closeStore(runtime);
  exitWith(runtime.log, 0, reason);
}

/**
 * Calls `handler` on SIGINT, and on SIGTERM where the system has it (not Windows): the one place the
 * process listens for a signal to stop.
 */
function onStopSignal(handler: (signal: string) => void): void {
  Deno.addSignalListener("SIGINT", () => handler("SIGINT"));
  if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", () => handler("SIGTERM"));
}

/**
 * Serves stdio until its input ends, then stops. Both eras on one process: the SDK's entry picks one
 * from the connection's first message (lib/mcp/stdio_serve.ts).
 */
async function runStdio(runtime: Runtime): Promise<never> {
  const { config, log, store } = runtime;
  // One recorder for the process: it says once why it records nothing, if it does not.
  const make = serverFactory(runtime, createGitRecorder({ dir: config.repoDir ?? workingDirectory(), log }));
  const namespace = config.namespace;
  // A failure to read stdin ends the input like its end does: say which it was.
  let failure: Error | undefined;
  // Every line gets an answer; at the end of input the connection closes once the requests it has
  // read are answered (lib/mcp/stdio_transport.ts).
  const serving = serveOverStdio({
    makeServer: (era) => make({ era, namespace }),
    store,
    namespace,
    workCacheSize: config.workCacheSize,
    log,
    onerror: (error: Error) => {
      failure ??= error;
      log.warn("stdio transport error", { error });
    },
  });
  // A client that ends the server with a signal (as some do on quit) gets a clean stop too: the
  // store closed (bounded), the reason logged. Replies already due were written synchronously.
  onStopSignal((signal) => void stop(runtime, { reason: `${signal} asked for a clean stop` }));
  log.info("serving stdio", { store: store.kind, namespace });
  await serving.closed;
  const reason = failure ? `stdin could not be read (${failure.message})` : "stdin ended (a clean stop)";
  return await stop(runtime, { reason, end: () => serving.close() });
}

/** The HTTP app as main.ts serves it, built once per process, and how to end what it holds open. */
interface ServedApp {
  fetch: Handler;
  close: () => Promise<void>;
}

/**
 * Builds the HTTP app of `runtime` (loaded only now: stdio never loads it), reachable at `hostname`,
 * which joins the Host allow-list (`HOST` under `deno run`, the address `deno serve` listens on).
 */
async function buildApp(runtime: Runtime, hostname: string): Promise<ServedApp> {
  const { createApp } = await import("./lib/http/app.ts");
  const config = { ...runtime.config, host: hostname };
  const { app, close } = createApp({ ...runtime, config, makeServer: serverFactory(runtime) });
  return { fetch: app.fetch, close };
}

/** Serves HTTP on `HOST`:`PORT` until a signal stops it, then stops. */
async function runHttp(runtime: Runtime): Promise<never> {
  const [app, { serveHttp }, { isLoopbackAddress }, { LISTENER_OPTIONS }] = await Promise.all([
    buildApp(runtime, runtime.config.host),
    import("./lib/listener/serve.ts"),
    import("./lib/http/guards.ts"),
    import("./lib/http/listener_options.ts"),
  ]);
  const { config, log } = runtime;
  const server = await serveHttp({
    hostname: config.host,
    port: config.port,
    fetch: app.fetch,
    log,
    ...LISTENER_OPTIONS,
    onListen: ({ hostname, port }) => logListening(runtime, isLoopbackAddress(hostname), hostname, port),
  });
  onStopSignal(() =>
    void (async () => {
      await app.close();
      await server.shutdown();
    })()
  );
  await server.finished;
  return await stop(runtime, { reason: "the HTTP server stopped (a signal asked for a clean stop)" });
}

function logListening(
  { config, log, store, access }: Runtime,
  loopback: boolean,
  hostname: string,
  port?: number,
): void {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  if (!access && !loopback) {
    log.warn("serving beyond loopback without access control (ALLOW_UNAUTHENTICATED_REMOTE=1)", {
      host: hostname,
    });
  }
  log.info("serving http", {
    url: port === undefined ? hostname : `http://${host}:${port}/mcp`,
    store: store.kind,
    mode: config.stateless ? "stateless" : "stateful",
    auth: access ? access.sources.join(", ") : "none",
  });
}

/**
 * Starts the server the arguments and environment ask for, serves until a clean stop, and exits 0
 * saying why it stopped (which also skips the runtime's "did you mean deno serve?" hint). Exits 1 with
 * a clear message on a bad start. While it serves, nothing else ends it (lib/process_exits.ts).
 */
export async function main(args: readonly string[]): Promise<never> {
  let runtime: Runtime;
  try {
    runtime = await boot(
      args,
      (config) => (config.transport === "http" ? { host: config.host, port: config.port } : undefined),
    );
  } catch (error) {
    refuseStart(createLogger(), error);
  }
  keepServing(runtime.log);
  if (runtime.config.transport === "stdio") return await runStdio(runtime);
  try {
    return await runHttp(runtime);
  } catch (error) {
    await runtime.store.close();
    refuseStart(runtime.log, error);
  }
}

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * What the default export built: `declarative` is set once `deno serve` (or Deploy) drives it, so
 * `main()` must not listen too; `app` is the HTTP app, built once, and `stop` stops it once it is;
 * `refusalLogged` once a start refusal on Deploy has been logged (it is logged once, not per request).
 */
const served: {
  declarative: boolean;
  app?: Promise<Handler>;
  stop?: (reason: string) => Promise<never>;
  refusalLogged?: boolean;
} = { declarative: false };

/** Builds the HTTP app once, for the default export, reachable at `hostname` (and `port`). */
function declarativeApp(hostname: string, port?: number): Promise<Handler> {
  served.app ??= boot([], () => ({ host: hostname, port })).then(async (runtime) => {
    const { isLoopbackAddress } = await import("./lib/http/guards.ts");
    logListening(runtime, isLoopbackAddress(hostname), hostname, port);
    const app = await buildApp(runtime, hostname);
    served.stop = (reason) => stop(runtime, { reason, end: app.close });
    return app.fetch;
  });
  return served.app;
}

/** The server's working directory, or `.` where Deno may not read it (git then runs there all the same). */
function workingDirectory(): string {
  try {
    return Deno.cwd();
  } catch {
    return ".";
  }
}

function envFlag(name: string): boolean {
  try {
    return Boolean(Deno.env.get(name));
  } catch {
    return false; // no --allow-env: boot() reports that
  }
}

/**
 * For `deno serve main.ts` and Deno Deploy. `onListen` (called by `deno serve`) builds the app at
 * once and exits 1 on a bad configuration; on Deploy, where it may not be called, the first request
 * builds it, and a bad configuration answers every request 500 and logs why, once.
 */
export default {
  fetch(request: Request): Promise<Response> {
    // Built once; the environment is read only for the first request (an op per request otherwise).
    const app = served.app ??
      declarativeApp(envFlag("DENO_DEPLOYMENT_ID") ? "Deno Deploy" : "an unknown address");
    return app.then(
      (fetch) => fetch(request),
      (error) => {
        // Under deno serve, onListen has refused the start already (and exits); on Deploy, say why here.
        if (!served.declarative && !served.refusalLogged) {
          served.refusalLogged = true;
          createLogger().error("cannot start: every request is answered 500", {
            error: (error as Error)?.message ?? String(error),
          });
        }
        return Response.json(
          errorReply(ProtocolErrorCode.InternalError, "Internal error: the server could not start"),
          { status: 500 },
        );
      },
    );
  },
  onListen(addr: Deno.Addr): void {
    served.declarative = true;
    const listening = addr.transport === "tcp" || addr.transport === "udp"
      ? declarativeApp(addr.hostname, addr.port)
      : declarativeApp("localhost"); // a unix socket is local
    const log = createLogger();
    listening.then(() => keepServing(log), (error) => refuseStart(log, error));
    // deno serve shuts down gracefully on a signal and so waits for every open connection, and a
    // connected MCP client keeps one open (its SSE stream) forever: end the connections, then exit.
    onStopSignal(() => {
      const reason = "a signal asked for a clean stop";
      void (served.stop ? served.stop(reason) : exitWith(log, 0, reason));
    });
  },
} satisfies Deno.ServeDefaultExport;

// `import.meta.main` is also true under `deno serve`, which reads the default export only after this
// module has finished evaluating and calls `onListen` before any timer fires. Under `deno run`, Deno
// warns "did you mean to run deno serve?" once the main module has finished evaluating with a default
// export that has `fetch`; a module still awaiting at its top level never finishes, so it never warns.
// So: when the arguments, a compiled binary or the command line (Linux, where Deno lets us read it)
// say `deno run`, serve at once and keep the module awaiting; otherwise wait one tick and start only
// if `deno serve` has not taken over (and Deno warns). On Deploy the platform serves the default export.
if (import.meta.main && Deno.args[0] === "guard") {
  // Awaited at the top level, so Deno never suggests `deno serve` for a guard run.
  const { runGuard } = await import("./lib/guard/guard_main.ts");
  Deno.exit(await runGuard(Deno.args.slice(1)));
} else if (import.meta.main) {
  const run = Deno.args.includes("--stdio") || Deno.args.includes("--http") || Deno.build.standalone;
  const subcommand = run ? "run" : denoSubcommand();
  if (subcommand === "run") await main(Deno.args);
  else if (subcommand === undefined && !envFlag("DENO_DEPLOYMENT_ID")) {
    setTimeout(() => served.declarative || main(Deno.args), 0);
  }
}

/**
 * `run` or `serve`, as this process's command line says (`deno [flags] run …`), where it can be read
 * without asking for a permission: on Linux, with every permission (Deno guards `/proc/self`).
 */
function denoSubcommand(): "run" | "serve" | undefined {
  try {
    if (Deno.permissions.querySync({ name: "read", path: "/proc/self/cmdline" }).state !== "granted") return;
    const word = Deno.readTextFileSync("/proc/self/cmdline").split("\0").slice(1).find((w) =>
      !w.startsWith("-")
    );
    return word === "run" || word === "serve" ? word : undefined;
  } catch {
    return undefined; // not Linux, or not every permission
  }
}
