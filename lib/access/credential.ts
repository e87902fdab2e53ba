/**
 * Who a request comes from: the credential every access rule reads (README "Hosting for a team"),
 * and the constant-time comparison of secrets. Pure: no Hono, no SDK.
 */
import { createHash } from "node:crypto";

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

/** SHA-256 of a text's UTF-8 bytes (synchronous: a few µs, no hop to a worker thread). */
export function sha256(text: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(text, "utf8").digest());
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
 * Whether `presented` equals `expected`, in time that depends on neither: both sides are hashed and
 * the digests compared, so neither the content nor the length leaks through timing.
 */
export function tokensMatch(presented: string, expected: string): boolean {
  return digestsMatch(sha256(presented), sha256(expected));
}
