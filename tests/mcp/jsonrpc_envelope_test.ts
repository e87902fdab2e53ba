/**
 * lib/mcp/jsonrpc.ts checks a message's JSON-RPC envelope by hand instead of with the SDK's
 * `JSONRPCMessageSchema` (whose module builds every MCP schema at load). Over arbitrary values
 * shaped like messages, both must accept and refuse the same.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
// @ts-types="@modelcontextprotocol/sdk/types"
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { isMessage } from "../../lib/mcp/jsonrpc.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

const json: fc.Arbitrary<unknown> = fc.jsonValue();
const id = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(2 ** 53),
  fc.double({ noNaN: true }),
  fc.constant(null),
  fc.boolean(),
  json,
);
const meta = fc.oneof(
  fc.dictionary(fc.string(), json),
  fc.record({ progressToken: id }, { requiredKeys: [] }),
  fc.record({ "io.modelcontextprotocol/related-task": fc.oneof(fc.record({ taskId: id }), json) }),
  json,
);
const params = fc.oneof(
  fc.dictionary(fc.string(), json),
  fc.record({ _meta: meta, cursor: fc.string() }, { requiredKeys: [] }),
  fc.array(json),
  json,
);
const errorBody = fc.oneof(
  fc.record(
    {
      code: fc.oneof(fc.integer(), fc.double(), fc.string()),
      message: fc.oneof(fc.string(), json),
      data: json,
    },
    { requiredKeys: [] },
  ),
  json,
);
/** Objects with any subset of a message's members, each valid or not, sometimes one member more. */
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("2.0"), fc.constant("1.0"), json),
    id,
    method: fc.oneof(fc.string(), fc.string(), json),
    params,
    result: fc.oneof(fc.dictionary(fc.string(), json), fc.record({ _meta: meta }), json),
    error: errorBody,
    extra: json,
  },
  { requiredKeys: [] },
);

const goodId = fc.oneof(fc.string(), fc.integer());
/** Messages with every member right but one that varies: what each check alone decides. */
const nearlyValid = fc.oneof(
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: goodId,
    method: fc.string(),
    params: fc.record({ _meta: meta }),
  }),
  fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.string() }),
  fc.record({ jsonrpc: fc.constant("2.0"), method: fc.string(), params }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: goodId, result: fc.record({ _meta: meta }) }),
  fc.record({ jsonrpc: fc.constant("2.0"), id, result: fc.dictionary(fc.string(), json) }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: goodId, error: errorBody }),
);

Deno.test("isMessage accepts exactly what the SDK's JSONRPCMessageSchema accepts", () => {
  fc.assert(
    fc.property(fc.oneof(nearlyValid, message, json), (value) => {
      assert.equal(isMessage(value), JSONRPCMessageSchema.safeParse(value).success, JSON.stringify(value));
    }),
    { numRuns: fuzzRuns(20_000), seed: FUZZ_SEED },
  );
});

Deno.test("isMessage: the four kinds, and what each must not hold", () => {
  const accepted = [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "x", _meta: { progressToken: 3 } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 1, result: {} },
    { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "m", data: [1] } },
    { jsonrpc: "2.0", error: { code: -32700, message: "m" } },
  ];
  const refused = [
    { jsonrpc: "2.0", id: 1.5, method: "ping" },
    { jsonrpc: "2.0", id: null, method: "ping" },
    { jsonrpc: "2.0", id: 1, method: "ping", params: [] },
    { jsonrpc: "2.0", id: 1, method: "ping", params: { _meta: { progressToken: 1.5 } } },
    { jsonrpc: "2.0", id: 1, method: "ping", extra: 1 },
    { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "m" } },
    { jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "m" } },
    { jsonrpc: "1.0", id: 1, method: "ping" },
    [{ jsonrpc: "2.0", id: 1, method: "ping" }],
  ];
  for (const value of accepted) assert.ok(isMessage(value), JSON.stringify(value));
  for (const value of refused) assert.ok(!isMessage(value), JSON.stringify(value));
});
