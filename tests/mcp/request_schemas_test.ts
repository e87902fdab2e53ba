/**
 * lib/mcp/request_schemas.ts stands in for the SDK's `types.js` on the server's path: the protocol
 * versions and logging levels must be the SDK's, and each request must be accepted and refused as
 * the SDK's schema for it does. (One difference is deliberate: a client's `capabilities` are read
 * as any object of settings, not checked member by member, since this server reads only
 * `extensions`.)
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import * as sdk from "@modelcontextprotocol/sdk/types.js";
import * as ours from "../../lib/mcp/request_schemas.ts";

Deno.test("the protocol versions and logging levels are the SDK's", () => {
  assert.equal(ours.LATEST_PROTOCOL_VERSION, sdk.LATEST_PROTOCOL_VERSION);
  assert.deepEqual(ours.SUPPORTED_PROTOCOL_VERSIONS, sdk.SUPPORTED_PROTOCOL_VERSIONS);
  assert.deepEqual(ours.LOGGING_LEVELS, sdk.LoggingLevelSchema.options);
});

const cases: [keyof typeof ours & keyof typeof sdk, unknown[]][] = [
  ["InitializeRequestSchema", [
    { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    {
      protocolVersion: "x",
      capabilities: { extensions: { a: {} } },
      clientInfo: { name: "c", version: "1", title: "T" },
    },
    { protocolVersion: 1, capabilities: {}, clientInfo: { name: "c", version: "1" } },
    { protocolVersion: "x", capabilities: {}, clientInfo: { name: "c" } },
    { protocolVersion: "x", clientInfo: { name: "c", version: "1" } },
    { protocolVersion: "x", capabilities: "all", clientInfo: { name: "c", version: "1" } },
    undefined,
  ]],
  ["ReadResourceRequestSchema", [{ uri: "a://b" }, { uri: 1 }, {}, undefined, { uri: "x", _meta: {} }]],
  ["GetPromptRequestSchema", [
    { name: "p" },
    { name: "p", arguments: { a: "1" } },
    { name: "p", arguments: { a: 1 } },
    { name: "p", arguments: [] },
    { arguments: {} },
  ]],
  ["CompleteRequestSchema", [
    { ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "" } },
    { ref: { type: "ref/resource", uri: "a://{b}" }, argument: { name: "b", value: "x" }, context: {} },
    {
      ref: { type: "ref/resource", uri: "a://{b}" },
      argument: { name: "b", value: "x" },
      context: { arguments: { c: "d" } },
    },
    { ref: { type: "ref/other", name: "p" }, argument: { name: "a", value: "" } },
    { ref: { type: "ref/prompt" }, argument: { name: "a", value: "" } },
    { ref: { type: "ref/prompt", name: "p" }, argument: { name: "a" } },
    { ref: { type: "ref/prompt", name: "p" } },
  ]],
  ["SetLevelRequestSchema", [{ level: "debug" }, { level: "emergency" }, { level: "loud" }, {}, undefined]],
  ["ListToolsRequestSchema", [undefined, {}, { cursor: "c" }, { cursor: 1 }]],
  ["ListResourcesRequestSchema", [undefined, {}, { cursor: "c" }, { cursor: 1 }]],
  ["ListResourceTemplatesRequestSchema", [undefined, {}, { cursor: "c" }, { cursor: 1 }]],
  ["ListPromptsRequestSchema", [undefined, {}, { cursor: "c" }, { cursor: 1 }]],
  ["PingRequestSchema", [undefined, {}, { _meta: {} }]],
  ["InitializedNotificationSchema", [undefined, {}]],
  ["CancelledNotificationSchema", [
    { requestId: 1 },
    { requestId: "a", reason: "r" },
    { requestId: 1.5 },
    {},
  ]],
];

Deno.test("each request schema accepts and refuses what the SDK's accepts and refuses", () => {
  for (const [name, paramsList] of cases) {
    const method = (sdk[name] as { shape: { method: { value: string } } }).shape.method.value;
    for (const params of paramsList) {
      const request = params === undefined ? { method } : { method, params };
      const theirs =
        (sdk[name] as { safeParse(v: unknown): { success: boolean } }).safeParse(request).success;
      const mine = (ours[name] as { safeParse(v: unknown): { success: boolean } }).safeParse(request).success;
      assert.equal(mine, theirs, `${name} ${JSON.stringify(params)}`);
    }
    const other = (ours[name] as { safeParse(v: unknown): { success: boolean } }).safeParse({
      method: "other",
    });
    assert.equal(other.success, false, `${name} refuses another method`);
  }
});
