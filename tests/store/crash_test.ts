/**
 * Crash safety: a writer process (fixtures/writer.ts) is killed with SIGKILL at a random moment in
 * a stream of writes, 50 times per store. After every kill the store must open, its invariants must
 * hold, and every write the writer acknowledged (in this run or any earlier one) must be there. Every
 * other run writes in another namespace (README "Namespaces"), so both key layouts are killed mid-write.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { KvStore } from "../../lib/store/kv/kv_store.ts";
import type { Space } from "../../lib/store/store.ts";
import { CONFIG } from "../support/paths.ts";
import { lines as linesOf } from "../support/streams.ts";

const KILLS = 50;
/** The namespaces the runs take turns in. */
const NAMESPACES = ["default", "team-x"] as const;
const WRITER = fileURLToPath(new URL("./fixtures/writer.ts", import.meta.url));

type Kind = "file" | "kv";

/**
 * Runs the writer until it has acknowledged a random 4–8 writes, plus a random pause, and kills it;
 * returns its acks. Counting acks rather than waiting a fixed time keeps the kills inside streams of
 * writes however loaded the machine is.
 */
async function runAndKill(kind: Kind, path: string, run: number, namespace: string): Promise<string[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, WRITER, kind, path, String(run), "--namespace", namespace],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
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
  await Promise.race([enough, child.status]);
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
  try {
    child.kill("SIGKILL");
  } catch {
    // Exited on its own: the checks below say why.
  }
  const status = await child.status;
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
  let acknowledged = 0;
  for (let run = 1; run <= KILLS; run++) {
    const namespace = NAMESPACES[run % NAMESPACES.length]!;
    const lines = await runAndKill(kind, path, run, namespace);
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
    const [file, kv] = await Promise.all([
      crashLoop("file", `${dir}/store.json`),
      crashLoop("kv", `${dir}/store.sqlite`),
    ]);
    // The kills landed in streams of writes, not before them.
    assert.ok(file > KILLS * 3 && kv > KILLS * 3, `acknowledged writes: file ${file}, kv ${kv}`);
    const text = await Deno.readTextFile(`${dir}/store.json`);
    assert.doesNotThrow(() => JSON.parse(text), "the file is whole JSON");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
