/**
 * Tool group `progress` (docs/requirements.md P1–P10): `mem_progress` reads or replaces a project's progress document
 * (`domain/progress_doc.ts` decides; this file translates).
 */
import { z } from "zod";
import { LIMITS } from "../domain/limits.ts";
import {
  missingProgressFields,
  parseProgressContent,
  ProgressContentSchema,
  type ProgressDoc,
  ProjectSchema,
  upsertProgress,
} from "../domain/progress_doc.ts";
import { SessionIdSchema } from "../domain/schemas.ts";
import { defineTool, type ToolDef } from "./tool.ts";

/** A stored document as Markdown: its header line and the JSON (compact: it costs context). */
export function describeProgress(doc: ProgressDoc): string {
  const by = doc.session_id === undefined ? "" : ` by session "${doc.session_id}"`;
  return [
    `Progress of "${doc.project}" (revision ${doc.revision}, updated ${doc.updated_at}${by}):`,
    "```json",
    JSON.stringify(doc.content),
    "```",
  ].join("\n");
}

/** The reply when a project has no document yet. */
export function noProgressText(project: string): string {
  return `No progress found for project "${project}". Start one with mem_progress and content {"goal", "completed", "next_steps", "blockers"}.`;
}

const progressTool = defineTool({
  name: "mem_progress",
  group: "progress",
  title: "Progress document",
  description:
    "Read (no content) or replace (content) the project's progress document, a JSON object like {goal, completed: [], next_steps: [], blockers: []}. A write adds 1 to revision.",
  input: z.object({
    project: ProjectSchema.describe("Project name"),
    content: z.string().max(LIMITS.progressContentLength).optional().describe(
      "JSON object text; omit to read",
    ),
    session_id: SessionIdSchema.optional().describe("Your session; recorded"),
  }),
  output: z.object({
    project: z.string(),
    found: z.boolean().describe("false: none stored"),
    revision: z.number().int().optional(),
    updated_at: z.string().optional(),
    session_id: z.string().optional(),
    content: ProgressContentSchema.optional().describe("On read"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run({ project, content, session_id }, { space, log }) {
    if (content === undefined || content.trim() === "") {
      const doc = await space.readProgress(project);
      if (!doc) return { text: noProgressText(project), structured: { project, found: false } };
      return { text: describeProgress(doc), structured: { found: true, ...doc } };
    }
    const parsed = parseProgressContent(content);
    const now = new Date().toISOString();
    const doc = await space.updateProgress(
      project,
      (current) => upsertProgress(current, { project, content: parsed, session_id, now }),
    );
    log.info("progress saved", { project, revision: doc.revision, session_id });
    const missing = missingProgressFields(parsed);
    const text = `Saved progress of "${project}": revision ${doc.revision} at ${doc.updated_at}.${
      missing.length > 0 ? ` Consider adding ${missing.join(", ")}.` : ""
    }`;
    const { content: _content, ...meta } = doc;
    return { text, structured: { found: true, ...meta } };
  },
});

/** The progress tools, in listing order. */
export const PROGRESS_TOOLS: ToolDef[] = [progressTool] as unknown as ToolDef[];
