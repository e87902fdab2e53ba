/**
 * What the commit guard says and how it exits (docs/guard.md "Exit codes"): conflicts are listed and
 * exit 1 (0 with --warn), a check that could not be made is one line and exit 0 (2 with --strict), bad
 * flags exit 2, a clean check says nothing.
 */
import assert from "node:assert/strict";
import { LIMITS } from "../../lib/domain/limits.ts";
import type { PathConflict } from "../../lib/domain/schemas.ts";
import { guardVerdict, timeLeft } from "../../lib/guard/guard_report.ts";

const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const OPTIONS = { warn: false, strict: false, session: "shop", now: NOW };

function conflict(path: string, agent = "backend", minutes = 12): PathConflict {
  return {
    path,
    agent,
    task_id: "api",
    task_name: "Build API",
    pattern: "src/api/**",
    expires_at: new Date(NOW + minutes * 60_000).toISOString(),
  };
}

Deno.test("conflicts are listed with path, holder, task, pattern and time left, and refuse the commit", () => {
  const conflicts = [conflict("src/api/users.ts"), conflict("src/api/old.ts", "ui", 125)];
  const staged = [{ path: "src/api/users.ts", status: "M" }, { path: "src/api/old.ts", status: "D" }];
  const verdict = guardVerdict({ kind: "checked", conflicts, staged }, OPTIONS);
  assert.equal(verdict.code, 1);
  assert.deepEqual(verdict.lines.slice(0, 3), [
    'checklist-mcp guard: 2 staged paths are reserved by 2 other agents in session "shop":',
    '  src/api/users.ts: agent "backend" reserves src/api/** for task "Build API" (api), 12 min left',
    '  src/api/old.ts (deleted): agent "ui" reserves src/api/** for task "Build API" (api), 2 h 5 min left',
  ]);
  assert.equal(
    verdict.lines[3],
    "Commit refused: wait until those tasks are done or their leases run out, or leave the paths out " +
      "(git restore --staged PATH). git commit --no-verify skips this check.",
  );
  const warned = guardVerdict({ kind: "checked", conflicts, staged }, { ...OPTIONS, warn: true });
  assert.equal(warned.code, 0, "--warn prints the same and lets the commit go ahead");
  assert.deepEqual(warned.lines.slice(0, 3), verdict.lines.slice(0, 3));
  assert.equal(warned.lines[3], "Going ahead anyway (--warn).");
});

Deno.test("a clean check says nothing and exits 0; one path under one holder reads in the singular", () => {
  assert.deepEqual(guardVerdict({ kind: "checked", conflicts: [], staged: [] }, OPTIONS), {
    code: 0,
    lines: [],
  });
  const one = guardVerdict({ kind: "checked", conflicts: [conflict("a.ts")], staged: [] }, OPTIONS);
  assert.equal(
    one.lines[0],
    'checklist-mcp guard: 1 staged path is reserved by another agent in session "shop":',
  );
});

Deno.test("a long list is cut after the limit and the rest counted; a name with a newline is quoted", () => {
  const many = Array.from({ length: LIMITS.guardLines + 7 }, (_, i) => conflict(`src/api/f${i}.ts`));
  const verdict = guardVerdict({ kind: "checked", conflicts: many, staged: [] }, OPTIONS);
  assert.equal(verdict.lines.length, 1 + LIMITS.guardLines + 1 + 1);
  assert.equal(verdict.lines.at(-2), "  … and 7 more");
  const odd = { ...conflict("src/api/a\nb.ts"), task_name: "evil \u001b[31m" };
  const line = guardVerdict({ kind: "checked", conflicts: [odd], staged: [] }, OPTIONS).lines[1]!;
  assert.ok(line.startsWith('  "src/api/a\\nb.ts": '), line);
  assert.ok(line.includes('"evil \\u001b[31m"'), line);
});

Deno.test("a store or repository out of reach is one line: exit 0, or 2 with --strict; bad flags exit 2", () => {
  const unreachable = { kind: "unreachable", reason: "FILE_PATH /x.json does not exist" } as const;
  assert.deepEqual(guardVerdict(unreachable, OPTIONS), {
    code: 0,
    lines: ["checklist-mcp guard: cannot check (FILE_PATH /x.json does not exist); nothing was checked."],
  });
  const strict = guardVerdict(unreachable, { ...OPTIONS, strict: true });
  assert.equal(strict.code, 2);
  assert.equal(strict.lines.length, 1);
  assert.deepEqual(guardVerdict({ kind: "usage", message: "bad" }, OPTIONS), { code: 2, lines: ["bad"] });
});

Deno.test("time left is said for people", () => {
  const at = (ms: number) => new Date(NOW + ms).toISOString();
  assert.equal(timeLeft(at(45_000), NOW), "45 s left");
  assert.equal(timeLeft(at(200), NOW), "1 s left");
  assert.equal(timeLeft(at(12 * 60_000 + 10_000), NOW), "12 min left");
  assert.equal(timeLeft(at(60 * 60_000), NOW), "1 h left");
  assert.equal(timeLeft(at(24 * 60 * 60_000), NOW), "24 h left");
  assert.equal(timeLeft(at(0), NOW), "ending now");
  assert.equal(timeLeft(at(-5_000), NOW), "ending now");
});
