/**
 * Access to `/mcp` and `/mcp/NAME` (docs/hosting.md "Hosting for a team"): who the caller is, and which
 * namespace the request works in.
 *
 * With access control on, a request without a valid credential gets `401` with the authenticator's
 * `WWW-Authenticate` challenge (`403` for a token without a checklist scope). `/mcp` works in the
 * credential's own namespace; `/mcp/NAME` in `NAME`, which must be a valid name (else `400`) that the
 * credential may use (else `403`). Without access control every caller is the local one (the
 * Host/Origin guard keeps them on this machine): `/mcp` is `default`, `/mcp/NAME` any namespace.
 * `OPTIONS` preflights never carry credentials and are answered by the CORS middleware before this.
 */
import type { MiddlewareHandler } from "hono";
import type { Authenticator } from "../auth/authenticator.ts";
import { type Caller, LOCAL_CREDENTIAL, mayUse } from "../auth/credential.ts";
import { isNamespace, NAMESPACE_RULE } from "../domain/schemas.ts";
import type { Logger } from "../log.ts";
import { errorReply, SERVER_ERROR } from "../mcp/rpc_errors.ts";

/** Hono variables set by {@link requireMcpCredential}: who calls, and in which namespace. */
export interface CallerVariables {
  caller: Caller;
}

/** Middleware: sets `caller`, or answers 401 / 403 / 400 / 503. */
export function requireMcpCredential(
  auth: Authenticator | undefined,
  log: Logger,
): MiddlewareHandler<{ Variables: CallerVariables }> {
  return async (c, next) => {
    let credential = LOCAL_CREDENTIAL;
    if (auth) {
      const outcome = await auth.authenticate(c.req.raw);
      if (!outcome.ok) {
        auth.logRefusal(c.req.raw, outcome);
        if (outcome.error === "unavailable") {
          return c.json(
            errorReply(
              SERVER_ERROR,
              `Service Unavailable: ${outcome.reply ?? "the authorization server cannot be reached"}`,
            ),
            503,
          );
        }
        c.header("WWW-Authenticate", auth.challenge(c.req.raw, outcome));
        if (outcome.error === "insufficient_scope") {
          return c.json(errorReply(SERVER_ERROR, `Forbidden: ${outcome.message}`), 403);
        }
        return c.json(
          errorReply(
            SERVER_ERROR,
            auth.oauth
              ? "Unauthorized: sign in (OAuth) or send 'Authorization: Bearer <token>'"
              : "Unauthorized: send your token as 'Authorization: Bearer <token>'",
          ),
          401,
        );
      }
      credential = outcome.credential;
    }
    const asked = c.req.param("namespace");
    if (asked !== undefined) {
      if (!isNamespace(asked)) {
        return c.json(
          errorReply(SERVER_ERROR, `Bad Request: ${NAMESPACE_RULE}`),
          400,
        );
      }
      if (!mayUse(credential, asked)) {
        log.warn("refused request: namespace not allowed", { credential: credential.name, namespace: asked });
        return c.json(
          errorReply(SERVER_ERROR, `Forbidden: this credential may not use namespace "${asked}"`),
          403,
        );
      }
    }
    c.set("caller", { credential, namespace: asked ?? credential.own });
    return await next();
  };
}
