/**
 * Making a namespace name from an OAuth claim (the rule for names is `NamespaceSchema` in
 * lib/domain/schemas.ts). The mapping is one-to-one: two different claim values never share a
 * namespace, so no user can take another's data by choosing a claim value.
 */
import { isNamespace } from "../domain/schemas.ts";
import { sha256, toHex } from "./credential.ts";

/** Hex digits of the hash a claim-made name ends with. */
const HASH_DIGITS = 16;

/** The form every mapped name takes: its end is `-` and {@link HASH_DIGITS} lower-case hex digits. */
const MAPPED_END = new RegExp(`-[0-9a-f]{${HASH_DIGITS}}$`);

/**
 * The namespace of an OAuth claim value. A value that is a valid name and does not end the way a
 * mapped name does (`-` and 16 lower-case hex digits) is used as it is. Every other value (not a
 * valid name, or one that looks mapped) becomes readable and unique: each run of other characters
 * turns into `_`, the result is cut to 47 characters, and `-` plus the first 16 hex digits of the
 * SHA-256 of the whole value are appended (`auth0|6612ab` → `auth0_6612ab-3f1c…`).
 *
 * So the names kept as they are and the mapped names are disjoint sets, and two mapped names differ
 * whenever their values differ (unless 64 bits of SHA-256 collide): a user whose claim is literally
 * another user's mapped name gets a namespace of their own. A valid name ending like a mapped one
 * (rare: `team-0123456789abcdef`) is therefore mapped too.
 */
export function namespaceFromClaim(value: string): string {
  const candidate: unknown = value; // isNamespace narrows its argument; keep `value` a string
  if (isNamespace(candidate) && !MAPPED_END.test(candidate)) return candidate;
  const readable = value.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 64 - 1 - HASH_DIGITS);
  return `${readable}-${toHex(sha256(value)).slice(0, HASH_DIGITS)}`;
}
