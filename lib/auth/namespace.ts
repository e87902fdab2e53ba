/**
 * Making a namespace name from an OAuth claim (the rule for names is `NamespaceSchema` in
 * lib/domain/schemas.ts). The mapping is one-to-one: two different claim values never share a
 * namespace, so no user can take another's data by choosing a claim value.
 *
 * And by default (`OAUTH_NAMESPACES=prefixed`) every name made from a claim starts with
 * {@link OAUTH_NAMESPACE_PREFIX}, so a claim-made namespace is never one the tokens file names by
 * chance: a user whose `sub` (or a claim users choose, with `OAUTH_NAMESPACE_CLAIM`) is `team-a` gets
 * `oauth.team-a`, not the team's `team-a`. The two are the same space only where the configuration
 * says so: `OAUTH_NAMESPACES=shared` (the claim's name alone, as before), or a tokens-file entry
 * that names an `oauth.` namespace itself. Nothing an admin edits in the tokens file moves a user.
 */
import { isNamespace } from "../domain/schemas.ts";
import { sha256, toHex } from "./credential.ts";
import type { OAuthNamespaceMode } from "../config.ts";

/** The start of every claim-made namespace unless `OAUTH_NAMESPACES=shared`. */
export const OAUTH_NAMESPACE_PREFIX = "oauth.";

/** Hex digits of the hash a mapped name ends with. */
const HASH_DIGITS = 16;

/** The longest namespace name. */
const MAX_NAME = 64;

/** The form every mapped name takes: its end is `-` and {@link HASH_DIGITS} lower-case hex digits. */
const MAPPED_END = new RegExp(`-[0-9a-f]{${HASH_DIGITS}}$`);

/**
 * The namespace of an OAuth claim value: {@link OAUTH_NAMESPACE_PREFIX} (unless `mode` is `shared`)
 * and a name for the value. A value that is a valid name, fits after the prefix, and does not end the
 * way a mapped name does (`-` and 16 lower-case hex digits) is used as it is. Every other value (not a
 * valid name, too long, or one that looks mapped) becomes readable and unique: each run of other
 * characters turns into `_`, the result is cut to fit (47 characters without a prefix, 41 with it),
 * and `-` plus the first 16 hex digits of the SHA-256 of the whole value are appended
 * (`auth0|6612ab` → `oauth.auth0_6612ab-3f1c…`).
 *
 * So the names kept as they are and the mapped names are disjoint sets, and two mapped names differ
 * whenever their values differ (unless 64 bits of SHA-256 collide): a user whose claim is literally
 * another user's mapped name gets a namespace of their own. A valid name ending like a mapped one
 * (rare: `team-0123456789abcdef`) is therefore mapped too.
 */
export function namespaceFromClaim(value: string, mode: OAuthNamespaceMode = "prefixed"): string {
  const prefix = mode === "shared" ? "" : OAUTH_NAMESPACE_PREFIX;
  const candidate: unknown = value; // isNamespace narrows its argument; keep `value` a string
  if (isNamespace(candidate) && prefix.length + value.length <= MAX_NAME && !MAPPED_END.test(value)) {
    return `${prefix}${value}`;
  }
  const readable = value.replace(/[^A-Za-z0-9._-]+/g, "_").slice(
    0,
    MAX_NAME - prefix.length - 1 - HASH_DIGITS,
  );
  return `${prefix}${readable}-${toHex(sha256(value)).slice(0, HASH_DIGITS)}`;
}
