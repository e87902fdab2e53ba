/**
 * What makes resuming cheap, through a real SDK client: the resources (templates, listing, reads
 * from the store at read time), argument completion, the `resume` prompt, and the instructions and
 * listings of each group combination.
 */
import assert from "node:assert/strict";
import { TOOL_GROUPS, type ToolGroup } from "../../lib/config.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { INSTRUCTIONS, instructionsFor } from "../../lib/mcp/server.ts";
import type { Client } from "../support/sdk_client.ts";
import { connectInMemory, LISTING_BUDGET, ok } from "../support/harness.ts";
import { recent, save } from "../support/handoff.ts";

function textOfResource(result: { contents: object[] }): string {
  const text = (result.contents[0] as { text?: unknown } | undefined)?.text;
  assert.equal(typeof text, "string");
  return text as string;
}

async function readJson(client: Client, uri: string): Promise<Record<string, unknown>> {
  const result = await client.readResource({ uri });
  assert.equal(result.contents.length, 1);
  assert.equal(result.contents[0]!.mimeType, "application/json");
  assert.equal(result.contents[0]!.uri, uri);
  return JSON.parse(textOfResource(result));
}

async function completeValues(
  client: Client,
  ref: { type: "ref/resource"; uri: string } | { type: "ref/prompt"; name: string },
  name: string,
  value: string,
): Promise<string[]> {
  return (await client.complete({ ref, argument: { name, value } })).completion.values;
}

Deno.test("the server lists one resource template each for sessions, works and progress", async () => {
  await using conn = await connectInMemory();
  const caps = conn.client.getServerCapabilities();
  assert.ok(caps?.resources && caps.prompts && caps.completions);
  const { resourceTemplates } = await conn.client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [
    "checklist://progress/{project}",
    "checklist://sessions/{sessionId}",
    "checklist://works/{workId}",
  ]);
  for (const t of resourceTemplates) {
    assert.ok(t.title && t.description, `${t.uriTemplate} has a title and a description`);
    assert.equal(t.mimeType, "application/json");
  }
  const work = resourceTemplates.find((t) => t.name === "work")!;
  assert.match(work.description!, /does not count as use/);
});

Deno.test("resources/list lists every session, every recent work and every progress document", async () => {
  await using conn = await connectInMemory({ workCacheSize: 2 });
  const plan = "ui://checklist/plan.html";
  assert.deepEqual((await conn.client.listResources()).resources.map((r) => r.uri), [plan]);
  await ok(conn.client, "createTask", { sessionId: "s 1/x", name: "T" });
  await save(conn.client, "old");
  const w2 = await save(conn.client, "two");
  const w3 = await save(conn.client, "three");
  await ok(conn.client, "mem_progress", { project: "app", content: "{}" });
  const { resources } = await conn.client.listResources();
  assert.deepEqual(
    resources.map((r) => r.uri).sort(),
    [
      "checklist://progress/app",
      "checklist://sessions/s%201%2Fx",
      plan,
      `checklist://works/${w2}`,
      `checklist://works/${w3}`,
    ].sort(),
  );
  const work = resources.find((r) => r.uri.endsWith(w3))!;
  assert.equal(work.title, "three");
});

Deno.test("a session resource is the live tree as JSON, read from the store at read time", async () => {
  await using conn = await connectInMemory();
  const { task } = await ok<{ task: Task }>(conn.client, "createTask", {
    sessionId: "s 1/x",
    name: "Root",
    tasks: [{ id: "a", name: "A" }],
  });
  const uri = "checklist://sessions/s%201%2Fx";
  const before = await readJson(conn.client, uri);
  assert.equal(before.sessionId, "s 1/x");
  assert.deepEqual(before.tasks, [task]);
  await ok(conn.client, "startTask", { sessionId: "s 1/x", id: "a" });
  const after = await readJson(conn.client, uri) as { tasks: Task[] };
  assert.equal(after.tasks[0]!.tasks[0]!.status, "in_progress");
  await assert.rejects(conn.client.readResource({ uri: "checklist://sessions/nope" }), /No session "nope"/);
});

Deno.test("a work resource is the entry as JSON and reading it does not count as use", async () => {
  await using conn = await connectInMemory();
  await ok(conn.client, "createTask", { sessionId: "s", name: "T" });
  const a = await save(conn.client, "a", { sessionId: "s", work_summarize: "summary A" });
  await save(conn.client, "b");
  const order = await recent(conn.client);
  const entry = await readJson(conn.client, `checklist://works/${a}`);
  assert.equal(entry.workId, a);
  assert.equal(entry.work_summarize, "summary A");
  assert.equal(entry.sessionId, "s");
  assert.equal((entry.work_tasks as Task[])[0]!.name, "T");
  assert.equal("used" in entry, false);
  assert.deepEqual(await recent(conn.client), order, "reading the resource did not move the entry");
  await ok(conn.client, "get_work_by_id", { workId: a });
  assert.notDeepEqual(await recent(conn.client), order, "get_work_by_id does move it");
  await assert.rejects(conn.client.readResource({ uri: "checklist://works/99999999" }), /No work/);
  await assert.rejects(conn.client.readResource({ uri: "checklist://works/12ab" }), /8 digits/);
});

