/**
 * One progress document per project (docs/requirements.md P1–P10): a JSON object an agent reads first and replaces
 * as it works, with a revision and the time of the last change.
 *
 * The document is a JSON object (the instructions suggest `{ goal, completed, next_steps, blockers }`, docs/requirements.md P9);
 * other JSON values are refused so that every reader can rely on named fields.
 */
import { z } from "zod";
import { fail } from "./errors.ts";
import { jsonDepth, LIMITS } from "./limits.ts";
import { JsonObjectSchema } from "./own_keys.ts";
import { fieldPath, findIllFormed, illFormedText } from "./unicode.ts";
import { SessionIdSchema } from "./schemas.ts";

/** A project name as stored (and as a resource URI names it, untrimmed): what one progress document is stored under. */
export const StoredProjectSchema = z.string().min(1).max(LIMITS.projectLength);
/** A project name as an agent sends it (tool and prompt arguments): trimmed, then {@link StoredProjectSchema}'s bounds. */
export const ProjectSchema = z.string().trim().min(1, "project must not be empty").max(LIMITS.projectLength);

/** The body of a progress document: any JSON object, every key kept (`__proto__` too; own_keys.ts). */
export const ProgressContentSchema = JsonObjectSchema;
/** See {@link ProgressContentSchema}. */
export type ProgressContent = z.infer<typeof ProgressContentSchema>;

/** A stored progress document. */
export const ProgressDocSchema = z.object({
  project: StoredProjectSchema,
  content: ProgressContentSchema,
  revision: z.number().int().positive(),
  updated_at: z.string(),
  session_id: SessionIdSchema.optional(),
});
/** See {@link ProgressDocSchema}. */
export type ProgressDoc = z.infer<typeof ProgressDocSchema>;

/** The fields the instructions ask an agent to keep (docs/requirements.md P9). */
export const PROGRESS_FIELDS = ["goal", "completed", "next_steps", "blockers"] as const;

const EXAMPLE = '{"goal": "...", "completed": [], "next_steps": [], "blockers": []}';

/**
 * Parses `content` as a JSON object, or refuses: `LIMIT_EXCEEDED` above
 * {@link LIMITS.progressContentLength} characters, `INVALID_INPUT` for broken JSON, a non-object, or a
 * string or key in it that holds a lone surrogate (`\ud800` in the JSON text; unicode.ts).
 */
export function parseProgressContent(content: string): ProgressContent {
  if (content.length > LIMITS.progressContentLength) {
    fail(
      "LIMIT_EXCEEDED",
      `A progress document is at most ${LIMITS.progressContentLength} characters; this one has ${content.length}. Keep it to ${
        PROGRESS_FIELDS.join(", ")
      }.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch (error) {
    fail(
      "INVALID_INPUT",
      `content is not valid JSON (${(error as Error).message}). Send a JSON object such as ${EXAMPLE}.`,
    );
  }
  const depth = jsonDepth(value);
  if (depth > LIMITS.jsonDepth) {
    fail(
      "LIMIT_EXCEEDED",
      `content nests deeper than ${LIMITS.jsonDepth} levels; a progress document nests at most ${LIMITS.jsonDepth}. Flatten it.`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(
      "INVALID_INPUT",
      `content must be a JSON object, not ${
        value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`
      }. Send e.g. ${EXAMPLE}.`,
    );
  }
  // `"\ud800"` is well-formed JSON text whose value is not well-formed Unicode.
  const illFormed = findIllFormed(value, ["content"]);
  if (illFormed) {
    fail("INVALID_INPUT", `\`${fieldPath(illFormed.path)}\` ${illFormedText(illFormed)}.`);
  }
  return value as ProgressContent;
}

/** The next revision of a project's document: revision + 1, the new time and writer. */
export function upsertProgress(
  previous: ProgressDoc | undefined,
  input: { project: string; content: ProgressContent; session_id?: string | undefined; now: string },
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

/** Which of the {@link PROGRESS_FIELDS} a document lacks (a reply mentions them; not an error). */
export function missingProgressFields(content: ProgressContent): string[] {
  return PROGRESS_FIELDS.filter((field) => !Object.hasOwn(content, field));
}
