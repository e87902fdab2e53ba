/**
 * Helpers of the dashboard tests: a realistic plan created through MCP, and reading the page's
 * rows as a person sees them.
 */
import type { Page } from "playwright-core";
import { call, ok, type ToolResult } from "./harness.ts";
import type { Client } from "./sdk_client.ts";

/** Creates a small realistic plan in `sessionId` through MCP, starts its first leaf, and writes handoff documents. */
export async function seedPlan(client: Client, sessionId = "release-2.0"): Promise<void> {
  await ok(client, "createTask", {
    sessionId,
    id: "release",
    name: "Ship release 2.0",
    description: "Everything needed to publish 2.0",
    completion_criteria: ["CI is green on main"],
    constraints: ["No breaking change to the tool names"],
    tasks: [
      {
        id: "notes",
        name: "Write the release notes",
        tasks: [
          {
            id: "notes-draft",
            name: "Draft the changelog",
            completion_criteria: ["Every merged PR is listed"],
          },
          { id: "notes-review", name: "Review the notes with the team" },
        ],
      },
      {
        id: "bench",
        name: "Run the benchmarks",
        constraints: ["Use the pinned Deno version"],
        tasks: [
          { id: "bench-run", name: "Run deno task bench" },
          { id: "bench-compare", name: "Compare with 1.9" },
        ],
      },
      { id: "tag", name: "Tag and publish" },
    ],
  });
  await ok(client, "startTask", { sessionId, id: "notes" });
  await ok(client, "mem_progress", {
    project: "checklist-mcp",
    session_id: sessionId,
    content: JSON.stringify({
      goal: "Publish 2.0 this week",
      completed: ["Froze the tool list"],
      next_steps: ["Draft the changelog", "Run the benchmarks"],
      blockers: ["Waiting for the CI runner upgrade"],
    }),
  });
  await ok(client, "save_current_work_info", {
    sessionId,
    work_description: "Started the release notes",
    work_summarize: "Collected the merged PRs since 1.9; the changelog draft is next.",
  });
}

/** The task rows of the page's tree: id, name, status class, depth, and whether it is on the path or active. */
export function treeRows(page: Page): Promise<
  { id: string; name: string; status: string; depth: number; path: boolean; active: boolean }[]
> {
  return page.$$eval("#session .tree > li[data-kind=task]", (items) =>
    items.map((el) => ({
      id: el.getAttribute("data-id") ?? "",
      name: el.querySelector(".name")?.textContent ?? "",
      status: [...el.classList].find((c) => c.startsWith("s-"))?.slice(2) ?? "",
      depth: Number(el.getAttribute("data-depth")),
      path: el.classList.contains("path"),
      active: el.classList.contains("active"),
    })));
}

/** Waits until the page has applied `count` live updates (the script counts them in `body[data-seq]`). */
export async function waitForUpdates(page: Page, count: number, timeout = 5000): Promise<void> {
  await page.waitForFunction(
    (n) => Number((globalThis as unknown as BrowserGlobals).document.body.dataset.seq ?? "0") >= n,
    count,
    { timeout },
  );
}

/** How many live updates the page has applied (`body[data-seq]`). */
export async function updateCount(page: Page): Promise<number> {
  return Number(await page.evaluate<string>(`document.body.dataset.seq ?? "0"`));
}

/** The little of the browser's globals these helpers touch (tests are type-checked without the DOM lib). */
interface BrowserGlobals {
  document: { body: { dataset: Record<string, string | undefined> } };
}

/** A stored task as the JSON file holds it. */
interface StoredTask {
  id: string;
  name: string;
  description: string;
  status: "todo" | "in_progress" | "done";
  tasks: StoredTask[];
}

/**
 * A store document (the JSON file's format) with one session of `roots × (1 + milestones × (1 + steps))`
 * tasks (defaults: 10,000): phases of milestones of steps, the first half done, one step in progress.
 */
