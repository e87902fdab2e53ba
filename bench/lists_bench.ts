/**
 * Size of the lists that grow with the number of sessions (`deno run -A bench/lists_bench.ts [N]`):
 * the dashboard's page and `/api/view`, and the first `resources/list` reply, with N sessions
 * (default 5,000) in a memory store, through the real app and a real SDK client in memory.
 */
import { createTask } from "../lib/domain/task_ops.ts";
import { createServer } from "../lib/mcp/server.ts";
import { PLAN_VIEW } from "../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../lib/store/memory_store.ts";
import { createDashboard } from "../lib/dashboard/server/routes.ts";
import { quietLogger } from "../tests/support/logs.ts";
import { Client, InMemoryTransport } from "../tests/support/sdk_client.ts";

const sessions = Number(Deno.args[0] ?? "5000");
const store = new MemoryStore();
for (let i = 0; i < sessions; i++) {
  const id = `session-${String(i).padStart(5, "0")}`;
  await store.space("default").updateTree(id, (t) => createTask(t, { id: "t", name: `Task of ${id}` }));
}
const log = quietLogger();
const { app } = createDashboard({ store, log });

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await run();
  return [value, Math.round((performance.now() - started) * 10) / 10];
}

const [html, pageMs] = await timed(async () => await (await app.request("http://127.0.0.1/")).text());
const [json, viewMs] = await timed(async () => await (await app.request("http://127.0.0.1/api/view")).text());
const server = createServer({ store, log, features: [PLAN_VIEW] });
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: "lists-bench", version: "0" });
await server.connect(serverSide);
await client.connect(clientSide);
const [first, listMs] = await timed(() => client.listResources());
let pages = 1;
let cursor = first.nextCursor;
const [, allMs] = await timed(async () => {
  while (cursor !== undefined) {
    cursor = (await client.listResources({ cursor })).nextCursor;
    pages++;
  }
});
console.log(JSON.stringify({
  sessions,
  page: { bytes: new TextEncoder().encode(html).length, ms: pageMs },
  view: { bytes: new TextEncoder().encode(json).length, ms: viewMs },
  resourcesList: {
    firstReplyBytes: new TextEncoder().encode(JSON.stringify(first)).length,
    perPage: first.resources.length,
    firstMs: listMs,
    pages,
    allPagesMs: allMs,
  },
}));
await client.close();
await server.close();
