/** What the dashboard reads from its namespaces: visibility by credential, the chosen session, history. */
import assert from "node:assert/strict";
import { createTask, startTask } from "../../lib/domain/task_ops.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { PageViewSchema } from "../../lib/view/model.ts";
import type { Credential } from "../../lib/access/credential.ts";
import { DashboardData, type Space } from "../../lib/web/data.ts";

function reader(namespaces: Credential["namespaces"]): Credential {
  return { name: "t", namespaces, own: "a", access: "read" };
}

async function spaces(): Promise<Space[]> {
  const a = new MemoryStore();
  const b = new MemoryStore();
  await a.updateTree("plan-a", (tree) => createTask(tree, { id: "x", name: "X" }));
  await b.updateTree("plan-b", (tree) => {
    createTask(tree, { id: "y", name: "Y" });
    return startTask(tree, "y");
  });
  return [
    {
      name: "a",
      store: a,
      history: (sessionId, limit) =>
        Promise.resolve({
          revision: 1,
          entries: [{
            revision: 1,
            at: "2026-11-23T08:00:00Z",
            tool: "createTask",
            summary: `${sessionId} ${limit}`,
          }],
        }),
    },
    { name: "b", store: b },
  ];
}

Deno.test("the page lists only the namespaces the credential may see", async () => {
  const all = await spaces();
  const data = new DashboardData(() => Promise.resolve(all));
  const onlyA = await data.page(reader(["a"]), {});
  PageViewSchema.parse(onlyA);
  assert.deepEqual(onlyA.namespaces.map((ns) => ns.name), ["a"]);
  assert.equal(onlyA.session?.id, "plan-a");
  const both = await data.page(reader("*"), {});
  assert.deepEqual(both.namespaces.map((ns) => ns.name), ["a", "b"]);
  // Without a choice, the first session with a task in progress is shown.
  assert.deepEqual([both.session?.namespace, both.session?.id], ["b", "plan-b"]);
  assert.equal(
    await data.children(reader(["a"]), { namespace: "b", session: "plan-b", offset: 0, count: 5 }),
    undefined,
  );
  assert.equal((await data.page(reader(["a"]), { namespace: "b", session: "plan-b" })).session, null);
});

Deno.test("a session's history shows when its namespace keeps one, and is null otherwise", async () => {
  const data = new DashboardData(async () => await spaces());
  const a = await data.page(reader("*"), { namespace: "a", session: "plan-a" });
  assert.deepEqual(a.session?.history?.entries.map((e) => e.summary), ["plan-a 20"]);
  const b = await data.page(reader("*"), { namespace: "b", session: "plan-b" });
  assert.equal(b.session?.history, null);
});
