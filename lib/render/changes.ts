/**
 * What a tool call did, read from its arguments and its reply as a chat host hands them to the view:
 * which session it was about and which tasks it started, completed, added or changed. Pure and
 * tolerant: a reply it does not recognise changes nothing (the view then shows the session as it is).
 */
import type { TaskChange } from "./model.ts";

/** A tool call as the view sees it; every part may be missing. */
export interface SeenCall {
  /** The tool's name, when the host tells it. */
  tool?: string;
  arguments?: Record<string, unknown>;
  /** The reply's `structuredContent`. */
  result?: Record<string, unknown>;
}

/** What a call was about and did. */
export interface CallEffect {
  /** The session; undefined when neither the arguments nor the reply name one. */
  sessionId: string | undefined;
  /** Task id → what the call did to it, in the order found. */
  changes: Record<string, TaskChange>;
  /** The leaf the call started or claimed (the view centres on it when several are in progress). */
  focus?: string;
}

/** The session a tool uses when its arguments name none (the task and history tools). */
export const DEFAULT_SESSION = "default";

const CHECKLIST = new Set(["update_tasks", "get_all_tasks", "mark_task_as_done"]);

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Which tool answered: from the shape of its reply (a view kept open may be handed the result of
 * another tool than the one it was opened for), else from the name the host gave.
 */
function toolOf(call: SeenCall): string | undefined {
  const r = call.result ?? {};
  if ("started_tasks" in r) return "startTask";
  if ("waiting_on" in r) return "claimTask";
  if ("progress_summary" in r) return "completeTask";
  if ("marked" in r) return "mark_task_as_done";
  if ("restored_from" in r) return "restore_tasks";
  if ("updated" in r && "tree" in r) return "update_tasks";
  if ("total_tasks" in r) return "get_all_tasks";
  const task = record(r.task);
  if (task && "revision" in r) return Array.isArray(task.tasks) ? "createTask" : "updateTask";
  return call.tool;
}

/** See the module doc. */
export function effectOf(call: SeenCall): CallEffect {
  const args = call.arguments ?? {};
  const result = call.result ?? {};
  const tool = toolOf(call);
  const named = text(args.sessionId) ?? text(result.sessionId);
  const sessionId = named ?? (tool && CHECKLIST.has(tool) ? undefined : DEFAULT_SESSION);
  const changes: Record<string, TaskChange> = {};
  const mark = (id: unknown, change: TaskChange) => {
    if (typeof id === "string" && id !== "" && !(id in changes)) changes[id] = change;
  };
  if (result.error !== undefined) return { sessionId, changes };
  switch (tool) {
    case "startTask": {
      for (const started of list(result.started_tasks)) mark(record(started)?.id, "started");
      const focus = text(record(result.task)?.id);
      if (focus !== undefined) return { sessionId, changes, focus };
      break;
    }
    case "completeTask":
      mark(args.id, "completed");
      break;
    case "mark_task_as_done":
      for (const id of list(result.marked)) mark(id, "completed");
      break;
    case "createTask": {
      const walk = (task: unknown) => {
        const t = record(task);
        if (!t) return;
        mark(t.id, "added");
        for (const sub of list(t.tasks)) walk(sub);
      };
      walk(result.task);
      break;
    }
    case "updateTask":
      mark(record(result.task)?.id ?? args.id, "changed");
      break;
    case "update_tasks": {
      const walk = (item: unknown) => {
        const t = record(item);
        if (!t) return;
        mark(t.taskId, "changed");
        for (const sub of list(t.children)) walk(sub);
      };
      for (const item of list(args.tasks)) walk(item);
      break;
    }
  }
  return { sessionId, changes };
}
