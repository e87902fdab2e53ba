/**
 * One place that turns a request's bearer token into a {@link Credential}: `AUTH_TOKEN` (write access
 * to every namespace, own `default`), the tokens file (`AUTH_TOKENS_FILE`) and OAuth access tokens
 * (`OAUTH_ISSUER`), side by side. Static tokens are tried first; a token none of them knows is
 * handed to the OAuth resource server, which refuses anything but a valid JWT.
 *
 * It also says what a refused request is told: the `WWW-Authenticate` challenge (RFC 6750), with
 * `resource_metadata` (RFC 9728) when OAuth is on, so a client knows where to sign in.
 */
import type { Logger } from "../log.ts";
import { bearerToken, type Credential, tokensMatch } from "./credential.ts";
import { type OAuthOptions, OAuthResource, type Refusal } from "./oauth.ts";
import type { OAuthNamespaceMode } from "../config.ts";
import { TokensFile } from "./tokens_file.ts";
import { DEFAULT_NAMESPACE } from "../domain/names.ts";

/** What the access settings of the configuration say. */
export interface AccessSettings {
  authToken?: string;
  authTokensFile?: string;
  oauthIssuer?: string;
  oauthAudience?: string;
  oauthNamespaceClaim?: string;
  oauthNamespaces?: OAuthNamespaceMode;
  publicUrl?: string;
  /**
   * Where a server listening on loopback is reached, fixed at start from `HOST` and `PORT`
   * (`loopbackOrigins` in lib/http/guards.ts): OAuth's audience when `PUBLIC_URL` and
   * `OAUTH_AUDIENCE` are unset. Empty or absent elsewhere.
   */
  localOrigins?: readonly string[];
}

/** The outcome of {@link Authenticator.authenticate}. */
export type AuthOutcome =
  | { ok: true; credential: Credential }
  | { ok: false; error: "missing" | Refusal["error"]; message: string; reply?: string };

/** The credential of `AUTH_TOKEN`. */
const AUTH_TOKEN_CREDENTIAL: Credential = {
  name: "AUTH_TOKEN",
  namespaces: "*",
  own: DEFAULT_NAMESPACE,
  access: "write",
};

/** Options of the {@link Authenticator} constructor; at least one source makes access control on. */
export interface AuthenticatorOptions {
  log: Logger;
  authToken?: string;
  tokensFile?: TokensFile;
  oauth?: OAuthResource;
}

/** See the module doc. */
export class Authenticator {
  readonly oauth: OAuthResource | undefined;
  readonly #authToken: string | undefined;
  readonly #tokensFile: TokensFile | undefined;
  readonly #log: Logger;

  constructor(options: AuthenticatorOptions) {
    this.#authToken = options.authToken;
    this.#tokensFile = options.tokensFile;
    this.oauth = options.oauth;
    this.#log = options.log;
  }

  /**
   * The authenticator the settings ask for, or undefined when none is set (access control off).
   * Reads and checks the tokens file and the OAuth settings; throws a clear Error when one is bad.
   */
  static async fromSettings(
    settings: AccessSettings,
    log: Logger,
    tuning: Pick<OAuthOptions, "jwksCooldownMs" | "clockToleranceSec"> = {},
  ): Promise<Authenticator | undefined> {
    if (settings.authToken !== undefined && settings.authToken.trim() === "") {
      throw new Error("AUTH_TOKEN is blank: set a token or unset the variable");
    }
    const authToken = settings.authToken?.trim();
    const tokensFile = settings.authTokensFile
      ? await TokensFile.open(settings.authTokensFile, log)
      : undefined;
    const oauth = settings.oauthIssuer
      ? new OAuthResource({
        issuer: settings.oauthIssuer,
        audience: settings.oauthAudience,
        namespaceClaim: settings.oauthNamespaceClaim,
        namespaces: settings.oauthNamespaces,
        publicUrl: settings.publicUrl,
        localOrigins: settings.localOrigins,
        ...tuning,
      })
      : undefined;
    if (!authToken && !tokensFile && !oauth) return undefined;
    return new Authenticator({ log, authToken, tokensFile, oauth });
  }

