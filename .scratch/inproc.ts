import { Client, InMemoryTransport } from "../tests/support/sdk_client.ts";
import { createServer } from "../lib/mcp/server.ts";
import { MemoryStore } from "../lib/store/memory_store.ts";
import { createLogger } from "../lib/log.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
const server = createServer({ store: new MemoryStore(), log: createLogger({ level: "error" }) });
const [a, b] = InMemoryTransport.createLinkedPair();
await server.connect(a);
const client = new Client({ name: "t", version: "1" });
await client.connect(b);
const call = (name: string, args: any) =>
  client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema);
const mk = (n: number, d: number): any[] =>
  Array.from({ length: n }, (_, i) => ({ name: `task ${d}-${i}`, tasks: d > 0 ? mk(n, d - 1) : [] }));
const leaves: string[] = [];
for (let r = 0; r < 20; r++) {
  const res: any = await call("createTask", {
    name: "root " + r,
    tasks: mk(9, 1).map((t) => ({ ...t, tasks: t.tasks.concat(mk(40, 0)) })),
  });
  for (const s of res.structuredContent.task.tasks) for (const l of s.tasks) leaves.push(l.id);
}
console.log("leaves", leaves.length);
let tStart = 0, tComplete = 0, tGet = 0, n = 0;
for (const id of leaves.slice(0, 3000)) {
  let t = performance.now();
  await call("startTask", { id });
  tStart += performance.now() - t;
  t = performance.now();
  await call("completeTask", { id, resolution: "ok" });
  tComplete += performance.now() - t;
  t = performance.now();
  await call("getTask", { id });
  tGet += performance.now() - t;
  n++;
}
console.log(
  "start",
  (tStart / n).toFixed(3),
  "complete",
  (tComplete / n).toFixed(3),
  "get",
  (tGet / n).toFixed(3),
);