export function bigPlanDocument(
  sessionId: string,
  roots = 10,
  milestones = 9,
  steps = 110,
): Record<string, unknown> {
  const activeRoot = Math.floor(roots / 2);
  const activeMilestone = Math.floor(milestones / 2);
  const activeStep = Math.floor(steps / 2) - 5;
  const make = (
    id: string,
    name: string,
    status: StoredTask["status"],
    tasks: StoredTask[] = [],
  ): StoredTask => ({
    id,
    name,
    description: "",
    status,
    tasks,
  });
  const phases: StoredTask[] = [];
  for (let r = 0; r < roots; r++) {
    const ms: StoredTask[] = [];
    for (let m = 0; m < milestones; m++) {
      const leaves: StoredTask[] = [];
      for (let s = 0; s < steps; s++) {
        const before = r < activeRoot ||
          (r === activeRoot && (m < activeMilestone || (m === activeMilestone && s < activeStep)));
        const active = r === activeRoot && m === activeMilestone && s === activeStep;
        leaves.push(
          make(`s${r}-${m}-${s}`, `Step ${r}.${m}.${s}`, before ? "done" : active ? "in_progress" : "todo"),
        );
      }
      const status = leaves.every((t) => t.status === "done")
        ? "done"
        : leaves.some((t) => t.status === "in_progress")
        ? "in_progress"
        : "todo";
      ms.push(make(`m${r}-${m}`, `Milestone ${r}.${m}`, status, leaves));
    }
    const status = ms.every((t) => t.status === "done")
      ? "done"
      : ms.some((t) => t.status === "in_progress")
      ? "in_progress"
      : "todo";
    phases.push(make(`p${r}`, `Phase ${r}`, status, ms));
  }
  return { version: 1, sessions: { [sessionId]: phases }, works: [], progress: {} };
}

/**
 * Starts watching the page for `selector`; the returned function waits for it and gives the moment
 * (absolute ms, the system clock shared with this process) the page's DOM first matched it, measured
 * in the page, so a slow test driver on a busy machine does not count.
 */
export async function watchFor(page: Page, selector: string): Promise<(timeout?: number) => Promise<number>> {
  const key = `__seen_${Math.random().toString(36).slice(2)}`;
  await page.evaluate(`(() => {
    const key = ${JSON.stringify(key)}, selector = ${JSON.stringify(selector)};
    const look = () => {
      if (window[key] === undefined && document.querySelector(selector)) {
        window[key] = performance.timeOrigin + performance.now();
      }
    };
    new MutationObserver(look).observe(document.documentElement, { subtree: true, childList: true, attributes: true });
    look();
  })()`);
  return async (timeout = 10_000) => {
    await page.waitForSelector(selector, { timeout });
    return await page.evaluate<number>(`window[${JSON.stringify(key)}]`);
  };
}

/** Now on the clock {@link watchFor} uses. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** The agent name with markup the team tests try (refused by the name rule, never markup). */
export const EVIL_AGENT = `<img src=x onerror="alert('agent')">`;

/**
 * A team plan in `sessionId` through MCP, as a lead and its workers make it: a parallel root with
 * four leaves, the API guide blocked by the API; `backend` claims the API, `frontend` the sign-up
 * page (claimTask, the first ready leaf each). With `paths`, the leaves name the paths they change,
 * and the end-to-end tests' touch the API's (so they wait on backend's reservation). Returns the second
 * claim's arguments and whole reply.
 */
export async function seedTeamPlan(
  client: Client,
  sessionId = "beta",
  options: { paths?: boolean } = {},
): Promise<{ args: Record<string, unknown>; result: ToolResult }> {
  const paths = (...list: string[]) => (options.paths ? { paths: list } : {});
  await ok(client, "createTask", {
    sessionId,
    id: "launch",
    name: "Launch the beta",
    parallel: true,
    completion_criteria: ["Sign-up works end to end"],
    tasks: [
      {
        id: "api",
        name: "Build the API",
        completion_criteria: ["Every endpoint has a test"],
        ...paths("src/api/", "docs/api.md", "openapi.yaml", "tests/api/"),
      },
      { id: "signup", name: "Build the sign-up page", ...paths("src/web/signup/") },
      { id: "e2e", name: "Write the end-to-end tests", ...paths("tests/e2e/", "src/api/test_client.ts") },
      { id: "guide", name: "Write the API guide", blocked_by: ["api"], ...paths("docs/guide/") },
    ],
  });
  const backend = await ok<{ task: { id: string } }>(client, "claimTask", { sessionId, agent: "backend" });
  if (backend.task.id !== "api") throw new Error(`backend claimed ${backend.task.id}`);
  const args = { sessionId, agent: "frontend" };
  const result = await call(client, "claimTask", args);
  const claimed = (result.structuredContent as { task?: { id: string } } | undefined)?.task?.id;
  if (result.isError || claimed !== "signup") throw new Error(`frontend claimed ${claimed}`);
  return { args, result };
}

