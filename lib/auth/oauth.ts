/**
 * The OAuth 2.1 resource server (`OAUTH_ISSUER`), as the MCP authorization specification asks of a
 * server: protected-resource metadata (RFC 9728) naming the issuer, and JWT access tokens checked
 * with `jose` against the issuer's keys.
 *
 * The keys are found through the issuer's metadata (RFC 8414 `/.well-known/oauth-authorization-server`,
 * else OpenID `/.well-known/openid-configuration`), read on first use and kept; `jose` fetches the
 * key set again when a token names a key id it does not know (at most once per `jwksCooldownMs`),
 * so a key rotation at the issuer needs no restart. A token is accepted when it is signed by one of
 * those keys with an asymmetric algorithm (never `alg: none`, never a shared secret), names the
 * issuer as `iss`, names the resource (or `OAUTH_AUDIENCE`) in `aud`, is within `nbf`/`exp`, and
 * has the scope `checklist:read` or `checklist:write`.
 *
 * The audience is fixed at start, never read from a request: `OAUTH_AUDIENCE`, else `PUBLIC_URL`'s
 * `/mcp`, else (a server listening on loopback only) `/mcp` at each loopback name with the port it
 * listens on. A `Host` header, or an absolute-form target, cannot make a token issued for another
 * service at the same issuer acceptable here. Without any of these the server refuses to start.
 *
 * Checking a signature costs about 300 µs (RS256), as much as the whole request it guards, so an
 * accepted token is remembered for at most a minute and never past its `exp` (at most 1,000 tokens). Removing a key from the issuer's key set thus refuses its
 * tokens within a minute.
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";
import type { AccessLevel, Credential } from "./credential.ts";
import { namespaceFromClaim } from "./namespace.ts";
import { DEFAULTS, type OAuthNamespaceMode } from "../config.ts";

/** The scopes this resource knows: read-only access, and access that changes things too. */
export const SCOPES = { read: "checklist:read", write: "checklist:write" } as const;

/** Signature algorithms accepted: asymmetric only. */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** How the resource server is set up. */
export interface OAuthOptions {
  /** `OAUTH_ISSUER`: https, or http on a loopback host. */
  issuer: string;
  /** `OAUTH_AUDIENCE`: the `aud` a token must name; the resource URL (`…/mcp`) by default. */
  audience?: string;
  /**
   * The origins a server listening on loopback is reached at, fixed at start from `HOST` and `PORT`
   * (`http://127.0.0.1:8585`, `http://localhost:8585`, …): without `PUBLIC_URL`, the resource is
   * `/mcp` at one of them, and a token may name any of them.
   */
  localOrigins?: readonly string[];
  /** `OAUTH_NAMESPACE_CLAIM`: the claim whose value is the caller's namespace; `sub` by default. */
  namespaceClaim?: string;
  /**
   * `OAUTH_NAMESPACES`: `prefixed` (default: claim-made namespaces start with `oauth.`, a space of
   * their own) or `shared` (the claim's name alone, the space a tokens-file namespace of that name is).
   */
  namespaces?: OAuthNamespaceMode;
  /** `PUBLIC_URL`: the server's public origin. */
  publicUrl?: string;
  /** Least time between two fetches of the key set for an unknown key id (default {@link DEFAULTS}.jwksCooldownMs). */
  jwksCooldownMs?: number;
  /** Leeway for `exp` and `nbf`, in seconds (default {@link DEFAULTS}.clockToleranceSec). */
  clockToleranceSec?: number;
}

/**
 * Why a token was refused: `invalid_token` (401) or `insufficient_scope` (403), or the issuer cannot
 * be used (503): unreachable, or reachable but its metadata names another issuer (`message` says which).
 */
export interface Refusal {
  error: "invalid_token" | "insufficient_scope" | "unavailable";
  /** For the log (and `error_description`); for `unavailable` it may hold an exception's text. */
  message: string;
  /** For `unavailable`: what the 503 tells the client (never an exception's text). */
  reply?: string;
}

