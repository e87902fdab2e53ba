/**
 * A real authorization server for the OAuth tests (oauth2-mock-server on a loopback port, RS256
 * keys, OpenID discovery, authorization code with PKCE), and an MCP connector as Claude or VS Code
 * would be: the SDK's `Client` over Streamable HTTP with an `OAuthClientProvider` whose "browser"
 * follows the authorization redirect, with a client registered beforehand (the mock server has no
 * dynamic registration).
 */
import { Events, OAuth2Server } from "oauth2-mock-server";
import {
  Client,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "./sdk_client.ts";

/** Who the next sign-in at the issuer is, and what it grants. */
export interface Grant {
  sub: string;
  scope: string;
  /** Extra claims of the access token. */
  claims?: Record<string, unknown>;
}

/** A running authorization server. */
export interface Issuer extends AsyncDisposable {
  server: OAuth2Server;
  /** Its issuer URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** Sets who signs in next. */
  grant(next: Grant): void;
  /** The `resource` parameters the token requests named (RFC 8707). */
  resources: string[];
}

/** Starts oauth2-mock-server on a free loopback port with one RS256 key. */
export async function startIssuer(): Promise<Issuer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  let grant: Grant = { sub: "alice", scope: "checklist:write" };
  const resources: string[] = [];
  // The token endpoint signs for whoever signed in: their subject, their scope, and the resource the
  // client asked for as the audience (as Auth0, Keycloak and others do for an API / resource).
  server.service.on(Events.BeforeTokenSigning, (token, req) => {
    const body = (req as unknown as { body: Record<string, unknown> }).body;
    if (typeof body.resource === "string") resources.push(body.resource);
    Object.assign(token.payload, {
      sub: grant.sub,
      scope: grant.scope,
      ...(typeof body.resource === "string" ? { aud: body.resource } : {}),
      ...grant.claims,
    });
  });
  return {
    server,
    url: server.issuer.url!,
    grant: (next) => (grant = next),
    resources,
    [Symbol.asyncDispose]: () => server.stop(),
  };
}

/** The client id registered at the issuer beforehand. */
export const CLIENT_ID = "checklist-connector";
const REDIRECT = "http://127.0.0.1:9/oauth/callback";

/** A connector's OAuth state: pre-registered client, PKCE verifier, tokens; its browser follows redirects. */
export class ConnectorProvider implements OAuthClientProvider {
  #tokens: Parameters<OAuthClientProvider["saveTokens"]>[0] | undefined;
  #verifier = "";
  /** The authorization code the last redirect brought back. */
  code: string | undefined;
  /** Authorization URLs visited. */
  visited: URL[] = [];

  get redirectUrl(): string {
    return REDIRECT;
  }

  get clientMetadata() {
    return {
      client_name: "checklist test connector",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation() {
    return { client_id: CLIENT_ID };
  }

  tokens() {
    return this.#tokens;
  }

  saveTokens(tokens: Parameters<OAuthClientProvider["saveTokens"]>[0]): void {
    this.#tokens = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  #discovery: OAuthDiscoveryState | undefined;

  /** Keeps what the SDK discovered about the authorization server beside the code verifier (SEP-2352). */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  /** The user's browser: opens the authorization URL; the issuer signs the user in and redirects back. */
  async redirectToAuthorization(url: URL): Promise<void> {
    this.visited.push(url);
    const response = await fetch(url, { redirect: "manual" });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (!location) throw new Error(`the issuer did not redirect (HTTP ${response.status})`);
    const back = new URL(location);
    if (`${back.origin}${back.pathname}` !== REDIRECT) throw new Error(`redirected to ${location}`);
    this.code = back.searchParams.get("code") ?? undefined;
  }
}

/** A signed-in client and its provider. */
export interface SignedIn extends AsyncDisposable {
  client: Client;
  provider: ConnectorProvider;
}

/**
 * Connects to `mcpUrl` as a connector does: the first attempt gets 401, the SDK discovers the
 * issuer through the server's metadata and sends the browser to sign in; with the code it gets a
 * token, and the second attempt connects.
 */
export async function signIn(mcpUrl: string, provider = new ConnectorProvider()): Promise<SignedIn> {
  const url = new URL(mcpUrl);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: "checklist-oauth-tests", version: "0.0.0" });
  try {
    await client.connect(first);
    return { client, provider, [Symbol.asyncDispose]: () => client.close() };
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  if (!provider.code) throw new Error("signing in brought back no authorization code");
  await first.finishAuth(provider.code);
  await first.close();
  const second = new Client({ name: "checklist-oauth-tests", version: "0.0.0" });
  await second.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return { client: second, provider, [Symbol.asyncDispose]: () => second.close() };
}