Deno.test("a progress resource is the stored document as JSON, current at read time", async () => {
  await using conn = await connectInMemory();
  await ok(conn.client, "mem_progress", { project: "my app", content: '{"goal":"one"}', session_id: "s" });
  const uri = "checklist://progress/my%20app";
  const first = await readJson(conn.client, uri);
  assert.deepEqual(first.content, { goal: "one" });
  assert.equal(first.revision, 1);
  assert.equal(first.session_id, "s");
  await ok(conn.client, "mem_progress", { project: "my app", content: '{"goal":"two"}' });
  const second = await readJson(conn.client, uri);
  assert.deepEqual(second.content, { goal: "two" });
  assert.equal(second.revision, 2);
  await assert.rejects(conn.client.readResource({ uri: "checklist://progress/none" }), /No progress/);
});

Deno.test("completion suggests sessionIds, workIds and projects that start with the typed prefix", async () => {
  await using conn = await connectInMemory();
  for (const s of ["alpha", "alps", "beta"]) await ok(conn.client, "createTask", { sessionId: s, name: "T" });
  for (const p of ["web", "worker", "cli"]) {
    await ok(conn.client, "mem_progress", { project: p, content: "{}" });
  }
  const ids = [await save(conn.client, "one"), await save(conn.client, "two")];
  const sessions = { type: "ref/resource" as const, uri: "checklist://sessions/{sessionId}" };
  assert.deepEqual(await completeValues(conn.client, sessions, "sessionId", "al"), ["alpha", "alps"]);
  assert.deepEqual(await completeValues(conn.client, sessions, "sessionId", "AL"), ["alpha", "alps"]);
  assert.deepEqual(await completeValues(conn.client, sessions, "sessionId", "z"), []);
  const works = { type: "ref/resource" as const, uri: "checklist://works/{workId}" };
  assert.deepEqual(await completeValues(conn.client, works, "workId", ""), [...ids].sort());
  assert.deepEqual(await completeValues(conn.client, works, "workId", ids[0]!.slice(0, 8)), [ids[0]]);
  const progress = { type: "ref/resource" as const, uri: "checklist://progress/{project}" };
  assert.deepEqual(await completeValues(conn.client, progress, "project", "w"), ["web", "worker"]);
  const prompt = { type: "ref/prompt" as const, name: "resume" };
  assert.deepEqual(await completeValues(conn.client, prompt, "project", "c"), ["cli"]);
  assert.deepEqual(await completeValues(conn.client, prompt, "sessionId", "b"), ["beta"]);
});

Deno.test("the resume prompt is listed with two optional arguments", async () => {
  await using conn = await connectInMemory();
  const { prompts } = await conn.client.listPrompts();
  const resume = prompts.find((p) => p.name === "resume");
  assert.ok(resume?.description);
  assert.deepEqual(
    resume.arguments?.map((a) => [a.name, a.required]),
    [["project", false], ["sessionId", false]],
  );
});

Deno.test("the resume prompt assembles the progress document, the recent works and the current tasks", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const { task } = await ok<{ task: Task }>(client, "createTask", {
    sessionId: "plan",
    name: "Ship",
    tasks: [{ id: "parse", name: "Parser" }, { id: "print", name: "Printer" }],
  });
  await ok(client, "startTask", { sessionId: "plan", id: task.id });
  await ok(client, "mem_progress", {
    project: "app",
    content: JSON.stringify({ goal: "Ship v1", completed: [], next_steps: ["parser"], blockers: [] }),
  });
  const older = await save(client, "older work");
  const latest = await save(client, "parser half done", {
    sessionId: "plan",
    work_summarize: "Lexer done; parser next.",
  });
  const order = await recent(client);

  const result = await client.getPrompt({ name: "resume", arguments: { project: "app" } });
  assert.equal(result.messages.length, 1);
  const content = result.messages[0]!.content;
  assert.equal(content.type, "text");
  const text = (content as { text: string }).text;
  assert.match(text, /"goal":"Ship v1"/);
  assert.match(text, /revision 1/);
  assert.ok(text.includes(older) && text.includes(latest));
  assert.ok(text.indexOf(latest) < text.indexOf(older), "most recently used first");
  assert.match(text, /Lexer done; parser next\./, "the latest handover's summary is included");
  assert.match(text, /session "plan"/, "the session defaults to that of the latest work");
  assert.match(text, /◐ parse: Parser/);
  assert.match(text, /save_current_work_info/);
  assert.deepEqual(await recent(client), order, "the prompt does not count as use");
});

