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
import { type ProgressDoc, ProjectSchema, StoredProjectSchema } from "../domain/progress_doc.ts";
import { SessionIdSchema } from "../domain/schemas.ts";
import { recentWorks, type WorkEntry, WorkIdSchema, workInfo } from "../domain/work_lru.ts";
import type { Logger } from "../log.ts";
import { isWellFormed } from "../domain/unicode.ts";
import { linkableNames } from "../store/stored_names.ts";
import type { Space } from "../store/store.ts";
import { type ListResourcesResult, type Resource, ResourceNotFoundError } from "./sdk.ts";
import { type Catalog, invalidParams } from "./catalog.ts";
import { progressUri, sessionUri, URI_TEMPLATES, workUri } from "./resource_uris.ts";
import { describeProgress, noProgressText } from "./tools_progress.ts";
import { describeWork } from "./tools_works.ts";
import { DEFAULT_SESSION } from "../domain/names.ts";

const JSON_TYPE = "application/json";
const LONE_SURROGATE = "holds a lone surrogate: send well-formed Unicode";

// The `resume` prompt's arguments, built once per process: a 2026-07-28 server is built for every
// HTTP request, and building these zod schemas was most of its cost (BENCHMARKS.md, issue 28).
const PROJECT_ARGUMENT = ProjectSchema.refine(isWellFormed, LONE_SURROGATE).optional()
  .describe("Project of the progress document");
const SESSION_ARGUMENT = SessionIdSchema.refine(isWellFormed, LONE_SURROGATE).optional()
  .describe("Task tree; default: that of the latest work");

/** Options of {@link registerHandoff}. */
export interface HandoffOptions {
  space: Space;
  /** The enabled tool groups: each resource and the prompt appear only with the groups they serve. */
  groups: ReadonlySet<ToolGroup>;
  /** Capacity of the work-info LRU: entries past it are not listed. */
  workCacheSize: number;
  /** Resources registered elsewhere (the plan view), listed first. */
  fixed?: readonly Resource[];
  /** The store shared by every connection: a stored name that cannot be listed is logged once per store. */
  root: object;
  log: Logger;
}

/** Pages `resources/list`: the page after `cursor` (the first without one). */
export type ListResources = (cursor: string | undefined) => Promise<ListResourcesResult>;

/**
 * Puts the resources, templates, completions and the `resume` prompt of the enabled groups in
 * `catalog`; returns how `resources/list` pages them, or undefined when nothing is listed.
 */
export function registerHandoff(catalog: Catalog, options: HandoffOptions): ListResources | undefined {
  const { space, groups, workCacheSize } = options;
  const hasTasks = groups.has("tasks") || groups.has("checklist");
  const completeSession = async (value: string | undefined) => matching(await space.listSessions(), value);
  const completeProject = async (value: string | undefined) => matching(await space.listProjects(), value);
  const completeWork = async (value: string) =>
    matching(
      await space.readWorks((e) => recentWorks(e.values(), workCacheSize).map((w) => w.workId)),
      value,
    );

  if (hasTasks) {
    catalog.template("session", {
      uriTemplate: URI_TEMPLATES.session,
      metadata: SESSION_META,
      complete: { sessionId: completeSession },
      read: async (uri, variables) => {
        const sessionId = variable(variables, "sessionId", SessionIdSchema);
        const tasks = await space.readTree(sessionId, (tree) => tree && structuredClone(tree.roots));
        if (!tasks) throw new ResourceNotFoundError(uri.href, `No session "${sessionId}"`);
        return jsonContents(uri, { sessionId, tasks });
      },
    });
  }

  if (groups.has("works")) {
    catalog.template("work", {
      uriTemplate: URI_TEMPLATES.work,
      metadata: {
        title: "Saved work",
        description:
          "A saved work entry as JSON. Reading it does not count as use in the LRU (get_work_by_id does).",
        mimeType: JSON_TYPE,
      },
      complete: { workId: completeWork },
      read: async (uri, variables) => {
        const workId = variable(variables, "workId", WorkIdSchema);
        const info = await space.readWorks((e) => {
          const entry = e.get(workId);
          return entry && structuredClone(workInfo(entry));
        });
        if (!info) throw new ResourceNotFoundError(uri.href, `No work "${workId}"`);
        return jsonContents(uri, info);
      },
    });
  }

  if (groups.has("progress")) {
    catalog.template("progress", {
      uriTemplate: URI_TEMPLATES.progress,
      metadata: PROGRESS_META,
      complete: { project: completeProject },
      read: async (uri, variables) => {
        const project = variable(variables, "project", StoredProjectSchema);
        const doc = await space.readProgress(project);
        if (!doc) throw new ResourceNotFoundError(uri.href, `No progress for "${project}"`);
        return jsonContents(uri, doc);
      },
    });
  }

  const lister = hasTasks || groups.has("works") || groups.has("progress") || (options.fixed ?? []).length > 0
    ? resourceList(options)
    : undefined;

  if (groups.has("works") || groups.has("progress")) {
    catalog.prompt("resume", {
      title: "Resume work",
      description:
        "Everything needed to pick up work: the progress document, recent works and current tasks.",
      arguments: {
        project: {
          schema: PROJECT_ARGUMENT,
          complete: completeProject,
        },
        sessionId: {
          schema: SESSION_ARGUMENT,
          complete: completeSession,
        },
      },
      get: async ({ project, sessionId }) => ({
        description: "Resume work",
        messages: [{
          role: "user",
          content: {
            type: "text",
            text: await resumeText({ space, groups, workCacheSize, project, sessionId }),
          },
        }],
      }),
    });
  }
  return lister;
}

