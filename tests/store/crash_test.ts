/**
 * Crash safety: a writer process (fixtures/writer.ts) is killed with SIGKILL at a random moment in
 * a stream of writes, 50 times per kind of store (JSON file, Deno KV), in rounds of 10 on five stores
 * of each kind that run side by side. After every kill the store must open, its invariants must hold,
 * and every write the writer acknowledged (in this run or any earlier one on that store) must be
 * there. Every other run writes in another namespace (docs/namespaces.md), so both key layouts are
 * killed mid-write.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import type { Space } from "../../lib/store/store.ts";
import { CONFIG } from "../support/paths.ts";
import { lines as linesOf } from "../support/streams.ts";

/** Kills per kind of store, spread over {@link STORES} stores. */
const KILLS = 50;
/** Stores of each kind, each killed KILLS / STORES times, all at once. */
const STORES = 5;
const ROUNDS = KILLS / STORES;
/** The namespaces the runs take turns in. */
const NAMESPACES = ["default", "team-x"] as const;
type Namespace = (typeof NAMESPACES)[number];
const WRITER = fileURLToPath(new URL("./fixtures/writer.ts", import.meta.url));

type Kind = "file" | "kv";

/** A writer process, loaded and waiting for {@link runAndKill} to let it go. */
interface Writer {
  child: Deno.ChildProcess;
  run: number;
  namespace: Namespace;
}

/**
 * Starts the writer of `run`, which loads and then waits (`--wait`): the next run's start-up overlaps
 * the current run and its checks, so a round costs the writes and the checks, not a process start.
 */
function spawnWriter(kind: Kind, path: string, run: number, namespace: Namespace): Writer {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      CONFIG,
      WRITER,
      kind,
      path,
      String(run),
      "--namespace",
      namespace,
      "--wait",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return { child, run, namespace };
}

/**
 * Lets `writer` go, lets it acknowledge a random 4–8 writes, plus a random pause, and kills it;
 * returns its acks. Counting acks rather than waiting a fixed time keeps the kills inside streams of
 * writes however loaded the machine is.
 */
async function runAndKill(kind: Kind, { child, run }: Writer): Promise<string[]> {
  const lines: string[] = [];
  const target = 4 + Math.floor(Math.random() * 5);
  let enoughAcks!: () => void;
  const enough = new Promise<void>((resolve) => (enoughAcks = resolve));
  const reading = (async () => {
    // One acknowledgement is one short write: a kill never leaves half of it.
    for await (const line of linesOf(child.stdout)) {
      lines.push(line);
      if (lines.length >= target) enoughAcks();
    }
  })();
  const stderr = new Response(child.stderr).text();
  const go = child.stdin.getWriter();
  await go.write(new Uint8Array([10])).catch(() => {}); // a writer that died already: the checks say why
  await Promise.race([enough, child.status]);
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
  try {
    child.kill("SIGKILL");
  } catch {
    // Exited on its own: the checks below say why.
  }
  const status = await child.status;
  await go.close().catch(() => {});
  await reading;
  const errors = await stderr;
  assert.equal(status.signal, "SIGKILL", `writer ${kind} run ${run} ended by itself: ${errors}`);
  return lines;
}

/** What must hold after every kill, from the acknowledgements so far. */
class Expected {
  /** Task id → must exist (true) or must be gone (false); undefined: either. */
  readonly tasks = new Map<string, boolean | undefined>();
  readonly done = new Set<string>();
  readonly works = new Set<string>();
  readonly progress = new Map<string, number>();

  add(lines: readonly string[]): void {
    for (const line of lines) {
      const [what, id, revision] = line.split(" ") as [string, string, string?];
      if (what === "task") this.tasks.set(id, true);
      else if (what === "gone") this.tasks.set(id, false);
      else if (what === "done") this.done.add(id);
      else if (what === "work") this.works.add(id);
      else if (what === "progress") this.progress.set(id, Number(revision));
    }
    // A big subtree acknowledged as created may have been deleted just before the kill, unacknowledged.
    for (const [id, present] of this.tasks) if (present && id.endsWith(".big")) this.tasks.set(id, undefined);
  }

  async check(store: Space, label: string): Promise<void> {
    const problems = await store.readTree("crash", (tree) => {
      assert.ok(tree, `${label}: the session exists`);
      const out = invariantViolations(tree);
      for (const [id, present] of this.tasks) {
        const found = tree.get(id) !== undefined;
        if (present === undefined) this.tasks.set(id, found);
        else if (found !== present) out.push(`task ${id} ${present ? "lost" : "came back"}`);
        if (present && !id.endsWith(".big") && id.includes("-")) {
          for (const child of [`${id}.a`, `${id}.b`]) if (!tree.get(child)) out.push(`subtask ${child} lost`);
        }
      }
      for (const id of this.done) {
        const task = tree.get(id);
        const inDeletedBig = [...this.tasks].some(([big, present]) =>
          present === false && id.startsWith(`${big}.`)
        );
        if (!inDeletedBig && task?.status !== "done") out.push(`completion of ${id} lost (${task?.status})`);
      }
      return out;
    });
    assert.deepEqual(problems, [], label);
    const works = await store.readWorks((entries) => new Set(entries.keys()));
    for (const id of this.works) assert.ok(works.has(id), `${label}: work ${id} lost`);
    for (const [project, revision] of this.progress) {
      const doc = await store.readProgress(project);
      assert.ok(
        doc && doc.revision >= revision,
        `${label}: progress ${project} r${revision} lost (${doc?.revision})`,
      );
    }
  }
}

async function crashLoop(kind: Kind, path: string): Promise<number> {
  const expected = new Map(NAMESPACES.map((namespace) => [namespace, new Expected()]));
  const writer = (run: number) => spawnWriter(kind, path, run, NAMESPACES[run % NAMESPACES.length]!);
  let acknowledged = 0;
  let next = writer(1);
  for (let run = 1; run <= ROUNDS; run++) {
    const current = next;
    const { namespace } = current;
    if (run < ROUNDS) next = writer(run + 1); // loads while this one writes
    const lines = await runAndKill(kind, current);
    acknowledged += lines.length;
    expected.get(namespace)!.add(lines);
    const store = kind === "kv" ? await KvStore.open(path) : await JsonFileStore.open(path);
    try {
      for (const [name, exp] of expected) {
        if (run >= 2 || name === namespace) {
          await exp.check(store.space(name), `${kind} ${name} after kill ${run}`);
        }
      }
    } finally {
      await store.close();
    }
  }
  return acknowledged;
}

Deno.test("every write acknowledged before a SIGKILL survives it: JSON file and Deno KV, 50 kills each", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-crash-" });
  try {
    const stores = Array.from({ length: STORES }, (_, i) => i);
    const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
    const [file, kv] = await Promise.all([
      Promise.all(stores.map((i) => crashLoop("file", `${dir}/store${i}.json`))).then(sum),
      Promise.all(stores.map((i) => crashLoop("kv", `${dir}/store${i}.sqlite`))).then(sum),
    ]);
    // The kills landed in streams of writes, not before them.
    assert.ok(file > KILLS * 3 && kv > KILLS * 3, `acknowledged writes: file ${file}, kv ${kv}`);
    for (const i of stores) {
      const text = await Deno.readTextFile(`${dir}/store${i}.json`);
      assert.doesNotThrow(() => JSON.parse(text), "the file is whole JSON");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
