/**
 * The dashboard's routes (docs/dashboard.md), all read-only:
 *
 * | route | answers |
 * | --- | --- |
 * | `GET /` | the page (`?session=ID`, `?ns=NAME`, `?after=ID`: the window of sessions after ID; `?token=` is a share link) |
 * | `GET /api/view` | the page's data as JSON (same query, plus `open=id,id` for unfolded tasks) |
 * | `GET /api/children` | a folded part: `ns`, `session`, `parent` (absent: roots), `offset`, `count` |
 *
 * | `GET /events` | server-sent events: `change` after every change to the namespace `ns` |
 * | `GET /assets/…` | the script, the styles and the icon |
 *
 * `ns` names the namespace (docs/namespaces.md); without it a page, request or stream works in the
 * credential's own namespace, as `/mcp` does. A namespace the credential may not see is answered as
 * unknown (`404` on the JSON routes and the events), so its name is never confirmed.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { Authenticator } from "../../auth/authenticator.ts";
import type { Credential } from "../../auth/credential.ts";
import { tenantShare } from "../../auth/fair_share.ts";
import { StreamShares } from "../../auth/stream_shares.ts";
import type { Logger } from "../../log.ts";
import { MAX_OPEN, PAGE_ROWS } from "../../render/fold.ts";
import { type CredentialVariables, requireDashboardCredential } from "./require_dashboard_credential.ts";
import { DASHBOARD_JS } from "../assets/dashboard_js.ts";
import { DASHBOARD_CSS, DASHBOARD_ICON } from "../assets/dashboard_css.ts";
import type { Store } from "../../store/store.ts";
import { DashboardData, type PageQuery } from "./data.ts";
import { EventHub } from "./events.ts";
import { type AssetPaths, renderPage } from "./dashboard_page.ts";
import { securityHeaders } from "./security.ts";
import { DEFAULTS } from "../../config.ts";

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** The store; the page shows the namespaces of it that the credential may see. */
  store: Store;
  log: Logger;
  /** Access control; undefined when it is off (then the Host/Origin guard keeps the dashboard local). */
  access?: Authenticator;
  /** Watch the store (its `watch`) for live updates on the event streams; off: the streams only beat. */
  live?: boolean;
  /**
   * Where the event streams take their places, shared with MCP's listen streams
   * (lib/auth/stream_shares.ts); by default the dashboard's own, of {@link DEFAULTS}.maxEventStreams
   * with a fair share per credential when access control is on.
   */
  shares?: StreamShares;
  /** Milliseconds between event-stream heartbeats (default {@link DEFAULTS}.heartbeatMs). */
  heartbeatMs?: number;
  /** Called after an event stream has opened (the revocation watch starts looking). */
  onOpen?: () => void;
  /** Runs before anything else on every dashboard route (the app's Host/Origin guard). */
  guard?: MiddlewareHandler;
}

/** The dashboard as the app mounts it (at `/`). */
export interface Dashboard {
  app: Hono<{ Variables: CredentialVariables }>;
  /** Whether an event stream is open (what revocation watches). */
  active(): boolean;
  /** Ends the event streams of every credential `refused` names; returns how many. */
  endWhere(refused: (credential: Credential) => boolean): number;
  /** Ends every event stream. */
  close(): void;
}

/** The dashboard's routes on their paths. */
const PATHS = ["/", "/api/*", "/events", "/assets/*"];

