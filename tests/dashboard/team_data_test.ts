/**
 * The dashboard's data for a team at work at 10,000 tasks (JSON file store): the agents at work,
 * their held leaves unfolded with a narrow window, the blocked rows marked, with paths each held
 * leaf's paths and branch and the leaves waiting on a reservation; the page's JSON stays small (about
 * as small as a page without agents).
 */
import assert from "node:assert/strict";
import { LOCAL_CREDENTIAL } from "../../lib/auth/credential.ts";
import { JsonFileStore } from "../../lib/store/json_file_store.ts";
import { HELD_WINDOW } from "../../lib/render/fold.ts";
import { PageViewSchema, type TaskRow } from "../../lib/render/model.ts";
import { DashboardData } from "../../lib/dashboard/server/data.ts";
import { quietLogger } from "../support/logs.ts";
import { bigPlanDocument, bigTeamPlanDocument } from "../support/dashboard.ts";

async function pageOf(doc: Record<string, unknown>) {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/tasks.json`, JSON.stringify(doc));
    const store = await JsonFileStore.open(`${dir}/tasks.json`);
    try {
      return await new DashboardData(store, quietLogger()).page(LOCAL_CREDENTIAL, { session: "big" });
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a 10,000-task session with four agents at work: each held leaf shown with its holder, blocked rows marked, the page's JSON small", async () => {
  const team = await pageOf(bigTeamPlanDocument("big"));
  PageViewSchema.parse(team);
  const session = team.session!;
  assert.deepEqual(session.agents.map((a) => [a.agent, a.id]), [
    ["agent-0", "s5-4-50"],
    ["agent-1", "s5-5-0"],
    ["agent-2", "s5-6-0"],
    ["agent-3", "s5-7-0"],
  ]);
  assert.deepEqual(team.namespaces[0]!.sessions[0]!.agents.map((a) => a.agent), [
    "agent-0",
    "agent-1",
    "agent-2",
    "agent-3",
  ]);
  const rows = session.rows.filter((r): r is TaskRow => r.kind === "task");
  assert.deepEqual(rows.filter((r) => r.claim).map((r) => [r.id, r.claim!.agent]), [
    ["s5-4-50", "agent-0"],
    ["s5-5-0", "agent-1"],
    ["s5-6-0", "agent-2"],
    ["s5-7-0", "agent-3"],
  ]);
  assert.equal(rows.filter((r) => r.parent_id === "m5-5").length, HELD_WINDOW);
  assert.deepEqual(rows.find((r) => r.id === "m5-8")?.blocked_by, [{ id: "m5-4", name: "Milestone 5.4" }]);
  assert.deepEqual(rows.find((r) => r.id === "p6")?.blocked_by, [{ id: "p5", name: "Phase 5" }]);
  assert.equal(rows.find((r) => r.id === "p5")?.parallel, true);

  const alone = await pageOf(bigPlanDocument("big"));
  const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
  assert.ok(bytes(team) < 2 * bytes(alone), `${bytes(team)} bytes with agents, ${bytes(alone)} without`);
  assert.ok(rows.length < 2 * alone.session!.rows.length);
});

Deno.test("a 10,000-task session with four agents holding paths: held rows show their paths and branch, the shown leaves waiting on a reservation name its holder, the page's JSON barely grows", async () => {
  const work = await pageOf(bigTeamPlanDocument("big", { paths: true }));
  PageViewSchema.parse(work);
  const rows = work.session!.rows.filter((r): r is TaskRow => r.kind === "task");
  assert.deepEqual(
    rows.filter((r) => r.work).map((r) => [r.id, r.work!.paths, r.work!.paths_more, r.work!.git?.short]),
    [
      ["s5-4-50", ["src/m5-4/a.ts", "src/m5-4/b.ts", "src/m5-4/c.ts"], 2, "feature/agent-0@0000000"],
      ["s5-5-0", ["src/m5-5/**", "docs/m5-5.md"], undefined, "feature/agent-1@1111111"],
      ["s5-6-0", ["src/m5-6/**", "docs/m5-6.md"], undefined, "feature/agent-2@2222222"],
      ["s5-7-0", ["src/m5-7/**", "docs/m5-7.md"], undefined, "feature/agent-3@3333333"],
    ],
  );
  // Milestone 5.6 runs in parallel: its other shown leaves wait on agent-2's reservation; in the
  // sequential milestones the leaves after a held one wait for it anyway, and are not marked.
  const reserved = rows.filter((r) => r.reserved_by);
  assert.deepEqual(reserved.map((r) => r.id), ["s5-6-1", "s5-6-2", "s5-6-3", "s5-6-4", "s5-6-5", "s5-6-6"]);
  for (const row of reserved) {
    assert.deepEqual(row.reserved_by!.map((r) => [r.agent, r.id, r.pair]), [
      ["agent-2", "s5-6-0", ["src/m5-6/**", "src/m5-6/**"]],
    ]);
  }

  const team = await pageOf(bigTeamPlanDocument("big"));
  const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
  assert.ok(bytes(work) < 1.5 * bytes(team), `${bytes(work)} bytes with paths, ${bytes(team)} without`);
});
