/**
 * Fair shares of a capped resource (docs/hosting.md "Hosting for a team"): the live MCP connections
 * (lib/mcp/connections.ts) and the event streams, the dashboard's and MCP's listen streams together
 * (stream_shares.ts), are shared among credentials so that no credential can close or lock out another's.
 *
 * With access control on, each credential (a tokens-file entry, `AUTH_TOKEN`, an OAuth user) holds
 * at most a quarter of the cap (rounded down, at least 1). A credential at its share, or any
 * credential when the cap is full, that opens another first gives up its own least recently used
 * one; a credential that holds none while the cap is full is refused until one ends. Without access
 * control every caller is the one local credential (the Host/Origin guard keeps them all on this
 * machine, where they cannot be told apart): it is the only tenant, so its share is the whole cap.
 * Pure: no Hono, no SDK.
 */

/** The most of `cap` one credential may hold when several share it: a quarter, rounded down, at least 1. */
export function fairShare(cap: number): number {
  return Math.max(1, Math.floor(cap / 4));
}

/**
 * The most of `cap` one credential may hold: with access control on (`tenants`) its
 * {@link fairShare}; without, the whole cap, for every caller is the one local credential.
 */
export function tenantShare(cap: number, tenants: boolean): number {
  return tenants ? fairShare(cap) : cap;
}

/** What a credential must do before it may open one more: nothing, give up its own oldest, or wait. */
export type Admission = "admit" | "close-own" | "refuse";

/**
 * The rule of the module doc: `held` is what the credential holds now, `total` what all hold, `share`
 * its share and `cap` the cap.
 */
export function admission(options: { held: number; total: number; share: number; cap: number }): Admission {
  const { held, total, share, cap } = options;
  if (held >= share) return "close-own";
  if (total < cap) return "admit";
  return held > 0 ? "close-own" : "refuse";
}