/** The dashboard app, with the event streams it serves. */
export function createDashboard(options: DashboardOptions): Dashboard {
  const data = new DashboardData(options.store, options.log);
  const unknownNamespace = { error: { code: "NOT_FOUND", message: "No such namespace" } } as const;
  const max = DEFAULTS.maxEventStreams;
  const hub = new EventHub({
    feed: options.live ? (onChange) => options.store.watch(onChange) : undefined,
    log: options.log,
    shares: options.shares ??
      new StreamShares({ max, share: tenantShare(max, options.access !== undefined), log: options.log }),
    heartbeatMs: options.heartbeatMs,
    version: (namespace) => options.store.space(namespace).version(),
  });
  const app = new Hono<{ Variables: CredentialVariables }>();
  const assets = assetPaths();

  if (options.guard) { for (const path of PATHS) app.use(path, options.guard); }
  for (const path of PATHS) app.use(path, securityHeaders());
  app.get(assets.script, (c) => asset(c.body(DASHBOARD_JS), "text/javascript; charset=utf-8"));
  app.get(assets.styles, (c) => asset(c.body(DASHBOARD_CSS), "text/css; charset=utf-8"));
  app.get(assets.icon, (c) => asset(c.body(DASHBOARD_ICON), "image/svg+xml"));

  app.use("/", requireDashboardCredential(options.access, options.log));
  app.use("/api/*", requireDashboardCredential(options.access, options.log));
  app.use("/events", requireDashboardCredential(options.access, options.log));

  app.get("/", async (c) => {
    const credential = c.get("credential");
    const query = pageQuery(new URL(c.req.url), credential);
    const hidden = !data.allows(credential, query.namespace!);
    // A namespace it may not see: the page of those it may, with no session chosen.
    const view = hidden
      ? { ...await data.page(credential, { open: [] }), session: null }
      : await data.page(credential, query);
    const notice = hidden
      ? "No such namespace here."
      : query.session !== undefined && !view.session
      ? `No session "${query.session}" here.`
      : undefined;
    c.header("Cache-Control", "no-store");
    return c.html(await renderPage(view, assets, notice));
  });

  app.get("/api/view", async (c) => {
    c.header("Cache-Control", "no-store");
    const query = pageQuery(new URL(c.req.url), c.get("credential"));
    if (!data.allows(c.get("credential"), query.namespace!)) {
      return c.json(unknownNamespace, 404);
    }
    return c.json(await data.page(c.get("credential"), query));
  });

  app.get("/api/children", async (c) => {
    const url = new URL(c.req.url);
    const session = url.searchParams.get("session");
    const offset = Number(url.searchParams.get("offset") ?? "0");
    const count = Number(url.searchParams.get("count") ?? String(PAGE_ROWS));
    if (
      !session || !Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(count) || count < 0
    ) {
      return c.json(
        { error: { code: "INVALID_INPUT", message: "session, offset and count are required" } },
        400,
      );
    }
    const parent = url.searchParams.get("parent");
    const namespace = url.searchParams.get("ns") || c.get("credential").own;
    if (!data.allows(c.get("credential"), namespace)) return c.json(unknownNamespace, 404);
    const view = await data.children(c.get("credential"), {
      namespace,
      session,
      parentId: parent === null || parent === "" ? undefined : parent,
      offset,
      count,
    });
    c.header("Cache-Control", "no-store");
    if (!view) return c.json({ error: { code: "NOT_FOUND", message: "No such session or task" } }, 404);
    return c.json(view);
  });

  app.get("/events", (c) => {
    const credential = c.get("credential");
    const namespace = new URL(c.req.url).searchParams.get("ns") || credential.own;
    if (!data.allows(credential, namespace)) {
      c.header("Cache-Control", "no-store");
      return c.json(unknownNamespace, 404);
    }
    const response = hub.open(c, { credential, namespace });
    if (response.status === 200) options.onOpen?.();
    return response;
  });

  return {
    app,
    active: () => hub.size > 0,
    endWhere: (refused) => hub.endWhere(refused),
    close: () => hub.close(),
  };
}

function asset(response: Response, type: string): Response {
  response.headers.set("Content-Type", type);
  response.headers.set("Cache-Control", "public, max-age=31536000, immutable");
  return response;
}

/** The page's query; without `ns`, the credential's own namespace. */
function pageQuery(url: URL, credential: Credential): PageQuery {
  const params = url.searchParams;
  const open = (params.get("open") ?? "").split(",").filter(Boolean).slice(0, MAX_OPEN);
  const query: PageQuery = { open, namespace: params.get("ns") || credential.own };
  const session = params.get("session");
  if (session) query.session = session;
  const after = params.get("after");
  if (after) query.after = after;
  return query;
}

/** Asset routes named by a hash of their content (cached for good, never stale after an upgrade). */
function assetPaths(): AssetPaths {
  const v = hash(DASHBOARD_JS + DASHBOARD_CSS + DASHBOARD_ICON);
  return {
    script: `/assets/dashboard.${v}.js`,
    styles: `/assets/dashboard.${v}.css`,
    icon: `/assets/icon.${v}.svg`,
  };
}

/** FNV-1a of `text`, 8 hex digits. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
