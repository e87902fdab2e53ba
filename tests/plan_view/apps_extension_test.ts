/**
 * The plan view is registered as `@modelcontextprotocol/ext-apps/server`'s `registerAppResource`
 * registers an MCP App (lib/plan_view/server/plan_resource.ts): listed and read alike, in both eras.
 */
import assert from "node:assert/strict";
import * as official from "@modelcontextprotocol/ext-apps/server";
import { McpServer } from "@modelcontextprotocol/server";
import { PLAN_VIEW_URI } from "../../lib/plan_view/server/plan_resource.ts";
import { connectUi } from "../support/plan_view.ts";
import { InMemoryTransport, newClient } from "../support/sdk_client.ts";

for (const era of ["legacy", "modern"] as const) {
  Deno.test(`the plan view is listed and read as the package's registerAppResource lists and reads it (${era})`, async () => {
    // Ours: a real server.
    await using ui = await connectUi({ era });
    const ourListing = (await ui.client.listResources()).resources.find((r) => r.uri === PLAN_VIEW_URI);
    const ourRead = await ui.client.readResource({ uri: PLAN_VIEW_URI });
    assert.ok(ourListing, "the plan view is listed");

    // The package's: its helper on the SDK's McpServer, with the same name, URI, config and document.
    const { uri: _uri, name, ...config } = ourListing;
    const server = new McpServer({ name: "t", version: "0" });
    official.registerAppResource(server, name, PLAN_VIEW_URI, config, () => ourRead);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = newClient("legacy");
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
}
