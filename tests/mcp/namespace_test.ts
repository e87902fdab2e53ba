/** A server works in one namespace: its logs name it, and an invalid name builds no server. */
import assert from "node:assert/strict";
import { DomainError } from "../../lib/domain/errors.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { call, connectInMemory } from "../support/harness.ts";
import { recordingLogger } from "../support/logs.ts";

Deno.test("every log line of a server names its namespace", async (t) => {
  for (const namespace of [undefined, "team-a"]) {
    await t.step(namespace ?? "(none: default)", async () => {
      const { log, records } = recordingLogger();
      await using conn = await connectInMemory({ log, namespace });
      await call(conn.client, "createTask", { sessionId: "s", name: "A" });
      await call(conn.client, "getTask", { sessionId: "s", id: "missing" });
      const calls = records.filter((r) => r.msg === "tool call" || r.msg === "tool call failed");
      assert.equal(calls.length, 2);
      for (const record of calls) assert.equal(record.namespace, namespace ?? "default");
    });
  }
});

Deno.test("createServer refuses an invalid namespace", () => {
  for (const namespace of ["", "a/b", "x".repeat(65)]) {
    assert.throws(
      () =>
        createServer({
          store: new MemoryStore(),
          log: recordingLogger().log,
          namespace,
          features: [PLAN_VIEW],
        }),
      DomainError,
    );
  }
});
