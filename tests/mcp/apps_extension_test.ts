/**
 * lib/mcp/apps_extension.ts stands in for `@modelcontextprotocol/ext-apps/server` on the server's
 * start path: its names and helpers must answer exactly as the package's do.
 */
import assert from "node:assert/strict";
import * as official from "@modelcontextprotocol/ext-apps/server";
import * as ours from "../../lib/mcp/apps_extension.ts";
import { McpServer } from "../../lib/mcp/sdk.ts";
import { Client, InMemoryTransport } from "../support/sdk_client.ts";

Deno.test("the MCP Apps names equal those of @modelcontextprotocol/ext-apps", () => {
  assert.equal(ours.EXTENSION_ID, official.EXTENSION_ID);
  assert.equal(ours.RESOURCE_MIME_TYPE, official.RESOURCE_MIME_TYPE);
});

Deno.test("getUiCapability reads a client's capabilities as the package's helper does", () => {
  const ui = { mimeTypes: [official.RESOURCE_MIME_TYPE] };
  for (
    const capabilities of [
      undefined,
      {},
      { extensions: {} },
      { extensions: { [official.EXTENSION_ID]: ui } },
      { extensions: { "other/extension": ui } },
    ]
  ) {
    assert.deepEqual(ours.getUiCapability(capabilities), official.getUiCapability(capabilities));
  }
});

Deno.test("registerAppResource lists and reads a resource as the package's helper does", async () => {
  const listed = async (register: typeof ours.registerAppResource) => {
    const server = new McpServer({ name: "t", version: "0" });
    const config = { title: "Plan", description: "d", _meta: { ui: { prefersBorder: true } } };
    register(server, "plan", "ui://t/plan.html", config, (uri: URL) => ({
      contents: [{ uri: uri.href, mimeType: ours.RESOURCE_MIME_TYPE, text: "<p>hi</p>" }],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "0" });
    await server.connect(serverSide);
    await client.connect(clientSide);
    try {
      return [await client.listResources(), await client.readResource({ uri: "ui://t/plan.html" })];
    } finally {
      await client.close();
      await server.close();
    }
  };
  assert.deepEqual(
    await listed(ours.registerAppResource),
    await listed(official.registerAppResource as typeof ours.registerAppResource),
  );
});
