/**
 * Random sequences of tool calls, good and bad, through a real SDK client against the memory, JSON
 * file and Deno KV stores: after every call each session's tree keeps its invariants, and a call
 * that was refused left the whole store (its exported document) exactly as it was.
 *
 * A fixed seed and modest runs here; `deno task fuzz` (FUZZ_RUNS) runs the same properties longer.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ERROR_CODES } from "../../lib/domain/errors.ts";
import { invariantViolations } from "../../lib/domain/invariants.ts";
import type { Store } from "../../lib/store/store.ts";
import { connectInMemory, type ToolResult } from "../support/harness.ts";
import { STORE_KINDS } from "../support/store_places.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

const session = fc.constantFrom("s1", "s2", "constructor");
/** Mostly ids from a small pool (so calls meet each other's tasks), sometimes malformed ones. */
const id = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("a", "b", "c", "d", "e", "toString") },
  { weight: 1, arbitrary: fc.constantFrom("a b", "", "x/y", "z".repeat(65)) },
);
/** Mostly good names, sometimes blank or too long. */
const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("plan", "step", "build", "test") },
  { weight: 1, arbitrary: fc.constantFrom("  ", "", "x".repeat(201)) },
);

/** A task to create, nested up to `depth`, sometimes with an id from the pool. */
function newTask(depth: number): fc.Arbitrary<Record<string, unknown>> {
  const base = {
    id: fc.option(id, { nil: undefined, freq: 3 }),
    name: fc.oneof({ weight: 15, arbitrary: fc.constantFrom("plan", "step", "build") }, {
      weight: 1,
      arbitrary: name,
    }),
  };
  return depth === 0
    ? fc.record(base, { requiredKeys: ["name"] })
    : fc.record({ ...base, tasks: fc.array(newTask(depth - 1), { maxLength: 3 }) }, {
      requiredKeys: ["name"],
    });
}

/** A checklist item, nested up to `depth`. */
function item(depth: number): fc.Arbitrary<Record<string, unknown>> {
  const base = { taskId: id, description: name, status: fc.constantFrom("TODO", "DONE") };
  return depth === 0
    ? fc.record(base, { requiredKeys: ["taskId", "description"] })
    : fc.record({ ...base, children: fc.array(item(depth - 1), { maxLength: 2 }) }, {
      requiredKeys: ["taskId", "description"],
    });
}

/** Arguments nested far past every limit. */
const deep = fc.integer({ min: 13, max: 300 }).map((levels) => {
  let task: Record<string, unknown> = { name: "leaf" };
  for (let i = 0; i < levels; i++) task = { name: "n", tasks: [task] };
  return task;
});

/** One tool call: a tool and its arguments, well-formed or not. */
const toolCall: fc.Arbitrary<[string, unknown]> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(
      fc.constant("createTask"),
      fc.record({ sessionId: session, parentId: fc.option(id, { nil: undefined }) }, {
        requiredKeys: ["sessionId"],
      }).chain((where) => newTask(2).map((t) => ({ ...where, ...t }))),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(
      fc.constantFrom("startTask", "getTask", "deleteTask", "listTasks"),
      fc.record({ sessionId: session, id }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(
      fc.constant("completeTask"),
      fc.record({ sessionId: session, id, resolution: fc.constantFrom("done", " ", "") }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constant("updateTask"),
      fc.record({
        sessionId: session,
        id,
        name: fc.option(name, { nil: undefined }),
        status: fc.option(fc.constantFrom("todo", "in_progress", "done", "nope"), { nil: undefined }),
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constant("update_tasks"),
      fc.record({
        sessionId: session,
        path: fc.constantFrom("/", "/a/", "/a/b/", "bad"),
        tasks: fc.array(item(2), { maxLength: 3 }),
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constant("mark_task_as_done"),
      fc.record({ sessionId: session, taskIds: fc.array(id, { maxLength: 4 }) }),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constant("get_all_tasks"), fc.record({ sessionId: session })) },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constant("save_current_work_info"),
      fc.record({
        work_summarize: name,
        work_description: name,
        sessionId: fc.option(session, { nil: undefined }),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constant("get_work_by_id"),
      fc.record({ workId: fc.constantFrom("12345678", "1", "x") }),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constant("get_recent_works_info"), fc.constant({})) },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constant("mem_progress"),
      fc.record({
        project: fc.constantFrom("p", "constructor", " "),
        content: fc.option(
          fc.oneof(
            fc.constantFrom('{"goal":"g"}', "[]", "{", '{"a":' + "[".repeat(70) + "]".repeat(70) + "}"),
            fc.json({ maxDepth: 3 }),
          ),
          { nil: undefined },
        ),
      }),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constant("task_history"), fc.record({ sessionId: session })) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constant("restore_tasks"),
      fc.record({ sessionId: session, revision: fc.integer({ min: -1, max: 8 }) }),
    ),
  },
  // Wrong shapes: arguments deep past the limits, not an object, or with fields of the wrong type.
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("createTask", "update_tasks"), deep) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constantFrom("createTask", "mark_task_as_done", "mem_progress"),
      fc.oneof(fc.string(), fc.array(fc.integer()), fc.integer()),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constantFrom("startTask", "save_current_work_info", "update_tasks"),
      fc.dictionary(
        fc.constantFrom("sessionId", "id", "tasks", "work_summarize", "work_description"),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    ),
  },
);

/** Every session's tree keeps the invariants. */
async function assertInvariants(store: Store, context: string): Promise<void> {
  for (const sessionId of await store.space("default").listSessions()) {
    const problems = await store.space("default").readTree(
      sessionId,
      (tree) => (tree ? invariantViolations(tree) : []),
    );
    assert.deepEqual(problems, [], `${context}: session ${sessionId}`);
  }
}

for (const kind of STORE_KINDS) {
  Deno.test(`random tool calls on the ${kind.name} store keep the invariants; a refused call changes nothing`, async () => {
    const outcomes = { ok: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(toolCall, { minLength: 4, maxLength: 20, size: "max" }), async (calls) => {
        const place = await kind.place();
        const store = await place.open();
        try {
          await using conn = await connectInMemory({ store });
          for (const [n, [tool, args]] of calls.entries()) {
            const context = `call ${n}: ${tool} ${JSON.stringify(args).slice(0, 300)}`;
            const before = await store.exportDocument();
            const result = await conn.client.callTool({
              name: tool,
              arguments: args as Record<string, unknown>,
            }) as ToolResult;
            if (result.isError) {
              outcomes.refused++;
              const code = (result.structuredContent as { error?: { code?: unknown } } | undefined)?.error
                ?.code;
              assert.ok((ERROR_CODES as readonly unknown[]).includes(code), `${context}: uncoded failure`);
              assert.deepEqual(
                await store.exportDocument(),
                before,
                `${context}: refused (${code}) but changed the store`,
              );
            } else {
              outcomes.ok++;
            }
            await assertInvariants(store, context);
          }
        } finally {
          await store.close();
          await place.cleanup();
        }
      }),
      { numRuns: fuzzRuns(kind.name === "memory" ? 200 : 40), seed: FUZZ_SEED },
    );
    assert.ok(outcomes.ok > 0 && outcomes.refused > 0, `both kinds of outcome: ${JSON.stringify(outcomes)}`);
  });
}
