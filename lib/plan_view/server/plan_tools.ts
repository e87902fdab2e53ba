/**
 * The plan view's own tools (plan_resource.ts): read-only, listed with `_meta.ui.visibility: ["app"]` to
 * clients that show MCP Apps, never to a model. They answer with the shared view model (lib/render),
 * each reply within 64 KiB however big the session (lib/render/budget.ts).
 */
import { z } from "zod";
import { fail } from "../../domain/errors.ts";
import { LIMITS } from "../../domain/limits.ts";
import { SessionIdSchema, TaskIdSchema } from "../../domain/schemas.ts";
import { childRowsWithin, sessionViewWithin } from "../../render/budget.ts";
import { MAX_OPEN } from "../../render/fold.ts";
import { ChildrenViewSchema, SessionViewSchema, type TaskChange, TaskRowSchema } from "../../render/model.ts";
import { progressLabel } from "../../render/text.ts";
import { defineTool, type ToolDef } from "../../mcp/tool.ts";
import { DEFAULT_SESSION } from "../../domain/names.ts";

const sessionId = SessionIdSchema.default(DEFAULT_SESSION);
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;

const viewSessionTool = defineTool({
  name: "view_session",
  group: "view",
  title: "Plan view: session",
  description:
    "For the plan view only: a session folded around the task in progress, with what a call changed marked.",
  input: z.object({
    sessionId,
    open: z.array(TaskIdSchema).max(MAX_OPEN).optional().describe("Tasks to show unfolded"),
    changes: z.array(z.object({ id: TaskIdSchema, change: TaskRowSchema.shape.change.unwrap() }))
      .max(LIMITS.tasksPerCall).optional().describe("What the call shown did, by task"),
    focus: TaskIdSchema.optional().describe("The leaf in progress to centre on (the one the call started)"),
  }),
  output: SessionViewSchema,
  annotations: READ_ONLY,
  async run({ sessionId, open, changes, focus }, { space }) {
    const marks = new Map<string, TaskChange>((changes ?? []).map((c) => [c.id, c.change]));
    const view = await space.readTree(
      sessionId,
      (tree) =>
        tree &&
        sessionViewWithin(space.namespace, sessionId, tree, { open: open ?? [], changes: marks, focus }),
    );
    if (!view) fail("NOT_FOUND", `No session "${sessionId}".`);
    const doing = view.focus ? `; in progress: ${view.focus.name}` : "";
    return {
      text: `Session "${sessionId}": ${progressLabel(view.done, view.total)}${doing}.`,
      structured: view,
    };
  },
});

const viewRowsTool = defineTool({
  name: "view_rows",
  group: "view",
  title: "Plan view: rows",
  description:
    "For the plan view only: the rows of a folded part (a range of a task's subtasks, or of the roots).",
  input: z.object({
    sessionId,
    parentId: TaskIdSchema.optional().describe("Whose subtasks; omit for the roots"),
    offset: z.number().int().min(0).max(LIMITS.childrenPerTask).describe("First subtask shown"),
    count: z.number().int().min(1).max(LIMITS.childrenPerTask).describe("Subtasks wanted"),
  }),
  output: ChildrenViewSchema,
  annotations: READ_ONLY,
  async run({ sessionId, parentId, offset, count }, { space }) {
    const rows = await space.readTree(sessionId, (tree) => {
      if (!tree) fail("NOT_FOUND", `No session "${sessionId}".`);
      return childRowsWithin(tree, { parentId, offset, count }) ??
        fail("NOT_FOUND", `Session "${sessionId}" has no task "${parentId}".`);
    });
    return { text: `${rows.length} rows.`, structured: { rows } };
  },
});

/** The view's tools. */
export const VIEW_TOOLS: ToolDef[] = [viewSessionTool, viewRowsTool] as unknown as ToolDef[];