/** Options of {@link bigTeamPlanDocument}. */
export interface TeamPlanOptions {
  /** When the leases end, from now (default 30 minutes). */
  leaseMs?: number;
  /**
   * Paths and where the work lives (docs/teams.md): each milestone of phase 5 names `src/m5-K/**` and
   * `docs/m5-K.md`, `agent-0`'s leaf five paths of its own, each held leaf a `git` record, and
   * milestone 5.6 runs in parallel, so its other leaves wait on `agent-2`'s reservation.
   */
  paths?: boolean;
}

/**
 * {@link bigPlanDocument} as a team works it: phase 5 parallel, four agents each holding a leaf in
 * progress (`agent-0` the usual active step, the others the first step of the next milestones) with
 * leases ending `leaseMs` from now, milestone 5.8 blocked by 5.4, and every task of phase 6 blocked
 * by phase 5 (each of its rows carries the mark); with `paths`, see {@link TeamPlanOptions}.
 */
export function bigTeamPlanDocument(
  sessionId: string,
  options: TeamPlanOptions = {},
): Record<string, unknown> {
  const doc = bigPlanDocument(sessionId) as { sessions: Record<string, TeamTask[]> };
  const phases = doc.sessions[sessionId]!;
  const byId = new Map<string, TeamTask>();
  const index = (t: TeamTask) => {
    byId.set(t.id, t);
    t.tasks.forEach(index);
  };
  phases.forEach(index);
  const since = new Date().toISOString();
  const expires_at = new Date(Date.now() + (options.leaseMs ?? 30 * 60_000)).toISOString();
  byId.get("p5")!.parallel = true;
  for (const [i, id] of ["s5-4-50", "s5-5-0", "s5-6-0", "s5-7-0"].entries()) {
    const leaf = byId.get(id)!;
    leaf.status = "in_progress";
    leaf.claim = { agent: `agent-${i}`, since, expires_at };
    byId.get(id.replace(/^s(\d+-\d+)-\d+$/, "m$1"))!.status = "in_progress";
    if (options.paths) {
      leaf.git = {
        agent: `agent-${i}`,
        at: since,
        worktree: `/home/me/shop-agent-${i}`,
        branch: `feature/agent-${i}`,
        head: String(i).repeat(40),
        dirty: ["src/changed.ts"],
        dirty_count: 1,
      };
    }
  }
  byId.get("m5-8")!.blocked_by = ["m5-4"];
  byId.get("p6")!.blocked_by = ["p5"];
  if (options.paths) {
    for (const milestone of byId.get("p5")!.tasks) {
      milestone.paths = [`src/${milestone.id}/**`, `docs/${milestone.id}.md`];
    }
    byId.get("s5-4-50")!.paths = [
      "src/m5-4/a.ts",
      "src/m5-4/b.ts",
      "src/m5-4/c.ts",
      "src/m5-4/d.ts",
      "docs/m5-4.md",
    ];
    byId.get("m5-6")!.parallel = true;
  }
  return doc;
}

/** A stored task with the team fields. */
interface TeamTask extends StoredTask {
  tasks: TeamTask[];
  parallel?: boolean;
  blocked_by?: string[];
  claim?: { agent: string; since: string; expires_at: string };
  paths?: string[];
  git?: Record<string, unknown>;
}
