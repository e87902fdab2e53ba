/**
 * History with several processes (docs/history.md): two real `main.ts --stdio` servers on
 * one FILE_PATH (and on one KV_PATH) change one session at once. Every acknowledged change has its
 * own revision, the history holds exactly the acknowledged changes with consecutive revisions, and
 * a restore made through one server is what the other one sees.
 */
import assert from "node:assert/strict";
import type { Task } from "../../lib/domain/schemas.ts";
import { type Connection, ok, spawnStdio } from "../support/harness.ts";

const ROUNDS = 12;

interface Entry {
  revision: number;
  tool: string;
}

async function agent(conn: Connection, i: number, acks: Map<number, string>): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) {
    const created = await ok<{ revision: number; task: Task }>(conn.client, "createTask", {
      sessionId: "plan",
      parentId: "root",
      id: `a${i}-${r}`,
      name: `agent ${i} round ${r}`,
    });
    acks.set(created.revision, "createTask");
    const renamed = await ok<{ revision: number }>(conn.client, "updateTask", {
      sessionId: "plan",
      id: `a${i}-${r}`,
      description: `by agent ${i}`,
    });
    acks.set(renamed.revision, "updateTask");
  }
}

for (const kind of ["FILE_PATH", "KV_PATH"] as const) {
  Deno.test(`two servers on one ${kind}: each acknowledged change has its own revision and entry, nothing else`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-history-multi-" });
    const env = { [kind]: `${dir}/${kind === "FILE_PATH" ? "plan.json" : "plan.sqlite"}` };
    const servers = await Promise.all([spawnStdio({ env }), spawnStdio({ env })]);
    try {
      const [a, b] = servers as [Connection, Connection];
      const first = await ok<{ revision: number }>(a.client, "createTask", {
        sessionId: "plan",
        id: "root",
        name: "Root",
      });
      const acks = new Map<number, string>([[first.revision, "createTask"]]);
      await Promise.all([agent(a, 0, acks), agent(b, 1, acks)]);
      const changes = 1 + 2 * ROUNDS * 2;
      assert.equal(acks.size, changes, "no revision was acknowledged twice");

      const history = await ok<{ revision: number; entries: Entry[] }>(b.client, "task_history", {
        sessionId: "plan",
        limit: 100,
      });
      assert.equal(history.revision, changes);
      assert.deepEqual(
        history.entries.map((e) => [e.revision, e.tool]),
        [...acks].sort(([x], [y]) => y - x),
        "the history is exactly the acknowledged changes, newest first, consecutive",
      );

      // A restore through one server is what the other sees, and it is a revision of its own.
      const restored = await ok<{ revision: number }>(a.client, "restore_tasks", {
        sessionId: "plan",
        revision: 1,
      });
      assert.equal(restored.revision, changes + 1);
      const seen = await ok<{ task: Task }>(b.client, "getTask", { sessionId: "plan", id: "root" });
      assert.deepEqual(seen.task.tasks, []);
      const undo = await ok<{ revision: number }>(b.client, "restore_tasks", {
        sessionId: "plan",
        revision: changes,
      });
      assert.equal(undo.revision, changes + 2);
      const back = await ok<{ task: Task }>(a.client, "getTask", { sessionId: "plan", id: "root" });
      assert.equal(back.task.tasks.length, 2 * ROUNDS);
    } finally {
      await Promise.all(servers.map((conn) => conn.close()));
      await Deno.remove(dir, { recursive: true });
    }
  });
}
