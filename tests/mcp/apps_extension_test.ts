/**
 * lib/mcp/apps_extension.ts stands in for `@modelcontextprotocol/ext-apps/server` on the server's
 * start path: its names and helpers must answer exactly as the package's do.
 */
import assert from "node:assert/strict";
import * as official from "@modelcontextprotocol/ext-apps/server";
import * as ours from "../../lib/mcp/apps_extension.ts";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { PLAN_VIEW_URI } from "../../lib/plan_view/server/plan_resource.ts";
import { connectUi } from "../support/plan_view.ts";
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

Deno.test("the plan view is listed and read as the package's registerAppResource lists and reads it", async () => {
  // Ours: a real server. The listing is resources.ts's, the read goes through our registerAppResource.
  await using ui = await connectUi();
  const ourListing = (await ui.client.listResources()).resources.find((r) => r.uri === PLAN_VIEW_URI);
  const ourRead = await ui.client.readResource({ uri: PLAN_VIEW_URI });
  assert.ok(ourListing, "the plan view is listed");

  // The package's: its helper on the SDK's McpServer, with the same name, URI, config and document.
  const { uri: _uri, name, ...config } = ourListing;
  const server = new McpServer({ name: "t", version: "0" });
  official.registerAppResource(server, name, PLAN_VIEW_URI, config, () => ourRead);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    assert.deepEqual((await client.listResources()).resources, [ourListing]);
    assert.deepEqual(await client.readResource({ uri: PLAN_VIEW_URI }), ourRead);
  } finally {
    await client.close();
    await server.close();
  }
});
