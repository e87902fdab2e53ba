/**
 * What makes resuming cheap besides the tools: resources for a session's tree, a work entry and a
 * progress document (templates with listing and argument completion), and the prompt `resume` that
 * puts the progress document, the recent works and the current tasks into one message.
 *
 * Everything is read from the store when asked, so every process sharing the store sees the same.
 * Reading a work here never counts as use in the LRU: only the tool `get_work_by_id` does.
 */
import { z } from "zod";
import type { ToolGroup } from "../config.ts";
import { renderSession } from "../domain/tree_text.ts";
import { LIMITS } from "../domain/limits.ts";
import type { ProgressDoc } from "../domain/progress_doc.ts";
import { SessionIdSchema } from "../domain/schemas.ts";
import { recentWorks, type WorkEntry, WorkIdSchema, workInfo } from "../domain/work_lru.ts";
import type { Space } from "../store/store.ts";
import { completable, McpError, type McpServer, ResourceTemplate } from "./sdk.ts";
import { describeProgress, noProgressText } from "./tools_progress.ts";
import { describeWork } from "./tools_works.ts";

/** JSON-RPC error code for an unknown resource (MCP specification). */
const RESOURCE_NOT_FOUND = -32002;
/** JSON-RPC "invalid params". */
const INVALID_PARAMS = -32602;
const JSON_TYPE = "application/json";

/** URI of a session's task tree. */
export function sessionUri(sessionId: string): string {
  return `checklist://sessions/${encodeURIComponent(sessionId)}`;
}
/** URI of a work entry. */
export function workUri(workId: string): string {
  return `checklist://works/${workId}`;
}
/** URI of a project's progress document. */
export function progressUri(project: string): string {
  return `checklist://progress/${encodeURIComponent(project)}`;
}

/** Options of {@link registerHandoff}. */
export interface HandoffOptions {
  store: Space;
  /** The enabled tool groups: each resource and the prompt appear only with the groups they serve. */
  groups: ReadonlySet<ToolGroup>;
  /** Capacity of the work-info LRU: entries past it are not listed. */
  workCacheSize: number;
}

/** Registers the resources, templates, completions and the `resume` prompt of the enabled groups. */
export function registerHandoff(mcp: McpServer, options: HandoffOptions): void {
  const { store, groups, workCacheSize } = options;
  const hasTasks = groups.has("tasks") || groups.has("checklist");
  const completeSession = async (value: string | undefined) => matching(await store.listSessions(), value);
  const completeProject = async (value: string | undefined) => matching(await store.listProjects(), value);
  const completeWork = async (value: string) =>
    matching(
      await store.readWorks((e) => recentWorks(e.values(), workCacheSize).map((w) => w.workId)),
      value,
    );

  if (hasTasks) {
    mcp.registerResource(
      "session",
      new ResourceTemplate("checklist://sessions/{sessionId}", {
        list: async () => ({
          resources: (await store.listSessions()).sort().map((id) => ({
            uri: sessionUri(id),
            name: `session ${id}`,
            mimeType: JSON_TYPE,
          })),
        }),
        complete: { sessionId: completeSession },
      }),
      {
        title: "Task tree",
        description: "A session's task tree as JSON: { sessionId, tasks } with nested subtasks.",
        mimeType: JSON_TYPE,
      },
      async (uri, variables) => {
        const sessionId = variable(variables, "sessionId", SessionIdSchema);
        const tasks = await store.readTree(sessionId, (tree) => tree && structuredClone(tree.roots));
        if (!tasks) throw new McpError(RESOURCE_NOT_FOUND, `No session "${sessionId}"`, { uri: uri.href });
        return jsonContents(uri, { sessionId, tasks });
      },
    );
  }

  if (groups.has("works")) {
    mcp.registerResource(
      "work",
      new ResourceTemplate("checklist://works/{workId}", {
        list: async () => ({
          resources: (await store.readWorks((e) => recentWorks(e.values(), workCacheSize))).map((w) => ({
            uri: workUri(w.workId),
            name: `work ${w.workId}`,
            title: w.work_description,
            description: `Saved ${w.work_timestamp}`,
            mimeType: JSON_TYPE,
          })),
        }),
        complete: { workId: completeWork },
      }),
      {
        title: "Saved work",
        description:
          "A saved work entry as JSON. Reading it does not count as use in the LRU (get_work_by_id does).",
        mimeType: JSON_TYPE,
      },
      async (uri, variables) => {
        const workId = variable(variables, "workId", WorkIdSchema);
        const info = await store.readWorks((e) => {
          const entry = e.get(workId);
          return entry && structuredClone(workInfo(entry));
        });
        if (!info) throw new McpError(RESOURCE_NOT_FOUND, `No work "${workId}"`, { uri: uri.href });
        return jsonContents(uri, info);
      },
    );
  }

  if (groups.has("progress")) {
    mcp.registerResource(
      "progress",
      new ResourceTemplate("checklist://progress/{project}", {
        list: async () => ({
          resources: (await store.listProjects()).sort().map((project) => ({
            uri: progressUri(project),
            name: `progress ${project}`,
            mimeType: JSON_TYPE,
          })),
        }),
        complete: { project: completeProject },
      }),
      {
        title: "Progress document",
        description: "A project's progress document as JSON, with its revision and update time.",
        mimeType: JSON_TYPE,
      },
      async (uri, variables) => {
        const project = variable(variables, "project", z.string().min(1).max(LIMITS.projectLength));
        const doc = await store.readProgress(project);
        if (!doc) throw new McpError(RESOURCE_NOT_FOUND, `No progress for "${project}"`, { uri: uri.href });
        return jsonContents(uri, doc);
      },
    );
  }

  if (groups.has("works") || groups.has("progress")) {
    mcp.registerPrompt(
      "resume",
      {
        title: "Resume work",
        description:
          "Everything needed to pick up work: the progress document, recent works and current tasks.",
        argsSchema: {
          project: completable(
            z.string().trim().min(1).max(LIMITS.projectLength).optional().describe(
              "Project of the progress document",
            ),
            completeProject,
          ),
          sessionId: completable(
            SessionIdSchema.optional().describe("Task tree; default: that of the latest work"),
            completeSession,
          ),
        },
      },
      async ({ project, sessionId }) => ({
        description: "Resume work",
        messages: [{
          role: "user",
          content: {
            type: "text",
            text: await resumeText({ store, groups, workCacheSize, project, sessionId }),
          },
        }],
      }),
    );
  }
}

