/**
 * `checkPaths` (group `tasks`; docs/tools.md): which live claims of other agents reserve these paths.
 * Read-only; thin over `domain/reservations.ts` `pathConflicts`, the question a commit guard asks too.
 */
import { z } from "zod";
import { LIMITS } from "../domain/limits.ts";
import { DEFAULT_SESSION } from "../domain/names.ts";
import { pathConflicts } from "../domain/reservations.ts";
import { AgentSchema, type PathConflict, PathConflictSchema, SessionIdSchema } from "../domain/schemas.ts";
import { TaskTree } from "../domain/task_tree.ts";
import { defineTool } from "./tool.ts";

/** Conflicts the text lists; the structured reply has them all. */
const LINES = 20;

/** The `checkPaths` tool. */
export const checkPathsTool = defineTool({
  name: "checkPaths",
  group: "tasks",
  title: "Check paths",
  description: "Live claims of other agents that reserve these paths (check before editing).",
  input: z.object({
    sessionId: SessionIdSchema.default(DEFAULT_SESSION),
    agent: AgentSchema.optional().describe("Yours, left out"),
    paths: z.array(z.string().min(1).max(LIMITS.checkedPathLength)).min(1).max(LIMITS.pathsPerCheck)
      .describe("Paths or patterns"),
  }),
  output: z.object({ conflicts: z.array(PathConflictSchema) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run({ sessionId, agent, paths }, ctx) {
    const self = agent ?? ctx.agent;
    const conflicts = await ctx.space.readTree(
      sessionId,
      (tree) =>
        pathConflicts(tree ?? new TaskTree(), paths, {
          now: ctx.now(),
          ...(self === undefined ? {} : { exclude: (r) => r.agent === self }),
        }),
    );
    return { text: conflictsText(conflicts, paths.length), structured: { conflicts } };
  },
});

/** The reply's text: one line per conflict, the first {@link LINES}, the rest counted. */
function conflictsText(conflicts: readonly PathConflict[], asked: number): string {
  const what = asked === 1 ? "this path" : `these ${asked} paths`;
  if (conflicts.length === 0) return `No live claim of another agent reserves ${what}.`;
  const lines = conflicts.slice(0, LINES).map((c) =>
    `- ${c.path}: agent "${c.agent}" reserves ${c.pattern} (task "${c.task_name}" (${c.task_id}), until ${c.expires_at})`
  );
  if (conflicts.length > LINES) lines.push(`… and ${conflicts.length - LINES} more (see structuredContent).`);
  const count = conflicts.length === 1
    ? "1 reservation of another agent overlaps"
    : `${conflicts.length} reservations of other agents overlap`;
  return [`${count} ${what}:`, ...lines].join("\n");
}
