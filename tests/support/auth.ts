/**
 * Helpers of the access tests: a tokens file in a temporary directory, an app with an authenticator
 * that records which namespace and access each MCP server was made for, the app served on a real
 * loopback port, and MCP calls with a bearer token.
 */
import { type AccessSettings, Authenticator } from "../../lib/auth/authenticator.ts";
import type { OAuthOptions } from "../../lib/auth/oauth.ts";
import { RECHECK_MS, type TokenEntry } from "../../lib/auth/tokens_file.ts";
import { sleep } from "./time.ts";
import { createApp, type HttpConfig } from "../../lib/http/app.ts";
import type { Logger } from "../../lib/log.ts";
import { createServer, type ServerScope } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { connectHttp, ENDPOINT, viaApp } from "./http.ts";
import { loopbackOrigins } from "../../lib/http/guards.ts";
import { freePort } from "./processes.ts";
import { quietLogger } from "./logs.ts";
import type { Hono } from "hono";

/**
 * A tokens file in a fresh temporary directory; `write` replaces its entries and returns once a
 * server would have noticed (the file is checked at most every `RECHECK_MS`).
 */
export interface TokensFileHandle extends AsyncDisposable {
  path: string;
  write(entries: readonly TokenEntry[] | string): Promise<void>;
}

/** Writes `entries` to a new tokens file. */
export async function tokensFile(entries: readonly TokenEntry[] | string): Promise<TokensFileHandle> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-tokens-" });
  const path = `${dir}/tokens.json`;
  const write = (next: readonly TokenEntry[] | string) =>
    Deno.writeTextFile(path, typeof next === "string" ? next : JSON.stringify(next, null, 2));
  await write(entries);
  return {
    path,
    write: async (next) => {
      await write(next);
      await sleep(RECHECK_MS + 20);
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** The hex SHA-256 of a secret, as the tokens file writes it after `sha256:` (WebCrypto, not our code). */
export async function sha256Hex(secret: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** An app with access control, and the scopes its MCP servers were made for. */
export interface AccessApp extends AsyncDisposable {
  app: Hono;
  store: Store;
  auth: Authenticator;
  /** One entry per MCP server made: its namespace and access. */
  scopes: ServerScope[];
  close(): Promise<void>;
}

/**
 * An app over a memory store with the authenticator `settings` describe. With OAuth and neither
 * `publicUrl` nor `oauthAudience`, its audience is fixed as main.ts fixes it on loopback, here for
 * the in-process endpoint's port ({@link ENDPOINT}); {@link servedAccessApp} serves one on a real port.
 */
export async function accessApp(
  settings: AccessSettings,
  options: {
    log?: Logger;
    tuning?: Pick<OAuthOptions, "jwksCooldownMs" | "clockToleranceSec">;
    store?: Store;
    stateless?: boolean;
    /** More of the HTTP configuration (`maxConnections`, …). */
    config?: HttpConfig;
    /** The dashboard's event streams: their cap and heartbeat. */
    events?: { maxStreams?: number; heartbeatMs?: number };
  } = {},
): Promise<AccessApp> {
  const log = options.log ?? quietLogger();
  const local = loopbackOrigins("127.0.0.1", Number(new URL(ENDPOINT).port));
  const auth = await Authenticator.fromSettings({ localOrigins: local, ...settings }, log, options.tuning);
  if (!auth) throw new Error("accessApp needs an access setting");
  const store = options.store ?? new MemoryStore();
  const scopes: ServerScope[] = [];
  const { app, close } = createApp({
    store,
    log,
    access: auth,
    config: { ...options.config, stateless: options.stateless },
    events: options.events,
    makeServer: (scope) => {
      scopes.push({ namespace: scope.namespace, access: scope.access });
      return createServer({ store, log, features: [PLAN_VIEW], ...scope });
    },
  });
  return { app, store, auth, scopes, close, [Symbol.asyncDispose]: close };
}

/** An app served on a loopback port, reached at `url`. */
export interface Served extends AsyncDisposable {
  url: string;
}

/**
 * {@link accessApp} served on a free port of 127.0.0.1 (for clients that must reach it and an issuer
 * alike). With OAuth, its audience is fixed from that port as main.ts fixes it from `HOST` and `PORT`.
 */
export async function servedAccessApp(
  settings: AccessSettings,
  options: Parameters<typeof accessApp>[1] = {},
): Promise<AccessApp & Served> {
  const port = freePort();
  const app = await accessApp({ localOrigins: loopbackOrigins("127.0.0.1", port), ...settings }, options);
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, app.app.fetch);
  // As main.ts stops: the app ends its MCP connections (their event streams), then the listener
  // stops, which waits for every open connection.
  const stop = async () => {
    await app.close();
    await server.shutdown();
  };
  return { ...app, url: `http://127.0.0.1:${port}`, close: stop, [Symbol.asyncDispose]: stop };
}

/** A real SDK client over Streamable HTTP into the app (no socket), sending `Bearer token`. */
export function connectWith(app: Hono, token: string, path = "/mcp") {
  return connectHttp(`http://127.0.0.1:8585${path}`, {
    headers: { authorization: `Bearer ${token}` },
    fetch: viaApp(app),
  });
}
