/**
 * The official client (`@modelcontextprotocol/client`, SDK v2), the one the tests talk through: it
 * speaks 2026-07-28 and the handshake era, chosen per connection ({@link clientOptions}). Tests
 * only: the client pulls in process spawning, which the server never needs.
 */
import { Client } from "@modelcontextprotocol/client";

export {
  Client,
  InMemoryTransport,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  SdkError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
export { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

/**
 * Which era a test client speaks: `modern` pins 2026-07-28 (no fallback), `legacy` is the 2025
 * `initialize` handshake (the client's default), `auto` probes with `server/discover` and falls back.
 */
export type ClientEra = "modern" | "legacy" | "auto";

/** What a test client announces (e.g. the MCP Apps extension, tests/support/plan_view.ts). */
export type ClientCapabilities = NonNullable<
  NonNullable<ConstructorParameters<typeof Client>[1]>["capabilities"]
>;

/** The client's options for `era`, announcing `capabilities`. */
export function clientOptions(
  era: ClientEra,
  capabilities?: ClientCapabilities,
): ConstructorParameters<typeof Client>[1] {
  const mode = era === "modern" ? { pin: "2026-07-28" } : era;
  return { versionNegotiation: { mode }, ...(capabilities ? { capabilities } : {}) } as ConstructorParameters<
    typeof Client
  >[1];
}

/** A new test client of `era`. */
export function newClient(
  era: ClientEra = "legacy",
  options: { name?: string; capabilities?: ClientCapabilities } = {},
): Client {
  return new Client(
    { name: options.name ?? "checklist-mcp-tests", version: "0.0.0" },
    clientOptions(era, options.capabilities),
  );
}