/**
 * The issuer answered, but its metadata names another issuer than `OAUTH_ISSUER` (e.g. `localhost`
 * against `127.0.0.1`): a configuration mistake that retrying will not mend, so it is named as such.
 */
export class IssuerMismatch extends Error {
  constructor(configured: string, named: unknown) {
    super(
      `issuer mismatch: the authorization server's metadata names issuer ${
        JSON.stringify(named)
      }, but OAUTH_ISSUER is ${JSON.stringify(configured)}; set OAUTH_ISSUER to the issuer it names`,
    );
    this.name = "IssuerMismatch";
  }
}

/** Whether an URL is https, or http on a loopback host (for development and tests). */
export function secureOrLoopback(url: URL): boolean {
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" &&
    (url.hostname === "localhost" || url.hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(url.hostname));
}

/**
 * Checks `OAUTH_ISSUER`, `PUBLIC_URL` and that the audience is fixed; throws an Error saying what is
 * wrong and what to set.
 */
export function checkOAuthOptions(options: OAuthOptions): void {
  let issuer: URL;
  try {
    issuer = new URL(options.issuer);
  } catch {
    throw new Error(`OAUTH_ISSUER is not a URL: ${options.issuer}`);
  }
  if (!secureOrLoopback(issuer)) {
    throw new Error(`OAUTH_ISSUER must be https:// (http only on localhost or 127.0.0.1): ${options.issuer}`);
  }
  if (issuer.search || issuer.hash) {
    throw new Error(`OAUTH_ISSUER has a query or fragment: ${options.issuer}`);
  }
  if (options.publicUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.publicUrl);
    } catch {
      throw new Error(`PUBLIC_URL is not a URL: ${options.publicUrl}`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("PUBLIC_URL must be http(s)");
    if (url.pathname !== "/" || url.search || url.hash) {
      throw new Error(
        `PUBLIC_URL is an origin only (scheme, host, port), without a path: ${options.publicUrl}`,
      );
    }
  }
  if (options.namespaceClaim !== undefined && options.namespaceClaim.trim() === "") {
    throw new Error("OAUTH_NAMESPACE_CLAIM is blank");
  }
  if (options.audience === undefined && options.publicUrl === undefined && !options.localOrigins?.length) {
    throw new Error(
      "OAUTH_ISSUER needs a fixed audience: set PUBLIC_URL to the origin clients reach this server at " +
        "(https://mcp.example.com; tokens must then name https://mcp.example.com/mcp), or OAUTH_AUDIENCE " +
        "to the aud your issuer's tokens carry; only a server listening on loopback (HOST 127.0.0.1, " +
        "localhost or ::1, with a PORT) may do without, its audience then being its loopback URL",
    );
  }
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/** How long an accepted token is remembered at most, and how many are. */
const REMEMBER_MS = 60_000;
const REMEMBERED = 1000;

/** See the module doc. */
export class OAuthResource {
  readonly issuer: string;
  readonly #options: OAuthOptions;
  readonly #issuers: string[];
  readonly #claim: string;
  /** `PUBLIC_URL`'s origin, parsed once (a URL parse per request shows in the access benchmark). */
  readonly #publicOrigin: string | undefined;
  /** Where a loopback server is reached (without `PUBLIC_URL`). */
  readonly #localOrigins: readonly string[];
  /** The `aud` values a token may name (any one of them), fixed at start. */
  readonly #audiences: string[];
  #keys: Promise<KeySet> | undefined;
  /** Accepted tokens by token, in insertion order. */
  readonly #accepted = new Map<string, { credential: Credential; until: number }>();

  constructor(options: OAuthOptions) {
    checkOAuthOptions(options);
    this.#options = options;
    this.issuer = options.issuer;
    const bare = options.issuer.replace(/\/+$/, "");
    // Issuers differ on a trailing slash (Auth0 has one); accept the configured issuer either way.
    this.#issuers = [...new Set([options.issuer, bare, `${bare}/`])];
    this.#claim = options.namespaceClaim?.trim() || DEFAULTS.oauthNamespaceClaim;
    this.#publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : undefined;
    this.#localOrigins = options.localOrigins ?? [];
    this.#audiences = options.audience !== undefined
      ? [options.audience]
      : this.#publicOrigin !== undefined
      ? [`${this.#publicOrigin}/mcp`]
      : this.#localOrigins.map((origin) => `${origin}/mcp`);
  }

  /**
   * The public origin the metadata names: `PUBLIC_URL`; else, on loopback, the fixed origin the
   * request came to (else the first); else (`OAUTH_AUDIENCE` alone) the request's, which then names
   * the resource but never decides what a token must name.
   */
  origin(request: Request): string {
    if (this.#publicOrigin !== undefined) return this.#publicOrigin;
    // `scheme://host[:port]` ends at the first "/" after "//": no URL parsing on every request.
    const url = request.url;
    const end = url.indexOf("/", url.indexOf("//") + 2);
    const own = end === -1 ? url : url.slice(0, end);
    if (this.#localOrigins.length === 0) return own;
    return this.#localOrigins.includes(own) ? own : this.#localOrigins[0]!;
  }

  /** The resource URL: the public URL of `/mcp`. */
  resource(request: Request): string {
    return `${this.origin(request)}/mcp`;
  }

  /** Where the protected-resource metadata is (RFC 9728 path insertion for `/mcp`). */
  metadataUrl(request: Request): string {
    return `${this.origin(request)}/.well-known/oauth-protected-resource/mcp`;
  }

  /** The protected-resource metadata (RFC 9728). */
  metadata(request: Request): Record<string, unknown> {
    return {
      resource: this.resource(request),
      authorization_servers: [this.issuer],
      scopes_supported: [SCOPES.read, SCOPES.write],
      bearer_methods_supported: ["header"],
      resource_name: "checklist-mcp",
    };
  }

  /** Whether a bearer token looks like a JWT (three base64url parts); others are not ours to judge. */
  static looksLikeJwt(token: string): boolean {
    return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
  }

  /** The credential of a valid access token, or why it was refused. */
  async verify(token: string): Promise<Credential | Refusal> {
    const now = Date.now();
    const known = this.#accepted.get(token);
    if (known && known.until > now) return known.credential;
    if (known) this.#accepted.delete(token);
    if (!OAuthResource.looksLikeJwt(token)) {
      return { error: "invalid_token", message: "the token is not known" };
    }
    const verified = await this.#verify(token);
    if ("error" in verified) return verified;
    if (this.#accepted.size >= REMEMBERED) this.#accepted.delete(this.#accepted.keys().next().value!);
    this.#accepted.set(token, {
      credential: verified.credential,
      until: Math.min(verified.exp * 1000, now + REMEMBER_MS),
    });
    return verified.credential;
  }

  async #verify(token: string): Promise<{ credential: Credential; exp: number } | Refusal> {
    let keys: KeySet;
    try {
      keys = await this.#keySet();
    } catch (error) {
      if (error instanceof IssuerMismatch) {
        return { error: "unavailable", message: error.message, reply: error.message };
      }
      return {
        error: "unavailable",
        message: `the authorization server cannot be reached: ${(error as Error).message}`,
        reply: "the authorization server cannot be reached",
      };
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.#issuers,
        audience: this.#audiences,
        algorithms: ALGORITHMS,
        clockTolerance: this.#options.clockToleranceSec ?? DEFAULTS.clockToleranceSec,
        requiredClaims: ["exp"],
      }));
    } catch (error) {
      return { error: "invalid_token", message: describe(error) };
    }
    const access = accessOf(payload);
    if (!access) {
      return {
        error: "insufficient_scope",
        message: `the token has neither scope ${SCOPES.read} nor ${SCOPES.write}`,
      };
    }
    const value = payload[this.#claim];
    const values = (Array.isArray(value) ? value : [value]).filter((v) =>
      (typeof v === "string" && v !== "") || typeof v === "number"
    ).map(String);
    if (values.length === 0) {
      return { error: "invalid_token", message: `the token has no usable "${this.#claim}" claim` };
    }
    const mode = this.#options.namespaces ?? DEFAULTS.oauthNamespaces;
    const namespaces = [...new Set(values.map((v) => namespaceFromClaim(v, mode)))];
    return {
      credential: {
        name: `oauth:${namespaces[0]}`,
        namespaces,
        own: namespaces[0]!,
        access,
        expiresAt: payload.exp! * 1000,
      },
      exp: payload.exp!,
    };
  }

  #keySet(): Promise<KeySet> {
    this.#keys ??= this.#discover().catch((error) => {
      this.#keys = undefined; // try again on the next request
      throw error;
    });
    return this.#keys;
  }

  /**
   * Finds `jwks_uri` in the issuer's metadata. Throws {@link IssuerMismatch} when the only metadata
   * found names another issuer, else an Error saying what failed where.
   */
  async #discover(): Promise<KeySet> {
    const issuer = new URL(this.issuer);
    const path = issuer.pathname.replace(/\/+$/, "");
    const places = [
      `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
      `${issuer.origin}${path}/.well-known/openid-configuration`,
    ];
    const problems: string[] = [];
    let mismatch: IssuerMismatch | undefined;
    for (const place of places) {
      try {
        const response = await fetch(place, {
          headers: { accept: "application/json" },
          signal: AbortSignal.timeout(10_000),
        });
        if (!response.ok) {
          await response.body?.cancel();
          problems.push(`${place}: HTTP ${response.status}`);
          continue;
        }
        const metadata = await response.json() as { issuer?: unknown; jwks_uri?: unknown };
        if (typeof metadata.issuer !== "string" || !this.#issuers.includes(metadata.issuer)) {
          mismatch ??= new IssuerMismatch(this.issuer, metadata.issuer);
          problems.push(`${place}: names issuer ${JSON.stringify(metadata.issuer)}`);
          continue;
        }
        if (typeof metadata.jwks_uri !== "string") {
          problems.push(`${place}: no jwks_uri`);
          continue;
        }
        const jwks = new URL(metadata.jwks_uri);
        if (!secureOrLoopback(jwks)) throw new Error(`jwks_uri ${jwks} is not https`);
        return createRemoteJWKSet(jwks, {
          cooldownDuration: this.#options.jwksCooldownMs ?? DEFAULTS.jwksCooldownMs,
          timeoutDuration: 10_000,
        });
      } catch (error) {
        problems.push(`${place}: ${(error as Error).message}`);
      }
    }
    if (mismatch) throw mismatch;
    throw new Error(`no usable issuer metadata (${problems.join("; ")})`);
  }
}

/** `write` with scope `checklist:write`, `read` with `checklist:read` (`scope` string or `scp` list). */
function accessOf(payload: JWTPayload): AccessLevel | undefined {
  const scopes = new Set<string>();
  if (typeof payload.scope === "string") { for (const s of payload.scope.split(" ")) scopes.add(s); }
  if (Array.isArray(payload.scp)) { for (const s of payload.scp) if (typeof s === "string") scopes.add(s); }
  if (typeof payload.scp === "string") { for (const s of payload.scp.split(" ")) scopes.add(s); }
  if (scopes.has(SCOPES.write)) return "write";
  if (scopes.has(SCOPES.read)) return "read";
  return undefined;
}

/** A short reason a token failed, for the client's `error_description` and the log. */
function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    return `the token's "${error.claim}" claim is not accepted (${error.reason})`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return "no key of the issuer matches the token";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature is not valid";
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's signing algorithm is not accepted";
  if (error instanceof errors.JOSEError) return `the token is not valid (${error.code})`;
  return "the token is not valid";
}
