/**
 * The DNS-rebinding guard: `Host` and `Origin` checked against allow-lists before any MCP handling,
 * and the start-up check that refuses to expose the endpoint beyond loopback without a token.
 *
 * A rebinding page reaches a loopback server under the attacker's own name, so its requests carry
 * `Host: evil.example` and `Origin: http://evil.example`; both are refused unless listed. Requests
 * without `Origin` come from non-browser clients and pass the origin check.
 */
import type { MiddlewareHandler } from "hono";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { errorReply, SERVER_ERROR } from "../mcp/rpc_errors.ts";

/** Host names that always pass, with any port: the loopback names. */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** A parsed allow-list entry or header: a lower-case host name (IPv6 in brackets) and maybe a port. */
interface HostPort {
  host: string;
  port?: string;
}

/** Splits `name`, `name:port`, `[v6]`, `[v6]:port` (or a bare IPv6 address); undefined when malformed. */
export function parseHostPort(value: string): HostPort | undefined {
  const text = value.trim().toLowerCase();
  if (text === "") return undefined;
  let host: string;
  let port: string | undefined;
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end === -1) return undefined;
    host = text.slice(0, end + 1);
    const rest = text.slice(end + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) return undefined;
      port = rest.slice(1);
    }
  } else if (text.split(":").length > 2) {
    host = `[${text}]`; // a bare IPv6 address in an allow-list
  } else {
    const colon = text.indexOf(":");
    host = colon === -1 ? text : text.slice(0, colon);
    port = colon === -1 ? undefined : text.slice(colon + 1);
  }
  if (port !== undefined && !/^\d{1,5}$/.test(port)) return undefined;
  if (!/^[a-z0-9.\-_[\]:]+$/.test(host)) return undefined;
  return port === undefined ? { host } : { host, port };
}

