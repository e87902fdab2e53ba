/**
 * `deno task export --format tasks`: the `"default"` session written back as a bare array, the
 * format task-orchestrator reads, so a converted file can go back to it.
 */
import assert from "node:assert/strict";
import { StoreFileSchema } from "../../lib/store/file_format.ts";
import { runToEnd } from "../support/server_process.ts";

const ORCHESTRATOR = [
  {
    id: "t1",
    name: "Plan",
    description: "from task-orchestrator",
    status: "todo",
    tasks: [{ id: "t1.1", name: "Step", description: "", status: "todo", tasks: [] }],
  },
];

Deno.test("export --format tasks writes the default session back as a bare array", async () => {
  const dir = await Deno.makeTempDir({ prefix: "checklist-export-tasks-" });
  try {
    const path = `${dir}/tasks.json`;
    await Deno.writeTextFile(path, JSON.stringify(ORCHESTRATOR));
    const env = { FILE_PATH: path };
    // Another session, which the bare array cannot hold, is left out.
    const other = `${dir}/other.json`;
    await Deno.writeTextFile(
      other,
      JSON.stringify({ version: 1, sessions: { default: ORCHESTRATOR, elsewhere: ORCHESTRATOR } }),
    );
    await Deno.remove(path);
    const imported = await runToEnd(["run", "-A", "scripts/transfer.ts", "import", other], { env });
    assert.equal(imported.code, 0, imported.stderr);

    const out = await runToEnd(["run", "-A", "scripts/transfer.ts", "export", "--format", "tasks"], { env });
    assert.equal(out.code, 0, out.stderr);
    const bare = JSON.parse(out.stdout);
    assert.ok(Array.isArray(bare), "a bare array");
    assert.deepEqual(bare, ORCHESTRATOR);
    assert.ok(StoreFileSchema.safeParse(bare).success, "and one this server loads again");

    const file = `${dir}/back.json`;
    const written = await runToEnd(
      ["run", "-A", "scripts/transfer.ts", "export", "--format=tasks", "--out", file],
      { env },
    );
    assert.equal(written.code, 0, written.stderr);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(file)), ORCHESTRATOR);

    const wrong = await runToEnd(["run", "-A", "scripts/transfer.ts", "export", "--format", "xml"], { env });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /--format store\|tasks/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
