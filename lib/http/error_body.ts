/** JSON-RPC error bodies for the HTTP edge: what a request gets when it is refused before MCP handling. */

/** A JSON-RPC error body (`id: null`: the request was not read as JSON-RPC). */
export function jsonRpcError(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}