/** Whether a listening address keeps the server on this machine (loopback names and 127.0.0.0/8). */
export function isLoopbackAddress(hostname: string): boolean {
  const host = hostname.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The origins a server listening on `host`:`port` is reached at when `host` is a loopback address:
 * `http://` and each loopback name with that port. None for any other address, or without a port
 * (0: not chosen yet). Fixed at start: what OAuth takes as its audience on loopback.
 */
export function loopbackOrigins(host: string, port: number | undefined): string[] {
  if (!isLoopbackAddress(host) || !port) return [];
  return LOOPBACK_HOSTS.map((name) => `http://${name}:${port}`);
}

/** Addresses that mean "every interface": they name no host a client would send. */
const WILDCARD_ADDRESSES = new Set(["0.0.0.0", "::", "[::]"]);

/** The allow-lists the guard uses. */
export interface AllowLists {
  /** `*` turns the host check off; otherwise entries as {@link parseHostPort} reads them. */
  hosts: readonly string[];
  /** Full origins (`https://app.example.com`); loopback origins always pass. */
  origins: readonly string[];
}

/**
 * The allow-lists for a configuration: the loopback names, the listening `HOST` when it is a
 * concrete name or address, and `ALLOWED_HOSTS` / `ALLOWED_ORIGINS`.
 */
export function allowLists(
  config: Partial<Pick<Config, "host" | "allowedHosts" | "allowedOrigins">>,
): AllowLists {
  const hosts = [...LOOPBACK_HOSTS, ...(config.allowedHosts ?? [])];
  if (config.host && !WILDCARD_ADDRESSES.has(config.host)) hosts.push(config.host);
  return { hosts, origins: config.allowedOrigins ?? [] };
}

/** Whether a `Host` header value is on the list (an entry without a port allows every port). */
export function hostAllowed(header: string | undefined, hosts: readonly string[]): boolean {
  if (hosts.includes("*")) return true;
  if (header === undefined) return false;
  const got = parseHostPort(header);
  if (!got) return false;
  return hosts.some((entry) => {
    const want = parseHostPort(entry);
    return want !== undefined && want.host === got.host &&
      (want.port === undefined || want.port === got.port);
  });
}

/** Whether an `Origin` header value is a loopback origin or listed exactly (absent passes). */
export function originAllowed(header: string | undefined, origins: readonly string[]): boolean {
  if (header === undefined) return true;
  const origin = parseOrigin(header);
  if (!origin) return false;
  const url = new URL(origin);
  if (LOOPBACK_HOSTS.includes(url.hostname)) return true;
  return origins.some((entry) => parseOrigin(entry) === origin);
}

function parseOrigin(value: string): string | undefined {
  try {
    const url = new URL(value.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether a `Host` header is well formed: a name or IPv4 address, or an IPv6 address in brackets,
 * with an optional port (RFC 9110 section 7.2). A bare IPv6 address (`::1`) is not: it cannot be
 * told from a name with a port, and no URL can be built from it.
 */
export function wellFormedHost(header: string): boolean {
  const trimmed = header.trim();
  if (!trimmed.startsWith("[") && trimmed.split(":").length > 2) return false;
  if (!parseHostPort(trimmed)) return false;
  try {
    new URL(`http://${trimmed}/`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Hono middleware, before every route: `400` with a plain message for a malformed `Host` header,
 * or a request whose URL cannot be read (Deno builds `request.url` from the `Host` header, and
 * reading it would throw a `TypeError` deeper in).
 */
export function hostSyntaxGuard(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host");
    if ((host !== undefined && !wellFormedHost(host)) || hostOfUrl(c.req.url) === undefined) {
      log.warn("refused request: malformed Host", { host, path: c.req.path });
      return c.json(
        errorReply(
          SERVER_ERROR,
          "Bad Request: the Host header is malformed (an IPv6 address goes in brackets: [::1])",
        ),
        400,
      );
    }
    return await next();
  };
}

/**
 * Hono middleware: 403 with a JSON-RPC error for a foreign `Host` or `Origin`. The host judged is the
 * `Host` header and, when it names another host, the request URL's: a request with an absolute-form
 * target (`GET http://evil.example/mcp`) is for the target's host, whatever its `Host` header says (RFC
 * 9112 section 3.2.2), and a listener builds the URL from the target then.
 */
export function hostOriginGuard(lists: AllowLists, log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header("host");
    const url = c.req.url;
    // The usual case, cheaply: the URL was built from the Host header (`http://` + Host + path).
    const fromHeader = header !== undefined && url.startsWith("http://") && url.startsWith(header, 7) &&
      url.charCodeAt(7 + header.length) === 47;
    const target = fromHeader ? header : targetHostOf(url);
    // Both must pass: the header, and the URL's host when it names another.
    let refused: string | undefined;
    if (header !== undefined && !hostAllowed(header, lists.hosts)) refused = header;
    else if (!fromHeader && !hostAllowed(target, lists.hosts)) refused = target ?? "";
    const origin = c.req.header("origin");
    if (refused !== undefined) {
      log.warn("refused request: Host not allowed", { host: refused, path: c.req.path });
      return c.json(
        errorReply(SERVER_ERROR, `Forbidden: Host "${refused}" is not allowed; list it in ALLOWED_HOSTS`),
        403,
      );
    }
    if (!originAllowed(origin, lists.origins)) {
      log.warn("refused request: Origin not allowed", { origin, path: c.req.path });
      return c.json(
        errorReply(SERVER_ERROR, `Forbidden: Origin "${origin}" is not allowed; list it in ALLOWED_ORIGINS`),
        403,
      );
    }
    return await next();
  };
}

/** The `Host` a request URL names; Deno's server builds `request.url` from the `Host` header. */
function hostOfUrl(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** The host and port a request URL names, the port always written (`:80` when the URL omits it). */
function targetHostOf(url: string): string | undefined {
  try {
    const { hostname, port, protocol } = new URL(url);
    return hostname ? `${hostname}:${port || (protocol === "https:" ? "443" : "80")}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Throws when the server would listen beyond loopback without access control (`AUTH_TOKEN`,
 * `AUTH_TOKENS_FILE` or `OAUTH_ISSUER`; `authenticated` says the caller built one), unless
 * `ALLOW_UNAUTHENTICATED_REMOTE=1` says that is intended.
 */
export function assertSafeExposure(
  config: Pick<Config, "authToken" | "allowUnauthenticatedRemote"> & { authenticated?: boolean },
  listening: string,
): void {
  if (
    isLoopbackAddress(listening) || config.authToken || config.authenticated ||
    config.allowUnauthenticatedRemote
  ) return;
  throw new Error(
    `Refusing to serve ${listening} without authentication: anyone who reaches it could read and change ` +
      `every task. Set AUTH_TOKEN, AUTH_TOKENS_FILE or OAUTH_ISSUER (clients then send ` +
      `"Authorization: Bearer <token>"), listen on ` +
      `127.0.0.1 (HOST or deno serve --host), or set ALLOW_UNAUTHENTICATED_REMOTE=1 if a proxy in front ` +
      `authenticates.`,
  );
}
