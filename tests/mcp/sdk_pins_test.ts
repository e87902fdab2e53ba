/**
 * What our code takes on trust from the SDK, held so a new SDK version that changes it fails here
 * rather than in front of a user (lib/mcp/checklist_server.ts):
 * - a request its schema refuses is thrown with the validator's issues as JSON at the end of the
 *   message, which `validatorIssue` reads to answer one plain line;
 * - the `_wrapHandler` override keeps the SDK's validation of `tools/call` results on every path
 *   through it: a result that breaks the protocol's result schema is refused in both eras, whether
 *   the call's arguments were an object or were set aside for the tool to refuse.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { type ChecklistServer, type Era, validatorIssue } from "../../lib/mcp/checklist_server.ts";
import { type JSONRPCRequest, Server, type ServerContext } from "../../lib/mcp/sdk.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { connectServer } from "../support/harness.ts";
import { quietLogger } from "../support/logs.ts";

const ERAS: readonly Era[] = ["legacy", "modern"];

/** A plain SDK server that keeps the message of every error its own wrapper lets through. */
class RecordingServer extends Server {
  readonly messages: string[];

  constructor(messages: string[]) {
    super({ name: "plain", version: "0" }, { capabilities: { resources: {}, tools: {} } });
    this.messages = messages;
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Record<string, unknown>>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Record<string, unknown>> {
    const wrapped = super._wrapHandler(method, handler);
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (error) {
        this.messages.push((error as Error).message);
        throw error;
      }
    };
  }
}

Deno.test("the SDK throws a refused request with its validator's issues, which validatorIssue reads, in both eras", async (t) => {
  for (const era of ERAS) {
    await t.step(era, async () => {
      const messages: string[] = [];
      const make = () => {
        const server = new RecordingServer(messages);
        server.setRequestHandler("resources/read", () => ({ contents: [] }));
        server.setRequestHandler("tools/list", () => ({ tools: [] }));
        server.setRequestHandler("tools/call", () => ({ content: [] }));
        return server;
      };
      await using conn = await connectServer(make, { era });
      const refuse = (method: string, params: unknown) =>
        conn.client.request({ method, params } as never, z.any()).then(
          () => assert.fail(`${method} should be refused`),
          () => messages.at(-1) ?? assert.fail(`${method}: the SDK threw nothing through its wrapper`),
        );
      const read = validatorIssue(await refuse("resources/read", { uri: 123 }));
      assert.ok(read, `resources/read: ${messages.at(-1)}`);
      assert.ok(read.path.includes("uri"), JSON.stringify(read));
      assert.match(read.message, /expected string/);
      const call = validatorIssue(await refuse("tools/call", { name: "x", arguments: "not an object" }));
      assert.ok(call, `tools/call: ${messages.at(-1)}`);
      assert.ok(call.path.includes("arguments"), JSON.stringify(call));
    });
  }
});

Deno.test("our _wrapHandler keeps the SDK's tools/call result validation on every path, in both eras", async (t) => {
  for (const era of ERAS) {
    await t.step(era, async () => {
      const answered: unknown[] = [];
      const make = () => {
        const server = createServer({ store: new MemoryStore(), log: quietLogger(), era }) as ChecklistServer;
        // A tool whose result breaks the protocol's result schema: text that is not a string.
        server.answerCall = (_name, args) => {
          answered.push(args);
          return Promise.resolve({ content: [{ type: "text", text: 42 as unknown as string }] });
        };
        return server;
      };
      await using conn = await connectServer(make, { era });
      for (const args of [{ id: "a" }, "not an object", [1, 2], null]) {
        const error = await conn.client.request(
          { method: "tools/call", params: { name: "getTask", arguments: args } } as never,
          z.any(),
        ).then(
          (result) => assert.fail(`a broken result reached the client: ${JSON.stringify(result)}`),
          (e: { code: number; message: string }) => e,
        );
        assert.equal(error.code, -32602, error.message);
        assert.match(error.message, /Invalid params: `content\.0/, "the result was refused by the SDK");
        assert.deepEqual(answered.at(-1), args, "the tool saw the arguments as sent");
      }
    });
  }
});
