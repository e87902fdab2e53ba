/** Tool group `checklist`: the original Checklist MCP Server's tools over the same tree. */
import { z } from "zod";
import { ChecklistItemSchema, markDone, MarkFailureSchema, updateTasks } from "../domain/checklist.ts";
import { fail } from "../domain/errors.ts";
import { RevisionSchema } from "../domain/history_entry.ts";
import { LIMITS } from "../domain/limits.ts";
import { SessionIdSchema } from "../domain/schemas.ts";
import { renderSession } from "../domain/tree_text.ts";
import { actorOf, defineTool, type ToolDef } from "./tool.ts";

const sessionId = SessionIdSchema;

const updateTasksTool = defineTool({
  name: "update_tasks",
  group: "checklist",
  title: "Update checklist",
  description:
    'Replace the tasks at a path ("/": top level; "/a/b/": children of b under a). Existing taskIds keep their other fields; unlisted tasks there are removed.',
  input: z.object({
    sessionId,
    path: z.string().max(LIMITS.taskIdLength * LIMITS.depth + LIMITS.depth + 1).regex(
      /^\/(?:[^\s/]+\/)*$|^$/,
      "a path looks like / or /a/b/",
    ).default("/")
      .describe("Where to replace"),
    tasks: z.array(ChecklistItemSchema).describe("The new task list at that path"),
  }),
  output: z.object({
    sessionId: z.string(),
    updated: z.number().int(),
    tree: z.string(),
    revision: RevisionSchema,
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  async run({ sessionId, path, tasks }, ctx) {
    const { result: { updated, notes, tree }, revision } = await ctx.space.updateTree(sessionId, (t) => ({
      ...updateTasks(t, path, tasks, actorOf(ctx)),
      tree: renderSession(t, ctx.now()),
    }), { tool: "update_tasks" });
    const text = [
      `Successfully updated ${updated} tasks at ${path} in session ${sessionId}.`,
      ...notes,
      "",
      tree,
    ].join("\n");
    return {
      text,
      structured: { sessionId, updated, tree, revision },
      effect: { changed: listedIds(tasks) },
    };
  },
});

const getAllTasksTool = defineTool({
  name: "get_all_tasks",
  group: "checklist",
  title: "Get checklist",
  description: "Show the session's whole task tree (✓ done, ◐ in progress, ○ todo).",
  input: z.object({ sessionId }),
  output: z.object({ sessionId: z.string(), total_tasks: z.number().int(), tree: z.string() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run({ sessionId }, { space, now }) {
    const at = now();
    const { total, tree } = await space.readTree(sessionId, (t) => ({
      total: t?.size ?? 0,
      tree: renderSession(t, at),
    }));
    return { text: tree, structured: { sessionId, total_tasks: total, tree } };
  },
});

const markDoneTool = defineTool({
  name: "mark_task_as_done",
  group: "checklist",
  title: "Mark tasks done",
  description:
    "Mark tasks done, in the order given. A parent with unfinished subtasks fails for that id, with the reason.",
  input: z.object({
    sessionId,
    // Each id is judged on its own (a malformed one fails alone), so any string is taken here.
    taskIds: z.array(z.string()).min(1).max(LIMITS.tasksPerCall).describe("Ids to mark done"),
  }),
  output: z.object({
    marked: z.array(z.string()),
    failed: z.array(MarkFailureSchema),
    tree: z.string(),
    revision: RevisionSchema,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run({ sessionId, taskIds }, ctx) {
    const { result: { marked, failed, tree }, revision } = await ctx.space.updateTree(sessionId, (t) => {
      const result = markDone(t, taskIds, actorOf(ctx));
      if (result.marked.length === 0) {
        // Nothing marked: a refusal, so nothing (not even a new empty session) is kept.
        fail(
          result.failed[0]!.code,
          result.failed.map((f) => `${f.taskId}: ${withoutStop(f.reason)}`).join("; ") +
            ". Call get_all_tasks to see the tree.",
        );
      }
      return { ...result, tree: renderSession(t, ctx.now()) };
    }, { tool: "mark_task_as_done" });
    const lines = [`Marked done: ${marked.join(", ")}.`];
    for (const f of failed) lines.push(`Failed ${f.taskId}: ${withoutStop(f.reason)}.`);
    lines.push("", tree);
    return {
      text: lines.join("\n"),
      structured: { marked, failed, tree, revision },
      effect: { completed: marked },
    };
  },
});

/** The taskIds of `items` and of their children, in the order given. */
function listedIds(
  items: readonly { taskId: string; children?: readonly unknown[] | undefined }[],
): string[] {
  return items.flatMap((item) => [item.taskId, ...listedIds((item.children ?? []) as typeof items)]);
}

/** The checklist tools, in listing order. */
export const CHECKLIST_TOOLS: ToolDef[] = [
  updateTasksTool,
  getAllTasksTool,
  markDoneTool,
] as unknown as ToolDef[];

/** A reason without its closing full stop, so a sentence built around it ends with one. */
function withoutStop(reason: string): string {
  return reason.endsWith(".") ? reason.slice(0, -1) : reason;
}
