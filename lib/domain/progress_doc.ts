/**
 * One progress document per project (seed 004): a JSON document an agent reads first and upserts
 * as it works, with a revision and the time of the last change.
 */
import { z } from "zod";
import { fail } from "./errors.ts";

/** Longest project name. */
export const MAX_PROJECT = 200;
/** Largest document, in characters of JSON text (keeps one document one Deno KV value). */
export const MAX_PROGRESS_CONTENT = 32_000;

/** A stored progress document. */
export const ProgressDocSchema = z.object({
  project: z.string().min(1).max(MAX_PROJECT),
  content: z.json(),
  revision: z.number().int().positive(),
  updated_at: z.string(),
  session_id: z.string().optional(),
});
/** See {@link ProgressDocSchema}. */
export type ProgressDoc = z.infer<typeof ProgressDocSchema>;

/** Parses `content` as JSON, or refuses with `INVALID_INPUT` saying where it broke. */
export function parseProgressContent(content: string): z.infer<ReturnType<typeof z.json>> {
  if (content.length > MAX_PROGRESS_CONTENT) {
    fail(
      "LIMIT_EXCEEDED",
      `A progress document is at most ${MAX_PROGRESS_CONTENT} characters; this one has ${content.length}. Keep it to goal, completed, next_steps, blockers.`,
    );
  }
  try {
    return JSON.parse(content);
  } catch (error) {
    return fail(
      "INVALID_INPUT",
      `content is not valid JSON (${
        (error as Error).message
      }). Send a JSON object such as {"goal": "...", "completed": [], "next_steps": [], "blockers": []}.`,
    );
  }
}

/** The next revision of a project's document. */
export function upsertProgress(
  previous: ProgressDoc | undefined,
  input: { project: string; content: ProgressDoc["content"]; session_id?: string | undefined; now: string },
): ProgressDoc {
  const doc: ProgressDoc = {
    project: input.project,
    content: input.content,
    revision: (previous?.revision ?? 0) + 1,
    updated_at: input.now,
  };
  if (input.session_id !== undefined) doc.session_id = input.session_id;
  return doc;
}
