/**
 * Making a namespace name from an OAuth claim (the rule for names is `NamespaceSchema` in
 * lib/domain/schemas.ts).
 */
import { isNamespace } from "../domain/schemas.ts";
import { sha256, toHex } from "./credential.ts";

/** Hex digits of the hash a claim-made name ends with. */
const HASH_DIGITS = 16;

/**
 * The namespace of an OAuth claim value. A value that is already a valid name is used as it is.
 * Any other becomes readable and unique: each run of other characters turns into `_`, the result
 * is cut to 47 characters, and `-` plus the first 16 hex digits of the SHA-256 of the whole value
 * are appended (`auth0|6612ab` → `auth0_6612ab-3f1c…`). Two different values never share a
 * namespace unless their hashes collide.
 */
export function namespaceFromClaim(value: string): string {
  const candidate: unknown = value; // isNamespace narrows its argument; keep `value` a string
  if (isNamespace(candidate)) return candidate;
  const readable = value.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 64 - 1 - HASH_DIGITS);
  return `${readable}-${toHex(sha256(value)).slice(0, HASH_DIGITS)}`;
}
