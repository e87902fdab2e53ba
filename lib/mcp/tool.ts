/**
 * How a tool is declared (zod input and output schemas, title, honest hints) and how a call is
 * answered: input checked against the same schema, domain errors turned into `isError` replies
 * with a stable code in `structuredContent.error`.
 */
import { z } from "zod";
import type { ToolGroup } from "../config.ts";
import { DomainError, type ErrorCode } from "../domain/errors.ts";
import type { Logger } from "../log.ts";
import type { Space } from "../store/store.ts";
import type { CallToolResult, Tool, ToolAnnotations } from "./sdk.ts";

/** What a tool handler gets besides its arguments. */
export interface ToolContext {
  /** The namespace the tools work in (every read and change goes to it). */
  store: Space;
  log: Logger;
  /** Capacity of the work-info LRU (`WORK_CACHE_SIZE`). */
  workCacheSize: number;
}

/** A successful answer: Markdown for the model, and the structured value matching the output schema. */
export interface ToolReply<O> {
  text: string;
  structured: O;
}

/** A tool's full declaration. */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  group: ToolGroup;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint">>;
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolReply<z.input<O>>>;
}

/** Declares a tool; the identity, for type inference. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

const listed = new WeakMap<ToolDef, Tool>();

/**
 * The `tools/list` entry of a tool, computed once per process. Every agent pays for this listing in
 * context on every turn, so validation detail the server enforces anyway (patterns, minimum lengths,
 * output bounds) is left out; input maximums stay, they tell the limits.
 */
export function toolListing(def: ToolDef): Tool {
  let tool = listed.get(def);
  if (!tool) {
    const outputSchema = outputListing(jsonSchema(def.output, "output"));
    tool = {
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema: compact(jsonSchema(def.input, "input"), INPUT_NOISE) as Tool["inputSchema"],
      outputSchema: outputSchema as Tool["outputSchema"],
      annotations: { ...def.annotations, openWorldHint: false },
    };
    listed.set(def, tool);
  }
  return tool;
}

const INPUT_NOISE = new Set(["pattern", "additionalProperties"]);

function compact(schema: unknown, noise: ReadonlySet<string>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => compact(s, noise));
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (noise.has(key) && typeof value !== "object") continue;
    if (key === "minLength" && value === 1) continue;
    if ((key === "minimum" || key === "maximum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) {
      continue;
    }
    out[key] = key === "properties" || key === "$defs"
      ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, compact(v, noise)]))
      : compact(value, noise);
  }
  return out;
}

/**
 * An output schema as listed: each field's type and description at the top, nested objects with the
 * fields they always have. A failed call's structuredContent is `{ error: { code, message } }`, and
 * SDK clients validate it against this schema too, so the top level requires either the result's
 * fields or `error`.
 */
function outputListing(schema: Record<string, unknown>): Record<string, unknown> {
  const { properties, required, $defs = {} } = schema as {
    properties: Record<string, JsonSchema>;
    required?: string[];
    $defs?: Record<string, JsonSchema>;
  };
  const top: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(properties)) {
    const prop = typed(value, $defs);
    if (typeof value.description === "string") prop.description = value.description;
    top[key] = prop;
  }
  return { type: "object", properties: top, anyOf: [{ required: required ?? [] }, { required: ["error"] }] };
}

type JsonSchema = Record<string, unknown>;

/**
 * A nested schema reduced to what the listing can afford: its type, an array's item type, and for
 * an object the fields it always has (their types and the optional fields are in the README).
 */
function typed(schema: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema {
  const s = typeof schema.$ref === "string" ? defs[schema.$ref.split("/").pop()!] ?? {} : schema;
  const out: JsonSchema = {};
  if (s.type) out.type = s.type;
  if (s.items) out.items = typed(s.items as JsonSchema, defs);
  if (Array.isArray(s.required) && s.required.length > 0) out.required = s.required;
  return out;
}

function jsonSchema(schema: z.ZodObject, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

/** An `isError` reply with a stable code. */
export function errorResult(code: ErrorCode, message: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: `Error ${code}: ${message}` }],
    structuredContent: { error: { code, message } },
  };
}

/** Validates the arguments, runs the tool, and turns every refusal into a coded `isError` reply. */
export async function callTool(def: ToolDef, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const parsed = def.input.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const code: ErrorCode = issues.some((i) => i.code === "too_big") ? "LIMIT_EXCEEDED" : "INVALID_INPUT";
    const detail = issues.slice(0, 5).map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join(
      "; ",
    );
    return errorResult(code, `Invalid arguments for ${def.name}: ${detail}. See the tool's input schema.`);
  }
  try {
    const reply = await def.run(parsed.data, ctx);
    const result: CallToolResult = {
      content: [{ type: "text", text: reply.text }],
      structuredContent: reply.structured as Record<string, unknown>,
    };
    return result;
  } catch (error) {
    if (error instanceof DomainError) return errorResult(error.code, error.message);
    ctx.log.error("tool failed", { tool: def.name, error });
    return {
      isError: true,
      content: [{
        type: "text",
        text: `Internal error in ${def.name}: ${
          (error as Error).message
        }. Nothing was changed; retry or check the server log.`,
      }],
    };
  }
}
