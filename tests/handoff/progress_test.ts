/**
 * `mem_progress` end to end through a real SDK client: the six behaviours of docs/requirements.md P8
 * (definition, read empty, write and read, invalid JSON, missing project, upsert), then the limits,
 * the refusals that change nothing, and one document per project.
 */
import assert from "node:assert/strict";
import type { Client } from "../support/sdk_client.ts";
import { call, connectInMemory, fails, ok, textOf } from "../support/harness.ts";
import { recordingLogger } from "../support/logs.ts";
import { isIsoTimestamp } from "../support/handoff.ts";

interface ProgressOut {
  project: string;
  found: boolean;
  revision?: number;
  updated_at?: string;
  session_id?: string;
  content?: Record<string, unknown>;
}

const DOC = { goal: "Ship v1", completed: ["parser"], next_steps: ["printer"], blockers: [] };

function read(client: Client, project: string): Promise<ProgressOut> {
  return ok<ProgressOut>(client, "mem_progress", { project });
}

function write(client: Client, project: string, content: unknown, session_id?: string): Promise<ProgressOut> {
  return ok<ProgressOut>(client, "mem_progress", {
    project,
    content: typeof content === "string" ? content : JSON.stringify(content),
    ...(session_id ? { session_id } : {}),
  });
}

Deno.test("mem_progress definition: name, required project, optional content and session_id, hints", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const tool = tools.find((t) => t.name === "mem_progress");
  assert.ok(tool, "mem_progress is listed");
  assert.deepEqual(tool.inputSchema.required, ["project"]);
  assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), [
    "content",
    "project",
    "session_id",
  ]);
  assert.ok(tool.title);
  assert.match(tool.description ?? "", /read/i);
  assert.match(tool.description ?? "", /goal.*completed.*next_steps.*blockers/);
  assert.ok(tool.outputSchema);
  assert.equal(tool.annotations?.readOnlyHint, false);
  assert.equal(tool.annotations?.destructiveHint, true, "a write replaces the document");
});

Deno.test("mem_progress read with nothing stored says no progress found, not an error", async () => {
  await using conn = await connectInMemory();
  const result = await call(conn.client, "mem_progress", { project: "app" });
  assert.equal(result.isError, undefined);
  assert.match(textOf(result), /no progress found/i);
  assert.deepEqual(result.structuredContent, { project: "app", found: false });
});

Deno.test("mem_progress write then read returns the document, its revision, time and session", async () => {
  const { log, records } = recordingLogger();
  await using conn = await connectInMemory({ log });
  const written = await write(conn.client, "app", DOC, "agent-1");
  assert.equal(written.found, true);
  assert.equal(written.revision, 1);
  assert.ok(isIsoTimestamp(written.updated_at));
  assert.equal(written.session_id, "agent-1");
  assert.equal(written.content, undefined, "a write does not echo the document");

  const result = await call(conn.client, "mem_progress", { project: "app" });
  const back = result.structuredContent as unknown as ProgressOut;
  assert.deepEqual(back, {
    project: "app",
    found: true,
    content: DOC,
    revision: 1,
    updated_at: written.updated_at,
    session_id: "agent-1",
  });
  assert.match(textOf(result), /revision 1/);
  assert.ok(textOf(result).includes('"goal":"Ship v1"'));
  assert.ok(records.some((r) => r.msg === "progress saved" && r.project === "app" && r.revision === 1));
});

Deno.test("mem_progress with invalid JSON is INVALID_INPUT and changes nothing", async () => {
  await using conn = await connectInMemory();
  for (const content of ["{goal: 'x'}", "{", "not json at all"]) {
    const message = await fails(conn.client, "mem_progress", { project: "app", content }, "INVALID_INPUT");
    assert.match(message, /not valid JSON/);
  }
  assert.equal((await read(conn.client, "app")).found, false, "nothing was stored");
  await write(conn.client, "app", DOC);
  await fails(conn.client, "mem_progress", { project: "app", content: "{broken" }, "INVALID_INPUT");
  const after = await read(conn.client, "app");
  assert.equal(after.revision, 1);
  assert.deepEqual(after.content, DOC);
});

