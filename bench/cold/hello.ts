/**
 * Cold-start baseline: Deno itself. Reads the first line on stdin and answers it as an MCP
 * `initialize` result by hand, importing nothing: what any Deno stdio server pays before its own code.
 */
const reader = Deno.stdin.readable.getReader();
let text = "";
const decoder = new TextDecoder();
while (!text.includes("\n")) {
  const { done, value } = await reader.read();
  if (done) break;
  text += decoder.decode(value, { stream: true });
}
const { id } = JSON.parse(text.slice(0, text.indexOf("\n"))) as { id: number };
const result = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  serverInfo: { name: "hello", version: "0.0.0" },
};
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n"));
reader.releaseLock();
