/**
 * Bearer authentication for `/mcp` (`AUTH_TOKEN`). The comparison hashes both sides and compares
 * the digests in constant time, so neither the token's content nor its length leaks through timing.
 */
import { timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../log.ts";
import { jsonRpcError } from "./errors.ts";

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Whether `presented` equals `expected`, in time that depends on neither. */
export async function tokensMatch(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(presented), digest(expected)]);
  return timingSafeEqual(a, b);
}

/**
 * Hono middleware: 401 with `WWW-Authenticate: Bearer …` unless the request carries
 * `Authorization: Bearer <token>`. `OPTIONS` preflights never carry credentials and are answered
 * by the CORS middleware before this one.
 */
export function bearerAuth(token: string, log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header("authorization");
    const match = header?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i);
    if (!match || !(await tokensMatch(match[1]!, token))) {
      const challenge = header === undefined
        ? 'Bearer realm="checklist-mcp"'
        : 'Bearer realm="checklist-mcp", error="invalid_token"';
      log.warn("refused request: bad or missing bearer token", {
        path: c.req.path,
        presented: header !== undefined,
      });
      c.header("WWW-Authenticate", challenge);
      return c.json(
        jsonRpcError(-32000, "Unauthorized: send the server's AUTH_TOKEN as 'Authorization: Bearer <token>'"),
        401,
      );
    }
    return await next();
  };
}
