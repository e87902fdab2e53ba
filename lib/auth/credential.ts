/**
 * Who a request comes from: the credential every access rule reads (docs/hosting.md "Hosting for a team"),
 * and the constant-time comparison of secrets. Pure: no Hono, no SDK.
 */
import { sha256 as sha256Bytes } from "@noble/hashes/sha2";
import { DEFAULT_NAMESPACE } from "../domain/names.ts";
import { isNamespace } from "../domain/schemas.ts";

/** The two kinds of access: `read` lists and calls only the read-only tools. */
export const ACCESS_LEVELS = ["read", "write"] as const;
/** One of {@link ACCESS_LEVELS}. */
export type AccessLevel = typeof ACCESS_LEVELS[number];

/**
 * A caller: its name (the only thing logs say about it), the namespaces it may use (`"*"`: all),
 * its own namespace (the one `/mcp` works in), its access, and when its token stops being valid
 * (an OAuth token's `exp`, in milliseconds; static tokens have none): what it keeps open (a
 * `subscriptions/listen` stream) ends then.
 */
export interface Credential {
  name: string;
  namespaces: "*" | readonly string[];
  own: string;
  access: AccessLevel;
  expiresAt?: number;
}

/**
 * Who calls and where: the credential and the namespace its request works in (one the credential may
 * use). What an MCP request, a listen stream and a dashboard event stream each belong to.
 */
export interface Caller {
  credential: Credential;
  namespace: string;
}

/** Finds the valid credential a request carries; undefined when it carries none. */
export type CredentialCheck = (request: Request) => Promise<Credential | undefined>;

/**
 * The caller when access control is off (no `AUTH_TOKEN`, `AUTH_TOKENS_FILE` or `OAUTH_ISSUER`):
 * the Host/Origin guard keeps it to this machine, and it may use every namespace.
 */
export const LOCAL_CREDENTIAL: Credential = {
  name: "local",
  namespaces: "*",
  own: DEFAULT_NAMESPACE,
  access: "write",
};

/** The bearer token of an `Authorization` header, if it has one (the scheme is case-insensitive). */
export function bearerToken(header: string | null | undefined): string | undefined {
  return header?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i)?.[1];
}

/**
 * Whether `credential` may use (and see) `namespace`: a valid namespace name it is allowed. The one
 * home of the namespace rule for `/mcp/{namespace}`, the dashboard and its events.
 */
export function mayUse(credential: Credential, namespace: string): boolean {
  return isNamespace(namespace) &&
    (credential.namespaces === "*" || credential.namespaces.includes(namespace));
}

/**
 * The namespaces `credential` sees: with `"*"`, its own and then every one the store holds (`stored`
 * lists them in the store's order, `default` first, then by name; it is called only then); else the
 * ones it lists, in its order. Each passes {@link mayUse}.
 */
export async function visibleNamespaces(
  credential: Credential,
  stored: () => Promise<readonly string[]>,
): Promise<string[]> {
  const names = credential.namespaces === "*" ? [credential.own, ...await stored()] : credential.namespaces;
  return [...new Set(names)].filter((name) => mayUse(credential, name));
}

const encoder = new TextEncoder();

/**
 * SHA-256 of a text's UTF-8 bytes. Synchronous and in plain JavaScript (@noble/hashes): for a token
 * a few µs, where WebCrypto's hop to a worker thread or node:crypto's native resource cost several
 * times that inside a request.
 */
export function sha256(text: string): Uint8Array {
  return sha256Bytes(encoder.encode(text));
}

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Whether two digests are equal, in time that depends on neither: every byte is compared, with no
 * early exit (node's `timingSafeEqual` does the same but costs ~2 µs a call under Deno; this ~50 ns).
 */
export function digestsMatch(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/**
 * Whether `presented` equals `expected`, in time that depends only on `expected`'s length (a
 * constant of the server): every character of `expected` is compared, with no early exit, and a
 * different length counts as a difference. Nothing about either text's content leaks through timing.
 */
export function tokensMatch(presented: string, expected: string): boolean {
  let difference = presented.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) {
    difference |= (presented.charCodeAt(i) | 0) ^ expected.charCodeAt(i);
  }
  return difference === 0;
}