Deno.test("the resume prompt picks the only project, lists several, and names a missing session", async () => {
  await using conn = await connectInMemory();
  const { client } = conn;
  const text = async (args: Record<string, string> = {}) => {
    const result = await client.getPrompt({ name: "resume", arguments: args });
    return (result.messages[0]!.content as { text: string }).text;
  };
  const empty = await text();
  assert.match(empty, /No progress document/);
  assert.match(empty, /No saved work yet/);
  assert.match(empty, /Session "default" has no tasks/);
  await ok(client, "mem_progress", { project: "solo", content: '{"goal":"only one"}' });
  assert.match(await text(), /"goal":"only one"/);
  await ok(client, "mem_progress", { project: "second", content: '{"goal":"two"}' });
  const several = await text();
  assert.match(several, /Projects with progress: second, solo/);
  assert.doesNotMatch(several, /only one/);
  assert.match(await text({ project: "nothing" }), /No progress found for project "nothing"/);
  await ok(client, "createTask", { sessionId: "mine", name: "Mine" });
  assert.match(await text({ sessionId: "mine" }), /Mine/);
  await assert.rejects(client.getPrompt({ name: "resume", arguments: { sessionId: "x".repeat(101) } }));
});

Deno.test("instructions give the workflow: read first, plan, one task at a time, update progress, save before handover", () => {
  const text = INSTRUCTIONS;
  const order = ["mem_progress(project)", "get_recent_works_info", "createTask", "startTask", "completeTask"];
  let at = -1;
  for (const word of order) {
    const i = text.indexOf(word);
    assert.ok(i > at, `${word} comes in workflow order`);
    at = i;
  }
  assert.match(text, /goal.*completed.*next_steps.*blockers/);
  assert.match(text, /significant work/);
  assert.match(text, /Before handing over, call save_current_work_info/);
  assert.ok(text.length <= 1000, `instructions are ${text.length} characters`);
});

const TOOL_NAMES: Record<ToolGroup, string[]> = {
  tasks: ["createTask", "startTask", "completeTask"],
  checklist: ["update_tasks", "mark_task_as_done"],
  works: ["save_current_work_info", "get_recent_works_info", "get_work_by_id"],
  progress: ["mem_progress"],
  history: ["task_history", "restore_tasks"],
};

Deno.test("each group combination gets instructions, tools, resources and prompts of its groups only", async (t) => {
  const combos: ToolGroup[][] = [
    ["tasks"],
    ["checklist"],
    ["works"],
    ["progress"],
    ["works", "progress"],
    [
      "checklist",
      "works",
    ],
    ["tasks", "history"],
    ["checklist", "history"],
  ];
  for (const groups of combos) {
    await t.step(groups.join(","), async () => {
      await using conn = await connectInMemory({ groups });
      const instructions = conn.client.getInstructions() ?? "";
      assert.equal(instructions, instructionsFor(groups));
      for (const group of TOOL_GROUPS) {
        const named = TOOL_NAMES[group].filter((name) => instructions.includes(name));
        if (groups.includes(group)) assert.ok(named.length > 0, `the instructions name a tool of ${group}`);
        else assert.deepEqual(named, [], `the instructions name no tool of the disabled group ${group}`);
      }
      const tools = (await conn.client.listTools()).tools.map((tool) => tool.name);
      assert.ok(tools.length > 0);
      for (const group of TOOL_GROUPS) {
        assert.equal(TOOL_NAMES[group].every((n) => tools.includes(n)), groups.includes(group));
      }
      const caps = conn.client.getServerCapabilities();
      const handoff = groups.includes("works") || groups.includes("progress");
      assert.equal(caps?.prompts !== undefined, handoff);
      if (handoff) {
        assert.deepEqual((await conn.client.listPrompts()).prompts.map((p) => p.name), ["resume"]);
      }
      const expected = [
        ...(groups.includes("tasks") || groups.includes("checklist")
          ? ["checklist://sessions/{sessionId}"]
          : []),
        ...(groups.includes("works") ? ["checklist://works/{workId}"] : []),
        ...(groups.includes("progress") ? ["checklist://progress/{project}"] : []),
      ];
      const templates = (await conn.client.listResourceTemplates()).resourceTemplates.map((r) =>
        r.uriTemplate
      );
      assert.deepEqual(templates, expected);
    });
  }
});

Deno.test("tools/list plus instructions stay under 19,500 characters for all groups, claimTask, note, context, paths and checkPaths included", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const instructions = conn.client.getInstructions() ?? "";
  const total = JSON.stringify(tools).length + instructions.length;
  console.log(`tools/list + instructions, all groups: ${total} characters (budget ${LISTING_BUDGET})`);
  assert.ok(tools.some((tool) => tool.name === "claimTask"));
  assert.ok(tools.some((tool) => tool.name === "checkPaths"));
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  assert.ok(byName.updateTask!.inputSchema.properties?.note, "updateTask lists note");
  assert.ok(
    (byName.startTask!.outputSchema?.properties as Record<string, unknown> | undefined)?.context,
    "startTask declares context",
  );
  assert.match(instructions, /updateTask\(note\)/);
  assert.ok(byName.createTask!.inputSchema.properties?.paths, "createTask lists paths");
  assert.ok(total < LISTING_BUDGET, `listing is ${total} characters`);
  const mine = tools.filter((tool) => [...TOOL_NAMES.works, ...TOOL_NAMES.progress].includes(tool.name));
  assert.equal(mine.length, 4);
  for (const tool of mine) assert.ok(JSON.stringify(tool).length <= 1100, `${tool.name} listing is short`);
});
