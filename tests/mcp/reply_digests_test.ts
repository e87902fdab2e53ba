/**
 * The replies of the hot tools stay byte for byte what they were when the speed work began
 * (BENCHMARKS.md "What the latency figures say"): every reply of a fixed run over a 10,000-task
 * session (the latency bench's shape, fixed ids, fixed clock) is hashed, text, structured content,
 * `_meta` and `isError` alike, and compared with the digests in `fixtures/reply_digests.json`.
 *
 * A reply that changes on purpose (a contract change) is re-recorded with
 * `WRITE_REPLY_DIGESTS=1 deno test --allow-all tests/mcp/reply_digests_test.ts`; the diff of the
 * fixture then shows which replies changed.
 */
import assert from "node:assert/strict";
import { call, connectInMemory, type ToolResult } from "../support/harness.ts";

const FIXTURE = new URL("./fixtures/reply_digests.json", import.meta.url);
const NOW = Date.parse("2026-11-26T08:00:00.000Z");
const SESSION = "bench";

/** The latency bench's shape: 10 roots × 9 subtasks × 110 leaves, ids `r3`, `r3.m2`, `r3.m2.l17`. */
const ROOTS = 10, MIDS = 9, LEAVES = 110;

function leafId(r: number, m: number, l: number): string {
  return `r${r}.m${m}.l${l}`;
}

function mid(r: number, m: number): Record<string, unknown> {
  const tasks = Array.from(
    { length: LEAVES },
    (_, l) => ({ id: leafId(r, m, l), name: `Leaf ${r}.${m}.${l}` }),
  );
  return { id: `r${r}.m${m}`, name: `Step ${r}.${m}`, tasks };
}

/** One step of the run: a label, the tool and its arguments. */
type Step = [label: string, tool: string, args: Record<string, unknown>];

/** The run: reads, a walk of start/complete across a subtask's end, team calls, and refusals. */
function steps(): Step[] {
  const out: Step[] = [];
  const s = (label: string, tool: string, args: Record<string, unknown>) =>
    out.push([label, tool, { sessionId: SESSION, ...args }]);
  for (const id of ["r0", "r0.m0", leafId(0, 0, 0), leafId(4, 5, 60), leafId(9, 8, 109)]) {
    s(`get ${id}`, "getTask", { id });
  }
  s("list roots", "listTasks", {});
  s("list r0", "listTasks", { parentId: "r0" });
  for (let l = 0; l < LEAVES + 3; l++) {
    const m = Math.floor(l / LEAVES), at = l % LEAVES;
    s(`start ${leafId(0, m, at)}`, "startTask", { id: leafId(0, m, at) });
    s(`complete ${leafId(0, m, at)}`, "completeTask", { id: leafId(0, m, at), resolution: `Done ${l}.` });
  }
  s("start a parent descends", "startTask", { id: "r0.m1" });
  s("start again: already in progress", "startTask", { id: "r0.m1" });
  s("start out of order", "startTask", { id: leafId(3, 2, 1) });
  s("start a done leaf", "startTask", { id: leafId(0, 0, 5) });
  s("complete a parent", "completeTask", { id: "r0.m2", resolution: "No." });
  s("get unknown", "getTask", { id: "nope" });
  s("make r0 parallel", "updateTask", { id: "r0", parallel: true });
  s("make r0.m2 parallel", "updateTask", { id: "r0.m2", parallel: true });
  s("r0.m3 waits for r0.m2", "updateTask", { id: "r0.m3", blocked_by: ["r0.m2"] });
  s("claim for ada", "claimTask", { agent: "ada", id: "r0.m2", lease_seconds: 600 });
  s("claim for bob", "claimTask", { agent: "bob", id: "r0.m2" });
  s("bob renews", "claimTask", { agent: "bob", id: "r0.m2" });
  s("ada completes hers", "completeTask", { id: leafId(0, 2, 0), resolution: "Ada did it.", agent: "ada" });
  s("ada completes bob's", "completeTask", { id: leafId(0, 2, 1), resolution: "Not mine.", agent: "ada" });
  s("cy starts a blocked leaf", "startTask", { id: leafId(0, 3, 0), agent: "cy" });
  s("get a held leaf", "getTask", { id: leafId(0, 2, 1) });
  s("anonymous completes beside agents", "completeTask", { id: leafId(0, 1, 3), resolution: "Mine." });
  s("start out of order at root level", "startTask", { id: leafId(1, 0, 0) });
  s("create under r2", "createTask", { parentId: "r2.m0", id: "new1", name: "New one", insertIndex: 3 });
  s("delete it", "deleteTask", { id: "new1" });
  s("get r1", "getTask", { id: "r1" });
  return out;
}

async function digest(result: ToolResult & { _meta?: unknown }): Promise<string> {
  const { content, structuredContent, isError, _meta } = result;
  const bytes = new TextEncoder().encode(JSON.stringify({ content, structuredContent, isError, _meta }));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash.slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("replies of getTask, startTask, completeTask and the other task tools on a 10,000-task session are unchanged, byte for byte", async () => {
  await using conn = await connectInMemory({ now: () => NOW });
  for (let r = 0; r < ROOTS; r++) {
    const first = [0, 1, 2, 3].map((m) => mid(r, m));
    const made = await call(conn.client, "createTask", {
      sessionId: SESSION,
      id: `r${r}`,
      name: `Goal ${r}`,
      description: `Root ${r}`,
      tasks: first,
    });
    assert.ok(!made.isError);
    for (let m = 4; m < MIDS; m++) {
      assert.ok(
        !(await call(conn.client, "createTask", { sessionId: SESSION, parentId: `r${r}`, ...mid(r, m) }))
          .isError,
      );
    }
  }
  const seen: [string, string][] = [];
  for (const [label, tool, args] of steps()) {
    seen.push([label, await digest(await call(conn.client, tool, args))]);
  }
  if (Deno.env.get("WRITE_REPLY_DIGESTS") === "1") {
    await Deno.writeTextFile(FIXTURE, JSON.stringify(Object.fromEntries(seen), null, 2) + "\n");
  }
  const expected = JSON.parse(await Deno.readTextFile(FIXTURE)) as Record<string, string>;
  assert.deepEqual(Object.keys(expected), seen.map(([label]) => label), "the run's steps changed");
  const changed = seen.filter(([label, hash]) => expected[label] !== hash).map(([label]) => label);
  assert.deepEqual(changed, [], `replies changed: ${changed.join("; ")}`);
});
