/**
 * Several agents, one plan: three real `main.ts --stdio` server processes on one FILE_PATH (and on
 * one KV_PATH), driven at once through the SDK client with interleaved creates, starts, completes,
 * work saves and reads, and progress upserts. Afterwards every acknowledged change is present, the
 * invariants hold, the servers agree, and no progress revision was handed out twice (a lost
 * read-modify-write would repeat one). Run once in namespace `default` and once with every server in
 * another namespace (`CHECKLIST_NAMESPACE`, docs/namespaces.md), which must leave `default` empty.
 */
import assert from "node:assert/strict";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { call, type Connection, ok, spawnStdio } from "../support/harness.ts";
import { canonical } from "./fixtures/canonical.ts";

const AGENTS = 3;
const ROUNDS = 10;

interface Acks {
  created: Set<string>;
  completed: Set<string>;
  works: Set<string>;
  revisions: number[];
  snapshotWork?: string;
}

async function agent(conn: Connection, i: number, planId: string, acks: Acks): Promise<void> {
  const { client } = conn;
  for (let r = 0; r < ROUNDS; r++) {
    const { task } = await ok<{ task: Task }>(client, "createTask", {
      sessionId: "plan",
      parentId: planId,
      name: `agent ${i} round ${r}`,
      tasks: [{ id: `a${i}-${r}-x`, name: "x" }, { id: `a${i}-${r}-y`, name: "y" }],
    });
    for (const id of [task.id, `a${i}-${r}-x`, `a${i}-${r}-y`]) acks.created.add(id);
    const started = await call(client, "startTask", { sessionId: "plan", id: planId });
    if (!started.isError) {
      const leaf = (started.structuredContent as { task: { id: string } }).task.id;
      const done = await call(client, "completeTask", {
        sessionId: "plan",
        id: leaf,
        resolution: `agent ${i}`,
      });
      if (!done.isError) acks.completed.add(leaf);
    }
    if (r % 3 === 0 || r === ROUNDS - 1) {
      const last = r === ROUNDS - 1 && i === 0;
      const saved = await ok<{ workId: string }>(client, "save_current_work_info", {
        work_summarize: `agent ${i} did round ${r}`,
        work_description: `agent ${i} round ${r}`,
        ...(last ? { sessionId: "plan" } : {}),
      });
      acks.works.add(saved.workId);
      if (last) acks.snapshotWork = saved.workId;
    }
    if (r % 4 === 1) {
      const known = [...acks.works];
      await ok(client, "get_work_by_id", { workId: known[(i + r) % known.length]! });
    }
    const progress = await ok<{ revision: number }>(client, "mem_progress", {
      project: "shared",
      content: JSON.stringify({
        goal: "ship",
        completed: [`agent ${i} round ${r}`],
        next_steps: [],
        blockers: [],
      }),
    });
    acks.revisions.push(progress.revision);
  }
}

for (
  const [kind, namespace] of [["file", "default"], ["kv", "default"], ["file", "team-x"], [
    "kv",
    "team-x",
  ]] as const
) {
  const where = namespace === "default" ? "" : ` in namespace ${namespace}`;
  Deno.test(`${AGENTS} server processes on one ${kind === "file" ? "FILE_PATH" : "KV_PATH"}${where} lose no acknowledged change`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-multi-" });
    const path = `${dir}/${kind === "file" ? "plan.json" : "plan.sqlite"}`;
    const env = {
      [kind === "file" ? "FILE_PATH" : "KV_PATH"]: path,
      WORK_CACHE_SIZE: "1000",
      CHECKLIST_NAMESPACE: namespace,
    };
    // LOG_LEVEL=info and stderr kept: when a server ends before its input does, its log says why.
    const agents = await Promise.all(
      Array.from(
        { length: AGENTS },
        () => spawnStdio({ env: { ...env, LOG_LEVEL: "info" }, keepStderr: true }),
      ),
    );
    const logs = () => agents.map((conn, i) => `server ${i}:\n${conn.stderr()}`).join("\n");
    try {
      const { task: plan } = await ok<{ task: Task }>(agents[0]!.client, "createTask", {
        sessionId: "plan",
        name: "Plan",
      });
      const acks: Acks = {
        created: new Set([plan.id]),
        completed: new Set(),
        works: new Set(),
        revisions: [],
      };
      await Promise.all(agents.map((conn, i) => agent(conn, i, plan.id, acks))).catch((error) => {
        throw new Error(`${(error as Error).message}\n${logs()}`, { cause: error });
      });

      const views = await Promise.all(
        agents.map(async ({ client }) =>
          canonical((await ok<{ task: Task }>(client, "getTask", { sessionId: "plan", id: plan.id })).task)
        ),
      );
      for (const view of views) assert.equal(view, views[0], "every server sees the same plan");
      const snapshot = await ok<{ work_tasks?: Task[] }>(agents[1]!.client, "get_work_by_id", {
        workId: acks.snapshotWork!,
      });
      assert.ok(snapshot.work_tasks?.[0]?.tasks.length, "the snapshot saved by another process is readable");
      for (const conn of agents) await conn.close();

      const store = kind === "file" ? await JsonFileStore.open(path) : await KvStore.open(path);
      try {
        const space = store.space(namespace);
        assert.deepEqual(await store.listNamespaces(), [namespace], "nothing was written elsewhere");
        const problems = await space.readTree("plan", (tree) => {
          const out = invariantViolations(tree!);
          for (const id of acks.created) if (!tree!.get(id)) out.push(`created ${id} lost`);
          for (const id of acks.completed) {
            if (tree!.get(id)?.status !== "done") out.push(`completion of ${id} lost`);
          }
          assert.equal(tree!.size, 1 + AGENTS * ROUNDS * 3);
          return out;
        });
        assert.deepEqual(problems, []);
        assert.ok(acks.completed.size >= ROUNDS, `completions acknowledged: ${acks.completed.size}`);
        const works = await space.readWorks((entries) => new Set(entries.keys()));
        for (const id of acks.works) assert.ok(works.has(id), `work ${id} lost`);
        assert.equal(works.size, acks.works.size);
        const revisions = [...acks.revisions].sort((a, b) => a - b);
        assert.deepEqual(
          revisions,
          Array.from({ length: AGENTS * ROUNDS }, (_, k) => k + 1),
          "each upsert got its own revision",
        );
        assert.equal((await space.readProgress("shared"))!.revision, AGENTS * ROUNDS);
      } finally {
        await store.close();
      }
    } finally {
      await Promise.all(agents.map((conn) => conn.close()));
      await Deno.remove(dir, { recursive: true });
    }
  });
}
