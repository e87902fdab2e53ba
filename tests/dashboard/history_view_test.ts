/** The dashboard shows a session's history from the server's store, and none when history is off. */
import assert from "node:assert/strict";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { makeApp, send } from "../support/http.ts";

async function viewOf(store: MemoryStore): Promise<{ session: { history: unknown } | null }> {
  await store.space("default").updateTree("plan", (t) => createTask(t, { id: "a", name: "A" }), {
    tool: "createTask",
  });
  await store.space("default").updateTree("plan", (t) => startTask(t, "a"), { tool: "startTask" });
  await using app = makeApp({}, { store });
  const response = await send(app.app, { path: "/api/view?session=plan" });
  assert.equal(response.status, 200);
  return await response.json();
}

Deno.test("the dashboard's session view carries the store's history, newest first", async () => {
  const view = await viewOf(new MemoryStore());
  const history = view.session?.history as {
    revision: number;
    entries: { revision: number; tool: string }[];
  };
  assert.equal(history.revision, 2);
  assert.deepEqual(history.entries.map((e) => [e.revision, e.tool]), [[2, "startTask"], [1, "createTask"]]);
});

Deno.test("with HISTORY_SIZE=0 the dashboard shows no history", async () => {
  const view = await viewOf(new MemoryStore({ historySize: 0 }));
  assert.equal(view.session?.history, null);
});
