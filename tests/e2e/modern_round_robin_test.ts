/**
 * 2026-07-28 is stateless over HTTP (docs/protocol.md "Protocol eras"): two server processes on one
 * `FILE_PATH`, and two on one `KV_PATH`, behind a round-robin "proxy" (a client `fetch` that sends
 * each request to the next process in turn) serve one SDK v2 client pinned to 2026-07-28, as Deno
 * Deploy's isolates would: every request answered, every change seen by the next request on the
 * other process, the invariants intact.
 */
import assert from "node:assert/strict";
import { call, ok } from "../support/harness.ts";
import { spawnServer } from "../support/server_process.ts";
import { newClient, StreamableHTTPClientTransport } from "../support/sdk_client.ts";

for (const store of ["FILE_PATH", "KV_PATH"] as const) {
  Deno.test(`two processes on one ${store} serve one 2026-07-28 client in turn`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-round-robin-" });
    try {
      const env = {
        [store]: `${dir}/${store === "FILE_PATH" ? "plan.json" : "plan.kv"}`,
        LOG_LEVEL: "error",
      };
      await using one = await spawnServer({ env });
      await using two = await spawnServer({ env });
      const targets = [new URL(one.url), new URL(two.url)];
      const served = [0, 0];
      let next = 0;
      const roundRobin: typeof fetch = (input, init) => {
        const i = next++ % targets.length;
        served[i]!++;
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.host = targets[i]!.host;
        return fetch(new Request(url, input instanceof Request ? input : init));
      };
      const client = newClient("modern");
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${one.url}/mcp`), { fetch: roundRobin }),
      );
      try {
        assert.equal(client.getProtocolEra(), "modern");
        await ok(client, "createTask", {
          sessionId: "rr",
          id: "p",
          name: "Plan",
          tasks: [{ id: "a", name: "A" }, { id: "b", name: "B" }, { id: "c", name: "C" }],
        });
        for (const id of ["a", "b", "c"]) {
          const started = await ok<{ task: { id: string } }>(client, "startTask", {
            sessionId: "rr",
            id: "p",
          });
          assert.equal(started.task.id, id, "each process sees what the other did");
          await ok(client, "completeTask", { sessionId: "rr", id, resolution: `${id} done` });
        }
        const plan = await ok<{ task: { status: string } }>(client, "getTask", { sessionId: "rr", id: "p" });
        assert.equal(plan.task.status, "done");
        const history = await call(client, "task_history", { sessionId: "rr" });
        assert.equal((history.structuredContent as { revision: number }).revision, 7, "every change once");
      } finally {
        await client.close();
      }
      assert.ok(served[0]! >= 5 && served[1]! >= 5, `both processes served: ${served}`);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  });
}
