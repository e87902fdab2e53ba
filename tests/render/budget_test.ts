import assert from "node:assert/strict";
import fc from "fast-check";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { Task } from "../../lib/domain/schemas.ts";
import { TaskTree } from "../../lib/domain/task_tree.ts";
import { childRowsWithin, jsonBytes, READ_BYTES, sessionViewWithin } from "../../lib/render/budget.ts";
import { buildSessionView } from "../../lib/render/build.ts";
import type { TaskRow } from "../../lib/render/model.ts";

/** Text at a length limit that costs the most bytes as JSON: control characters escape to six bytes each. */
function heavy(length: number, seed: string): string {
  return (seed + "\u0001".repeat(length)).slice(0, length);
}

/** The heaviest tree the limits allow along one path: 12 levels, 1,000 siblings each, everything at its length. */
function heaviestTree(): TaskTree {
  const rules = (level: number, key: string) =>
    Array.from({ length: LIMITS.listItems }, (_, i) => heavy(LIMITS.listItemLength, `${key}${level}.${i}`));
  const level = (depth: number): Task[] =>
    Array.from({ length: depth === LIMITS.depth ? 1 : 40 }, (_, i) => ({
      id: `${"x".repeat(LIMITS.taskIdLength - 8)}-${depth}-${i}`.slice(-LIMITS.taskIdLength),
      name: heavy(LIMITS.nameLength, `n${depth}.${i}`),
      description: heavy(LIMITS.descriptionLength, "d"),
      status: i === 0 ? "in_progress" : "todo",
      completion_criteria: i === 0 ? rules(depth, "c") : undefined,
      constraints: i === 0 ? rules(depth, "k") : undefined,
      tasks: i === 0 && depth < LIMITS.depth ? level(depth + 1) : [],
    }));
  return new TaskTree(level(1));
}

Deno.test("a session view fits one read even at every limit, keeping the path in progress and saying what it cut", () => {
  const tree = heaviestTree();
  assert.ok(
    jsonBytes(buildSessionView("default", "s", tree)) > 4 * READ_BYTES,
    "the unbounded view is far too big",
  );
  const view = sessionViewWithin("default", "s", tree);
  assert.ok(jsonBytes(view) <= READ_BYTES, `${jsonBytes(view)} bytes`);
  const path = view.rows.filter((r): r is TaskRow => r.kind === "task" && r.on_path);
  assert.equal(path.length, LIMITS.depth);
  assert.ok(path.at(-1)!.active);
  assert.ok(view.focus!.rules_cut! > 0, "the rules left out are counted");
  assert.equal(view.focus!.description_cut, true);
  assert.ok(view.focus!.criteria.length > 0, "as many rules as fit are kept");
});

Deno.test("a small session view is the dashboard's view, untouched", () => {
  const tree = new TaskTree([{ id: "a", name: "A", description: "", status: "todo", tasks: [] }]);
  assert.deepEqual(sessionViewWithin("default", "s", tree), buildSessionView("default", "s", tree));
});

Deno.test("rows of a folded part fit one read; the rest stays a 'more' row that continues where they stop", () => {
  const kids: Task[] = Array.from({ length: LIMITS.childrenPerTask }, (_, i) => ({
    id: `k${i}`,
    name: heavy(LIMITS.nameLength, `k${i}`),
    description: "",
    status: "todo",
    tasks: [],
  }));
  const tree = new TaskTree([{ id: "p", name: "P", description: "", status: "todo", tasks: kids }]);
  let offset = 0;
  let seen = 0;
  while (offset < LIMITS.childrenPerTask) {
    const rows = childRowsWithin(tree, { parentId: "p", offset, count: LIMITS.childrenPerTask - offset })!;
    assert.ok(jsonBytes(rows) <= READ_BYTES, `${jsonBytes(rows)} bytes`);
    const tasks = rows.filter((r) => r.kind === "task") as TaskRow[];
    assert.equal(tasks[0]!.id, `k${offset}`);
    seen += tasks.length;
    const more = rows.at(-1)!;
    if (more.kind !== "more") break;
    assert.equal(more.offset, offset + tasks.length);
    offset = more.offset;
  }
  assert.equal(seen, LIMITS.childrenPerTask);
});

Deno.test("any session view fits one read and keeps the task in progress (property)", () => {
  const name = fc.string({ minLength: 1, maxLength: LIMITS.nameLength, unit: "binary" }).map((s) =>
    s.trim() || "x"
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: LIMITS.depth }),
      fc.integer({ min: 1, max: 300 }),
      name,
      fc.integer({ min: 0, max: LIMITS.listItems }),
      (depth, width, label, ruleCount) => {
        let id = 0;
        const level = (d: number): Task[] =>
          Array.from({ length: d === depth ? width : 3 }, (_, i) => ({
            id: `t${id++}`,
            name: label,
            description: label,
            status: i === 0 ? "in_progress" : "todo",
            completion_criteria: Array.from({ length: ruleCount }, () =>
              label.padEnd(LIMITS.listItemLength, "é")),
            tasks: i === 0 && d < depth ? level(d + 1) : [],
          }));
        const tree = new TaskTree(level(1));
        const view = sessionViewWithin("default", "s", tree);
        assert.ok(jsonBytes(view) <= READ_BYTES);
        const active = view.rows.find((r) => r.kind === "task" && r.active) as TaskRow | undefined;
        assert.equal(active?.id, tree.activeLeaves()[0]!.id);
      },
    ),
    { numRuns: 60, seed: 16 },
  );
});
