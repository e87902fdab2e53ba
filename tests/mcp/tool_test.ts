/** Tool listings as a validating SDK client reads them: required fields, nested objects, errors. */
import assert from "node:assert/strict";
import { NO_ARGUMENTS, toolListing } from "../../lib/mcp/tool.ts";
import { VIEW_TOOLS } from "../../lib/plan_view/server/plan_tools.ts";
import { connectInMemory } from "../support/harness.ts";

Deno.test("every output schema names its required fields, or error, at the top level", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const start = tools.find((t) => t.name === "startTask")!;
  assert.deepEqual(start.outputSchema?.anyOf, [
    {
      required: [
        "task",
        "started_tasks",
        "message",
        "hierarchy_summary",
        "aggregated_completion_criteria",
        "aggregated_constraints",
        "revision",
      ],
    },
    { required: ["error"] },
  ]);
  const task = (start.outputSchema?.properties as Record<string, { required?: string[] }>).task!;
  assert.deepEqual(task.required, ["id", "name", "description", "status", "subtasks_total", "subtasks_done"]);
  for (const tool of tools) {
    const anyOf = tool.outputSchema?.anyOf as { required: string[] }[] | undefined;
    assert.equal(anyOf?.length, 2, `${tool.name} requires its fields or error`);
    assert.ok(anyOf[0]!.required.length > 0, `${tool.name} names required fields`);
  }
});

Deno.test("every property of every tool's output schema has a type (mem_progress's content is an object)", async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const listed = [...tools, ...VIEW_TOOLS.map(toolListing)];
  const untyped: string[] = [];
  const visit = (schema: Record<string, unknown>, where: string) => {
    if (typeof schema.type !== "string" && !Array.isArray(schema.type)) untyped.push(where);
    if (schema.items) visit(schema.items as Record<string, unknown>, `${where}[]`);
    for (
      const [key, value] of Object.entries(
        (schema.properties ?? {}) as Record<string, Record<string, unknown>>,
      )
    ) {
      visit(value, `${where}.${key}`);
    }
  };
  for (const tool of listed) visit(tool.outputSchema as Record<string, unknown>, tool.name);
  assert.deepEqual(untyped, []);
  const progress = tools.find((t) => t.name === "mem_progress")!;
  assert.equal(
    (progress.outputSchema?.properties as Record<string, { type?: string }>).content!.type,
    "object",
  );
});

Deno.test("the SDK client, which validates structured output, accepts a success and an error reply", async () => {
  await using conn = await connectInMemory();
  await conn.client.listTools(); // the client caches the output validators from the listing
  const created = await conn.client.callTool({
    name: "createTask",
    arguments: { sessionId: "v", id: "a", name: "A" },
  });
  assert.equal(created.isError, undefined);
  const started = await conn.client.callTool({ name: "startTask", arguments: { sessionId: "v", id: "a" } });
  assert.equal(started.isError, undefined);
  assert.equal((started.structuredContent as { task: { id: string } }).task.id, "a");
  const refused = await conn.client.callTool({
    name: "startTask",
    arguments: { sessionId: "v", id: "nope" },
  });
  assert.equal(refused.isError, true);
  assert.equal((refused.structuredContent as { error: { code: string } }).error.code, "NOT_FOUND");
  const bad = await conn.client.callTool({ name: "completeTask", arguments: { sessionId: "v", id: "a" } });
  assert.equal(bad.isError, true);
});

Deno.test('a tool without arguments lists {"type":"object","additionalProperties":false}; every other tool its properties', async () => {
  await using conn = await connectInMemory();
  const { tools } = await conn.client.listTools();
  const listed = [...tools, ...VIEW_TOOLS.map(toolListing)];
  const without = listed.filter((t) => Object.keys(t.inputSchema.properties ?? {}).length === 0);
  assert.deepEqual(without.map((t) => t.name), ["get_recent_works_info"]);
  for (const tool of listed) {
    const schema = tool.inputSchema as Record<string, unknown>;
    if (without.includes(tool)) {
      assert.equal(JSON.stringify(schema), '{"type":"object","additionalProperties":false}', tool.name);
    } else {
      assert.equal(schema.type, "object", tool.name);
      assert.equal(
        schema.additionalProperties,
        undefined,
        `${tool.name}: its arguments are listed as before`,
      );
      assert.ok(Object.keys(schema.properties as object).length > 0, tool.name);
    }
  }
  assert.deepEqual(NO_ARGUMENTS, { type: "object", additionalProperties: false });
});
