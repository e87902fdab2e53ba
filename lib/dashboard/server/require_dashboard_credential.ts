/**
 * Access to the dashboard (docs/dashboard.md): with access control on, every page, JSON and event
 * request needs a credential, checked by the same authenticator as `/mcp` (lib/auth), sent as
 * `Authorization: Bearer <token>` or as the cookie a share link sets. A share link `/?token=<token>`
 * checks the token, sets it as an `HttpOnly; SameSite=Strict` cookie (`Secure` over https) and
 * redirects to the same address without it, so the token leaves the address bar and the history.
 * The cookie is checked again on every request, so a token removed from the tokens file stops
 * working at once. Without access control nothing is checked here: the Host/Origin guard keeps the
 * dashboard to loopback, as it does `/mcp`.
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { Authenticator, AuthOutcome } from "../../auth/authenticator.ts";
import { type Credential, LOCAL_CREDENTIAL } from "../../auth/credential.ts";
import type { Logger } from "../../log.ts";

/** The cookie a share link sets. */
export const TOKEN_COOKIE = "checklist_token";
/** How long the share-link cookie lives (seconds): one week. */
export const COOKIE_MAX_AGE = 7 * 24 * 3600;

/** Hono variables set by {@link requireDashboardCredential}. */
export interface CredentialVariables {
  credential: Credential;
}

/** Whether the request came over https (directly, or through a proxy that says so). */
function overHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
}

/**
 * Middleware: sets `credential`, or answers 401 (and handles share links on `GET /`). `auth`
 * undefined means access control is off.
 */
export function requireDashboardCredential(
  auth: Authenticator | undefined,
  log: Logger,
): MiddlewareHandler<{ Variables: CredentialVariables }> {
  return async (c, next) => {
    if (!auth) {
      c.set("credential", LOCAL_CREDENTIAL);
      return await next();
    }
    const url = new URL(c.req.url);
    const shared = url.searchParams.get("token");
    if (shared !== null && c.req.method === "GET" && c.req.path === "/") {
      const outcome: AuthOutcome = shared === ""
        ? { ok: false, error: "invalid_token", message: "the share link has no token" }
        : await auth.authenticateToken(shared);
      if (!outcome.ok) return refuse(c, auth, outcome);
      setCookie(c, TOKEN_COOKIE, shared, {
        httpOnly: true,
        sameSite: "Strict",
        secure: overHttps(c),
        path: "/",
        maxAge: COOKIE_MAX_AGE,
      });
      url.searchParams.delete("token");
      log.info("share link used", { credential: outcome.credential.name });
      c.header("Cache-Control", "no-store");
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    const header = c.req.header("authorization");
    const cookie = getCookie(c, TOKEN_COOKIE);
    let outcome: AuthOutcome;
    if (header !== undefined) outcome = await auth.authenticate(c.req.raw);
    else if (cookie !== undefined) outcome = await auth.authenticateToken(cookie);
    else outcome = { ok: false, error: "missing", message: "no credential" };
    if (!outcome.ok) return refuse(c, auth, outcome);
    c.set("credential", outcome.credential);
    return await next();
  };
}

function refuse(c: Context, auth: Authenticator, outcome: Exclude<AuthOutcome, { ok: true }>): Response {
  auth.logRefusal(c.req.raw, outcome);
  c.header("Cache-Control", "no-store");
  if (outcome.error === "unavailable") {
    return c.json({
      error: {
        code: "UNAVAILABLE",
        message: `Service unavailable: ${outcome.reply ?? "the authorization server cannot be reached"}.`,
      },
    }, 503);
  }
  c.header("WWW-Authenticate", auth.challenge(c.req.raw, outcome));
  const message =
    "Unauthorized: open the share link you were given, or send 'Authorization: Bearer <token>'.";
  if (c.req.path === "/") return c.text(message, 401);
  return c.json({ error: { code: "UNAUTHORIZED", message } }, 401);
}
