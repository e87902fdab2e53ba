/**
 * A busy store never ends a server (docs/troubleshooting.md "The store: what you see when things go wrong"): several `main.ts --stdio` servers
 * started at the same instant on one new KV_PATH (or FILE_PATH), while another process holds the
 * database busy (a long SQLite write transaction, then one short one after another; for a file, its
 * lock), all write at once. None may exit before its input ends, each says why it exits when it does
 * (`exiting`, code 0, stdin ended), and every acknowledged write is in the store afterwards.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { Task } from "../../lib/domain/schemas.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import { serverEnv } from "../support/env.ts";
import { call, ok } from "../support/harness.ts";
import { CONFIG, ROOT } from "../support/paths.ts";
import { mainArgs } from "../support/server_process.ts";
import { Client, StdioClientTransport } from "../support/sdk_client.ts";
import { lines } from "../support/streams.ts";

const HOLDER = fileURLToPath(new URL("./fixtures/busy_holder.ts", import.meta.url));
const SERVERS = 4;
const ROUNDS = 4;

/** A stdio server whose stderr is kept, and whether it ended before the test closed it. */
interface Server {
  client: Client;
  stderr: () => string;
  endedEarly: () => boolean;
  close(): Promise<void>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: mainArgs(["--stdio"]),
    env: serverEnv({ LOG_LEVEL: "info", WORK_CACHE_SIZE: "1000", ...env }),
    cwd: ROOT,
    stderr: "pipe",
  });
  let text = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => (text += new TextDecoder().decode(chunk)));
  const client = new Client({ name: "busy-store-test", version: "0.0.0" });
  let closing = false;
  let early = false;
  client.onclose = () => (early ||= !closing);
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`a server did not start: ${(error as Error).message}\n${text}`);
  }
  return {
    client,
    stderr: () => text,
    endedEarly: () => early,
    close: async () => {
      closing = true;
      await client.close();
    },
  };
}

/** What the servers were told was saved. */
interface Acks {
  tasks: string[];
  works: string[];
  progress: Map<string, number>;
}

async function writeAtOnce(server: Server, i: number, acks: Acks): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) {
    const id = `s${i}-r${r}`;
    const project = `p${i}`;
    const replies = await Promise.all([
      call(server.client, "createTask", {
        sessionId: "busy",
        name: id,
        tasks: [{ id: `${id}.a`, name: "a" }],
      }),
      call(server.client, "save_current_work_info", { work_summarize: id, work_description: id }),
      call(server.client, "mem_progress", { project, content: JSON.stringify({ goal: id }) }),
    ]);
    // A busy store may refuse (STORE_UNAVAILABLE); what it acknowledged must be there.
    for (const reply of replies) {
      if (reply.isError) {
        const code = (reply.structuredContent as { error: { code: string } }).error.code;
        assert.equal(code, "STORE_UNAVAILABLE", JSON.stringify(reply.structuredContent));
      }
    }
    const [task, work, progress] = replies.map((reply) =>
      reply.isError ? undefined : reply.structuredContent
    );
    if (task) acks.tasks.push((task as { task: Task }).task.id, `${id}.a`);
    if (work) acks.works.push((work as { workId: string }).workId);
    if (progress) acks.progress.set(project, (progress as { revision: number }).revision);
  }
}

for (const kind of ["kv", "file"] as const) {
  const variable = kind === "kv" ? "KV_PATH" : "FILE_PATH";
  Deno.test(`${SERVERS} servers started at once on one new ${variable} that another process keeps busy never exit, and keep every acknowledged write`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "checklist-busy-" });
    const path = `${dir}/${kind === "kv" ? "store.sqlite" : "store.json"}`;
    const holder = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", CONFIG, HOLDER, kind, path, "1500"],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const servers: Server[] = [];
    try {
      const out = lines(holder.stdout);
      assert.equal((await out.next()).value, "holding");
      servers.push(
        ...await Promise.all(Array.from({ length: SERVERS }, () => startServer({ [variable]: path }))),
      );
      const acks: Acks = { tasks: [], works: [], progress: new Map() };
      await Promise.all(servers.map((server, i) => writeAtOnce(server, i, acks)));
      for (const server of servers) {
        await ok(server.client, "listTasks", { sessionId: "busy" });
        assert.ok(!server.endedEarly(), `a server exited mid-run:\n${server.stderr()}`);
      }
      await Promise.all(servers.map((server) => server.close()));
      for (const server of servers) {
        const log = server.stderr().trim().split("\n").map((line) => JSON.parse(line));
        const exits = log.filter((record) => record.msg === "exiting");
        assert.deepEqual(exits.map((record) => [record.exitCode, record.reason]), [[
          0,
          "stdin ended (a clean stop)",
        ]]);
        assert.deepEqual(log.filter((record) => /unhandled|uncaught/.test(record.msg)), []);
      }
      await holder.stdin.close();
      assert.equal((await holder.status).code, 0);

      const store = kind === "kv" ? await KvStore.open(path) : await JsonFileStore.open(path);
      try {
        const space = store.space("default");
        const missing = await space.readTree("busy", (tree) => acks.tasks.filter((id) => !tree?.get(id)));
        assert.deepEqual(missing, [], "acknowledged tasks are stored");
        const works = await space.readWorks((entries) => new Set(entries.keys()));
        assert.deepEqual(
          acks.works.filter((id) => !works.has(id)),
          [],
          "acknowledged work entries are stored",
        );
        for (const [project, revision] of acks.progress) {
          assert.ok((await space.readProgress(project))!.revision >= revision, `progress of ${project}`);
        }
        assert.ok(acks.tasks.length >= SERVERS * 2, `acknowledged tasks: ${acks.tasks.length}`);
      } finally {
        await store.close();
      }
    } finally {
      await Promise.all(servers.map((server) => server.close().catch(() => {})));
      await holder.stdin.close().catch(() => {}); // closed above when all went well
      await holder.status;
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("a stdio server whose KV database another process holds locked still exits within 2 s of its input closing, and says why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-locked-" });
  const path = `${dir}/store.sqlite`;
  const server = await startServer({ KV_PATH: path });
  await ok(server.client, "createTask", { sessionId: "locked", name: "before the lock" });
  // A write transaction held for longer than any stop may take: the store cannot release its lease.
  const holder = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, HOLDER, "kv", path, "3000"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    assert.equal((await lines(holder.stdout).next()).value, "holding");
    const started = performance.now();
    await server.close();
    const took = performance.now() - started;
    const log = server.stderr().trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(
      log.filter((record) => record.msg === "exiting").map((record) => [record.exitCode, record.reason]),
      [[0, "stdin ended (a clean stop)"]],
      server.stderr(),
    );
    assert.ok(took < 2_000, `exited ${Math.round(took)} ms after its input closed`);
    assert.ok(
      log.some((record) => /did not close in time|closing the store failed/.test(record.msg)),
      server.stderr(),
    );
  } finally {
    await holder.stdin.close();
    await holder.status;
    await Deno.remove(dir, { recursive: true });
  }
});
