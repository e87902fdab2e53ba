/**
 * Access to the dashboard (README "Dashboard"): with access control on, every page, JSON and event
 * request needs a credential, sent as `Authorization: Bearer <token>` or as the cookie a share link
 * sets. A share link `/?token=<token>` checks the token, sets it as an `HttpOnly; SameSite=Strict`
 * cookie (`Secure` over https) and redirects to the same address without it, so the token leaves
 * the address bar and the history. Without access control nothing is checked here: the Host/Origin
 * guard keeps the dashboard to loopback, as it does `/mcp`.
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { Logger } from "../log.ts";
import { bearerToken, type Credential, type CredentialCheck } from "./credential.ts";

/** The cookie a share link sets. */
export const TOKEN_COOKIE = "checklist_token";
/** How long the share-link cookie lives (seconds): one week. */
export const COOKIE_MAX_AGE = 7 * 24 * 3600;

/** The credential everything is allowed under when access control is off. */
export const OPEN_ACCESS: Credential = { name: "local", namespaces: "*", own: "default", access: "read" };

/** Hono variables set by {@link dashboardAccess}. */
export interface AccessVariables {
  credential: Credential;
}

/** A request with only the given bearer token, for the credential check. */
function withBearer(request: Request, token: string): Request {
  return new Request(request.url, { headers: { authorization: `Bearer ${token}` } });
}

/** Whether the request came over https (directly, or through a proxy that says so). */
function overHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
}

/**
 * Middleware: sets `credential`, or answers 401 (and handles share links on `GET /`). `check`
 * undefined means access control is off.
 */
export function dashboardAccess(
  check: CredentialCheck | undefined,
  log: Logger,
): MiddlewareHandler<{ Variables: AccessVariables }> {
  return async (c, next) => {
    if (!check) {
      c.set("credential", OPEN_ACCESS);
      return await next();
    }
    const url = new URL(c.req.url);
    const shared = url.searchParams.get("token");
    if (shared !== null && c.req.method === "GET" && c.req.path === "/") {
      const credential = shared === "" ? undefined : await check(withBearer(c.req.raw, shared));
      if (!credential) return refuse(c, log, true);
      setCookie(c, TOKEN_COOKIE, shared, {
        httpOnly: true,
        sameSite: "Strict",
        secure: overHttps(c),
        path: "/",
        maxAge: COOKIE_MAX_AGE,
      });
      url.searchParams.delete("token");
      log.info("share link used", { token: credential.name });
      c.header("Cache-Control", "no-store");
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    const header = c.req.header("authorization");
    const token = bearerToken(header) ?? getCookie(c, TOKEN_COOKIE);
    const credential = token === undefined ? undefined : await check(withBearer(c.req.raw, token));
    if (!credential) return refuse(c, log, token !== undefined || header !== undefined);
    c.set("credential", credential);
    return await next();
  };
}

function refuse(c: Context, log: Logger, presented: boolean): Response {
  log.warn("refused dashboard request: bad or missing credential", { path: c.req.path, presented });
  c.header(
    "WWW-Authenticate",
    presented ? 'Bearer realm="checklist-mcp", error="invalid_token"' : 'Bearer realm="checklist-mcp"',
  );
  c.header("Cache-Control", "no-store");
  const message =
    "Unauthorized: open the share link you were given, or send 'Authorization: Bearer <token>'.";
  if (c.req.path === "/") return c.text(message, 401);
  return c.json({ error: { code: "UNAUTHORIZED", message } }, 401);
}
