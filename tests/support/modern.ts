/**
 * A 2026-07-28 request as a raw client writes it (no SDK client): the per-request `_meta` envelope
 * (protocol version, client info, client capabilities; the keys are the SDK's) and, over HTTP, the
 * standard headers `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`. Written once for the tests
 * and the benchmarks.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from "@modelcontextprotocol/client";

/** The protocol revision of the modern era. */
export const MODERN_VERSION = "2026-07-28";

/** The `_meta` envelope every 2026-07-28 request carries, with `extra` keys added (or overridden). */
export function modernEnvelope(
  clientName = "raw",
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    [PROTOCOL_VERSION_META_KEY]: MODERN_VERSION,
    [CLIENT_CAPABILITIES_META_KEY]: {},
    [CLIENT_INFO_META_KEY]: { name: clientName, version: "0.0.0" },
    ...extra,
  };
}

/** `params` with the envelope in its `_meta` (keys already in `params._meta` win). */
export function withEnvelope(
  params: Record<string, unknown> | undefined,
  clientName?: string,
): Record<string, unknown> {
  const meta = (params?._meta ?? {}) as Record<string, unknown>;
  return { ...params, _meta: modernEnvelope(clientName, meta) };
}

/**
 * The standard headers of a 2026-07-28 POST of `method`: `Mcp-Name` mirrors `params.name`
 * (tools/call, prompts/get) or `params.uri` (resources/read, resources/subscribe), as the
 * Streamable HTTP binding asks (names in ASCII: others would need the binding's Base64 form).
 */
export function modernHeaders(method: string, params?: Record<string, unknown>): Record<string, string> {
  const name = method === "tools/call" || method === "prompts/get"
    ? params?.name
    : method.startsWith("resources/")
    ? params?.uri
    : undefined;
  return {
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method,
    ...(typeof name === "string" ? { "mcp-name": name } : {}),
  };
}