Deno.test("mem_progress without a project is INVALID_INPUT and changes nothing", async () => {
  await using conn = await connectInMemory();
  await fails(conn.client, "mem_progress", {}, "INVALID_INPUT");
  await fails(conn.client, "mem_progress", { content: JSON.stringify(DOC) }, "INVALID_INPUT");
  await fails(conn.client, "mem_progress", { project: "", content: JSON.stringify(DOC) }, "INVALID_INPUT");
  await fails(conn.client, "mem_progress", { project: "   ", content: JSON.stringify(DOC) }, "INVALID_INPUT");
  await fails(conn.client, "mem_progress", { project: 7, content: JSON.stringify(DOC) }, "INVALID_INPUT");
  assert.deepEqual(await conn.store.space("default").listProjects(), []);
});

Deno.test("mem_progress upsert: a second write replaces the first and adds 1 to the revision", async () => {
  await using conn = await connectInMemory();
  const first = await write(conn.client, "app", DOC, "agent-1");
  const second = await write(conn.client, "app", { goal: "Ship v1", completed: ["parser", "printer"] });
  assert.equal(second.revision, 2);
  assert.ok(Date.parse(second.updated_at!) >= Date.parse(first.updated_at!));
  assert.equal(second.session_id, undefined, "the writer of this revision is recorded, not an older one");
  const back = await read(conn.client, "app");
  assert.deepEqual(back.content, { goal: "Ship v1", completed: ["parser", "printer"] });
  assert.equal(back.revision, 2);
  assert.deepEqual(await conn.store.space("default").listProjects(), ["app"], "still one document");
});

Deno.test("mem_progress keeps one document per project", async () => {
  await using conn = await connectInMemory();
  await write(conn.client, "app", DOC);
  await write(conn.client, "lib", { goal: "other" });
  await write(conn.client, "lib", { goal: "other, again" });
  assert.equal((await read(conn.client, "app")).revision, 1);
  assert.deepEqual((await read(conn.client, "lib")).content, { goal: "other, again" });
  assert.deepEqual((await conn.store.space("default").listProjects()).sort(), ["app", "lib"]);
});

Deno.test("mem_progress trims the project name, and empty content means read", async () => {
  await using conn = await connectInMemory();
  await write(conn.client, " app ", DOC);
  assert.deepEqual((await read(conn.client, "app")).content, DOC);
  const viaEmpty = await ok<ProgressOut>(conn.client, "mem_progress", { project: "app", content: "" });
  assert.deepEqual(viaEmpty.content, DOC);
  assert.equal(viaEmpty.revision, 1, "reading did not write");
});

Deno.test("mem_progress refuses JSON that is not an object, and oversize input, changing nothing", async (t) => {
  await using conn = await connectInMemory();
  await write(conn.client, "app", DOC);
  const cases: [string, Record<string, unknown>, string][] = [
    ["an array", { project: "app", content: "[1, 2]" }, "INVALID_INPUT"],
    ["a string", { project: "app", content: '"done"' }, "INVALID_INPUT"],
    ["null", { project: "app", content: "null" }, "INVALID_INPUT"],
    ["content of 32,001 characters", {
      project: "app",
      content: JSON.stringify({ goal: "x".repeat(32_001 - 11) }),
    }, "LIMIT_EXCEEDED"],
    ["a project of 201 characters", { project: "p".repeat(201), content: "{}" }, "LIMIT_EXCEEDED"],
    ["content not a string", { project: "app", content: { goal: "x" } }, "INVALID_INPUT"],
    ["an empty session_id", { project: "app", content: "{}", session_id: "" }, "INVALID_INPUT"],
  ];
  for (const [name, args, code] of cases) {
    await t.step(name, async () => {
      await fails(conn.client, "mem_progress", args, code);
      const doc = await read(conn.client, "app");
      assert.equal(doc.revision, 1);
      assert.deepEqual(doc.content, DOC);
    });
  }
  assert.deepEqual(await conn.store.space("default").listProjects(), ["app"]);
});

Deno.test("mem_progress accepts a document of exactly 32,000 characters", async () => {
  await using conn = await connectInMemory();
  const content = JSON.stringify({ goal: "x".repeat(32_000 - 11) });
  assert.equal(content.length, 32_000);
  assert.equal((await write(conn.client, "app", content)).revision, 1);
});