  /** Which sources are on, for the start-up log: e.g. `["AUTH_TOKEN", "tokens file", "oauth"]`. */
  get sources(): string[] {
    return [
      ...(this.#authToken ? ["AUTH_TOKEN"] : []),
      ...(this.#tokensFile ? ["tokens file"] : []),
      ...(this.oauth ? ["oauth"] : []),
    ];
  }

  /** Whether a credential can be revoked while the server runs (a tokens file is read again on change). */
  get revocable(): boolean {
    return this.#tokensFile !== undefined;
  }

  /**
   * Reads the tokens file again if it changed; returns the version of its entries, which grows
   * whenever they change (see {@link revoked}); 0 without a tokens file.
   */
  async refresh(): Promise<number> {
    return await this.#tokensFile?.refresh() ?? 0;
  }

  /**
   * Whether `credential` was revoked: it came from the tokens file, whose current version no longer
   * holds it as it was (removed, or changed). Credentials of `AUTH_TOKEN` and OAuth never are.
   */
  revoked(credential: Credential): boolean {
    return this.#tokensFile?.revoked(credential) ?? false;
  }

  /** The credential of the request's `Authorization: Bearer …`, or why there is none. Never logs a secret. */
  async authenticate(request: Request): Promise<AuthOutcome> {
    const header = request.headers.get("authorization");
    const token = bearerToken(header);
    if (token === undefined) {
      return header === null
        ? { ok: false, error: "missing", message: "no credential" }
        : { ok: false, error: "invalid_token", message: "the Authorization header is not 'Bearer <token>'" };
    }
    return await this.authenticateToken(token);
  }

  /** Like {@link authenticate}, for a token that came another way (a share-link cookie). */
  async authenticateToken(token: string): Promise<AuthOutcome> {
    if (this.#authToken !== undefined && tokensMatch(token, this.#authToken)) {
      return { ok: true, credential: AUTH_TOKEN_CREDENTIAL };
    }
    const fromFile = await this.#tokensFile?.find(token);
    if (fromFile) return { ok: true, credential: fromFile };
    if (this.oauth) {
      const verified = await this.oauth.verify(token);
      if ("error" in verified) return { ok: false, ...verified };
      return { ok: true, credential: verified };
    }
    return { ok: false, error: "invalid_token", message: "the token is not known" };
  }

  /** The check the dashboard uses: a request's credential, or undefined. */
  check = async (request: Request): Promise<Credential | undefined> => {
    const outcome = await this.authenticate(request);
    return outcome.ok ? outcome.credential : undefined;
  };

  /**
   * The `WWW-Authenticate` value for a refused request: `Bearer` with `resource_metadata` when OAuth
   * is on (else `realm`), `error="invalid_token"` when a token was sent but refused.
   */
  challenge(request: Request, outcome: Exclude<AuthOutcome, { ok: true }>): string {
    const parts: string[] = [];
    if (this.oauth) {
      parts.push(`resource_metadata="${this.oauth.metadataUrl(request)}"`);
      if (outcome.error === "insufficient_scope") parts.push('scope="checklist:read checklist:write"');
    } else {
      parts.push('realm="checklist-mcp"');
    }
    if (outcome.error === "invalid_token" || outcome.error === "insufficient_scope") {
      parts.push(`error="${outcome.error}"`);
      parts.push(`error_description="${outcome.message.replace(/["\\]/g, "'")}"`);
    }
    return `Bearer ${parts.join(", ")}`;
  }

  /** Logs a refusal (never the token; the path, and whether one was sent). */
  logRefusal(request: Request, outcome: Exclude<AuthOutcome, { ok: true }>): void {
    const level = outcome.error === "unavailable" ? "error" : "warn";
    this.#log[level]("refused request: no valid credential", {
      path: new URL(request.url).pathname,
      reason: outcome.error,
      detail: outcome.message,
    });
  }
}
