/**
 * Who a request comes from: the credential every access rule reads (README "Hosting for a team"),
 * and the constant-time comparison of secrets. Pure: no Hono, no SDK.
 */
import { timingSafeEqual } from "node:crypto";

/** The two kinds of access: `read` lists and calls only the read-only tools. */
export type Access = "read" | "write";

/**
 * A caller: its name (the only thing logs say about it), the namespaces it may use (`"*"`: all),
 * its own namespace (the one `/mcp` works in), and its access.
 */
export interface Credential {
  name: string;
  namespaces: "*" | readonly string[];
  own: string;
  access: Access;
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
  own: "default",
  access: "write",
};

/** The bearer token of an `Authorization` header, if it has one (the scheme is case-insensitive). */
export function bearerToken(header: string | null | undefined): string | undefined {
  return header?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i)?.[1];
}

/** Whether `credential` may use `namespace`. */
export function mayUse(credential: Credential, namespace: string): boolean {
  return credential.namespaces === "*" || credential.namespaces.includes(namespace);
}

const encoder = new TextEncoder();

/** SHA-256 of a text's UTF-8 bytes. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Whether two digests are equal, in time that depends on neither (both are 32 bytes). */
export function digestsMatch(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether `presented` equals `expected`, in time that depends on neither: both sides are hashed and
 * the digests compared, so neither the content nor the length leaks through timing.
 */
export async function tokensMatch(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([sha256(presented), sha256(expected)]);
  return digestsMatch(a, b);
}