/**
 * Answers `resources/list` one page at a time (at most {@link LIMITS}.listPage resources, then a
 * `nextCursor`): the fixed resources, then sessions, works and progress documents, each by name. The
 * cursor is the last resource's place in that order, so a page never repeats one and a listing that
 * runs while names come and go still returns every name that stayed. A stored name that is not
 * well-formed Unicode has no URI: it is left out and logged once (lib/store/stored_names.ts).
 */
function resourceList(options: HandoffOptions): ListResources {
  const { space, groups, workCacheSize } = options;
  const source = { store: options.root, namespace: space.namespace, log: options.log };
  const all = async (): Promise<Listed[]> => {
    const out: Listed[] = (options.fixed ?? []).map((resource) => ({ rank: 0, key: resource.uri, resource }));
    if (groups.has("tasks") || groups.has("checklist")) {
      for (const id of linkableNames(await space.listSessions(), { ...source, kind: "session" })) {
        out.push({
          rank: 1,
          key: id,
          resource: { uri: sessionUri(id), name: `session ${id}`, ...SESSION_META },
        });
      }
    }
    if (groups.has("works")) {
      for (const w of await space.readWorks((e) => recentWorks(e.values(), workCacheSize))) {
        out.push({
          rank: 2,
          key: w.workId,
          resource: {
            ...WORK_META,
            uri: workUri(w.workId),
            name: `work ${w.workId}`,
            title: w.work_description,
            description: `Saved ${w.work_timestamp}`,
          },
        });
      }
    }
    if (groups.has("progress")) {
      for (const project of linkableNames(await space.listProjects(), { ...source, kind: "project" })) {
        out.push({
          rank: 3,
          key: project,
          resource: { uri: progressUri(project), name: `progress ${project}`, ...PROGRESS_META },
        });
      }
    }
    return out;
  };
  return async (cursor) => {
    const after = cursor === undefined ? undefined : readCursor(cursor);
    const rest = (await all()).filter((item) => after === undefined || compare(item, after) > 0).sort(
      compare,
    );
    const page = rest.slice(0, LIMITS.listPage);
    const last = page[page.length - 1];
    return {
      resources: page.map((item) => item.resource),
      ...(rest.length > page.length && last ? { nextCursor: writeCursor(last) } : {}),
    };
  };
}

/** A resource in the listing order: rank (fixed, session, work, progress), then name. */
interface Listed {
  rank: number;
  key: string;
  resource: Resource;
}

const SESSION_META = {
  title: "Task tree",
  description: "A session's task tree as JSON: { sessionId, tasks } with nested subtasks.",
  mimeType: JSON_TYPE,
};
const WORK_META = { mimeType: JSON_TYPE };
const PROGRESS_META = {
  title: "Progress document",
  description: "A project's progress document as JSON, with its revision and update time.",
  mimeType: JSON_TYPE,
};

function compare(a: Pick<Listed, "rank" | "key">, b: Pick<Listed, "rank" | "key">): number {
  return a.rank - b.rank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

const CursorSchema = z.tuple([z.number().int().min(0).max(3), z.string()]);

/** The opaque cursor after `item`: base64url of `[rank, name]`. */
function writeCursor(item: Listed): string {
  const bytes = new TextEncoder().encode(JSON.stringify([item.rank, item.key]));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** The place a cursor names; anything this server did not write is invalid params. */
function readCursor(cursor: string): Pick<Listed, "rank" | "key"> {
  try {
    const binary = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const text = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
    const [rank, key] = CursorSchema.parse(JSON.parse(text));
    return { rank, key };
  } catch {
    throw invalidParams(
      "Invalid cursor for resources/list: pass the nextCursor of the previous page, or none for the first.",
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
    throw invalidParams(`Invalid ${name} in the resource URI: ${parsed.error.issues[0]?.message}`);
  }
  return parsed.data;
}

function jsonContents(uri: URL, value: unknown) {
  return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value, null, 2) }] };
}

interface ResumeInput {
  space: Space;
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
  const { space, groups } = input;
  const out: string[] = ["Resume the work described below, then continue with the next unfinished task."];
  let works: WorkEntry[] = [];

  if (groups.has("progress")) {
    out.push("", "## Progress");
    let project = input.project;
    if (project === undefined) {
      const projects = (await space.listProjects()).sort();
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
      const doc: ProgressDoc | undefined = await space.readProgress(project);
      out.push(doc ? describeProgress(doc) : noProgressText(project));
    }
  }

  if (groups.has("works")) {
    works = await space.readWorks((e) => recentWorks(e.values(), input.workCacheSize).map((w) => ({ ...w })));
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
    const sessionId = input.sessionId ?? works.find((w) => w.sessionId !== undefined)?.sessionId ??
      DEFAULT_SESSION;
    const roots = await space.readTree(sessionId, (tree) => tree && renderSession(tree));
    out.push("", `## Current tasks of session "${sessionId}"`);
    if (roots !== undefined) out.push(roots);
    else {
      const sessions = (await space.listSessions()).sort();
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