/** Values that start with `prefix` (case-insensitive), sorted. */
function matching(values: readonly string[], prefix: string | undefined): string[] {
  const p = (prefix ?? "").toLowerCase();
  return values.filter((v) => v.toLowerCase().startsWith(p)).sort();
}

/** A URI template variable, percent-decoded and checked; a bad one is an invalid-params error. */
function variable<T>(variables: Record<string, string | string[]>, name: string, schema: z.ZodType<T>): T {
  const raw = variables[name];
  let decoded: string | undefined;
  try {
    decoded = typeof raw === "string" ? decodeURIComponent(raw) : undefined;
  } catch {
    decoded = undefined;
  }
  const parsed = schema.safeParse(decoded);
  if (!parsed.success) {
    throw new McpError(
      INVALID_PARAMS,
      `Invalid ${name} in the resource URI: ${parsed.error.issues[0]?.message}`,
    );
  }
  return parsed.data;
}

function jsonContents(uri: URL, value: unknown) {
  return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value, null, 2) }] };
}

interface ResumeInput {
  store: Space;
  groups: ReadonlySet<ToolGroup>;
  workCacheSize: number;
  project?: string | undefined;
  sessionId?: string | undefined;
}

/**
 * The `resume` prompt's message: the progress document (of `project`, or of the only project),
 * the recent works with the latest summary, the current tasks of the session, and what to do next.
 * Only sections of enabled groups appear; nothing here counts as use in the LRU.
 */
export async function resumeText(input: ResumeInput): Promise<string> {
  const { store, groups } = input;
  const out: string[] = ["Resume the work described below, then continue with the next unfinished task."];
  let works: WorkEntry[] = [];

  if (groups.has("progress")) {
    out.push("", "## Progress");
    let project = input.project;
    if (project === undefined) {
      const projects = (await store.listProjects()).sort();
      if (projects.length === 1) project = projects[0];
      else if (projects.length === 0) out.push("No progress document in any project yet.");
      else {
        out.push(
          `Projects with progress: ${projects.slice(0, 20).join(", ")}${
            projects.length > 20 ? ", …" : ""
          }. ` +
            "Read yours with mem_progress(project).",
        );
      }
    }
    if (project !== undefined) {
      const doc: ProgressDoc | undefined = await store.readProgress(project);
      out.push(doc ? describeProgress(doc) : noProgressText(project));
    }
  }

  if (groups.has("works")) {
    works = await store.readWorks((e) => recentWorks(e.values(), input.workCacheSize).map((w) => ({ ...w })));
    out.push("", "## Recent works (most recently used first)");
    if (works.length === 0) out.push("No saved work yet.");
    else {
      for (const w of works) out.push(`- ${w.workId} · ${w.work_timestamp} · ${w.work_description}`);
      const latest = (input.sessionId !== undefined && works.find((w) => w.sessionId === input.sessionId)) ||
        works[0]!;
      out.push("", "### Latest handover", describeWork(workInfo(latest), false));
    }
  }

  if (groups.has("tasks") || groups.has("checklist")) {
    const sessionId = input.sessionId ?? works.find((w) => w.sessionId !== undefined)?.sessionId ?? "default";
    const roots = await store.readTree(sessionId, (tree) => tree && renderSession(tree));
    out.push("", `## Current tasks of session "${sessionId}"`);
    if (roots !== undefined) out.push(roots);
    else {
      const sessions = (await store.listSessions()).sort();
      out.push(
        `Session "${sessionId}" has no tasks.${
          sessions.length > 0
            ? ` Sessions: ${sessions.slice(0, 20).join(", ")}${sessions.length > 20 ? ", …" : ""}.`
            : ""
        }`,
      );
    }
  }

  const next: string[] = [];
  if (groups.has("tasks")) next.push("Take one task at a time with startTask and completeTask.");
  else if (groups.has("checklist")) next.push("Mark finished tasks with mark_task_as_done.");
  if (groups.has("progress")) {
    next.push("Update the progress document with mem_progress after significant work.");
  }
  if (groups.has("works")) next.push("Before handing over, call save_current_work_info.");
  out.push("", "## Next", ...next.map((n) => `- ${n}`));
  return out.join("\n");
}
