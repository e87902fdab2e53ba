/**
 * The server's `instructions`: the workflow in a few lines, sent at `initialize` and in
 * `server/discover`, naming only tools of the enabled groups (every client pays for this text in
 * context on every turn).
 */
import { TOOL_GROUPS, type ToolGroup } from "../config.ts";

/** The instructions by the enabled groups (in {@link TOOL_GROUPS} order), built once per process. */
const BUILT = new Map<string, string>();

/** The instructions for the enabled groups. */
export function instructionsFor(groups: Iterable<ToolGroup>): string {
  const on = new Set(groups);
  const key = TOOL_GROUPS.filter((group) => on.has(group)).join(",");
  let text = BUILT.get(key);
  if (text === undefined) BUILT.set(key, text = build(on));
  return text;
}

function build(on: ReadonlySet<ToolGroup>): string {
  const lines = ["Task tree and handoff server for coding agents."];
  const start = [
    ...(on.has("progress") ? ["your progress (mem_progress(project))"] : []),
    ...(on.has("works") ? ["the recent handovers (get_recent_works_info)"] : []),
  ];
  if (start.length > 0) lines.push(`First read ${start.join(" and ")}.`);
  if (on.has("tasks")) {
    lines.push(
      "Plan with createTask (nested `tasks`; teams: parallel parts, blocked_by dependencies).",
      "Work one task at a time: startTask, then completeTask with a resolution.",
      "Team workers loop claimTask(agent) → work → completeTask, re-call claimTask as a heartbeat on long work, save work info before stopping.",
      "Leave findings (decisions, files, gotchas) with updateTask(note); a start returns `context`: what blockers and earlier agents left.",
    );
  } else if (on.has("checklist")) {
    lines.push(
      "Keep the plan with update_tasks and get_all_tasks; mark finished tasks with mark_task_as_done.",
    );
  }
  if (on.has("history")) {
    lines.push(
      "Undo a damaged plan with restore_tasks (revisions: task_history).",
    );
  }
  if (on.has("progress")) {
    lines.push(
      "After significant work, rewrite mem_progress(project, content) as {goal, completed, next_steps, blockers}: your memory, not a report.",
    );
  }
  if (on.has("works")) {
    lines.push(
      "Before handing over, call save_current_work_info (with the sessionId) and pass on the workId.",
    );
  }
  lines.push(
    on.has("tasks")
      ? "Errors are isError with a code (NOT_FOUND, CLAIMED, …) and what to do next."
      : "Errors come back as isError with a code (INVALID_INPUT, NOT_FOUND, …) and what to do next.",
  );
  return lines.join("\n");
}

/** The instructions with every group enabled. */
export const INSTRUCTIONS: string = instructionsFor(TOOL_GROUPS);
