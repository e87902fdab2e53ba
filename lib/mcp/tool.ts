/**
 * How a tool is declared (zod input and output schemas, title, honest hints) and how a call is
 * answered: input checked against the same schema, domain errors turned into `isError` replies
 * with a stable code in `structuredContent.error`.
 */
import { z } from "zod";
import type { ToolGroup } from "../config.ts";
import { DomainError, type ErrorCode } from "../domain/errors.ts";
import { jsonDepth, LIMITS } from "../domain/limits.ts";
import type { Actor } from "../domain/team.ts";
import { EFFECT_META_KEY, type TaskEffects, type ToolEffect } from "../domain/tool_effect.ts";
import { fieldPath, findIllFormed, illFormedText } from "../domain/unicode.ts";
import type { GitReader } from "../git/git_recorder.ts";
import type { Logger } from "../log.ts";
import type { Space } from "../store/store.ts";
import { LISTED_SCHEMAS, type ListedSchemas } from "./listed_schemas.ts";
import type { CallToolResult, Tool, ToolAnnotations } from "./sdk.ts";

/** What a tool handler gets besides its arguments. */
export interface ToolContext {
  /** The namespace the tools work in (every read and change goes to it). */
  space: Space;
  log: Logger;
  /** Capacity of the work-info LRU (`WORK_CACHE_SIZE`). */
  workCacheSize: number;
  /** The server's default agent (`CHECKLIST_AGENT`); undefined: the anonymous agent. */
  agent?: string | undefined;
  /** The clock leases are judged by, in milliseconds. */
  now: () => number;
  /** Reads where the work lives (a stdio server's work tree); absent: nothing is recorded (HTTP). */
  readGit?: GitReader | undefined;
}

/**
 * Who a call acts as: the agent it names, else the server's default; the clock is read now, so call
 * it inside the store's change (the atomic step), not before it.
 */
export function actorOf(ctx: ToolContext, agent?: string, leaseSeconds?: number): Actor {
  return { agent: agent ?? ctx.agent, now: ctx.now(), leaseSeconds };
}

/**
 * A successful answer: Markdown for the model, and the structured value matching the output schema.
 * A changing tool also says which tasks it touched (`effect`); {@link callTool} puts that, with the
 * tool and the session, in the result's `_meta` (lib/domain/tool_effect.ts).
 */
export interface ToolReply<O> {
  text: string;
  structured: O;
  effect?: TaskEffects;
}

/** A tool's full declaration. */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  /** Its group, or `view`: a tool only the plan view calls (lib/plan_view/server/plan_resource.ts). */
  group: ToolGroup | "view";
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
 * The `tools/list` entry of a tool, built once per process. Its schemas are {@link listedSchemas}, as
 * `deno task build:listing` wrote them for every tool of the server (listed_schemas.ts): converting
 * the zod schemas to JSON Schema at run time cost about 20 ms of every start, and a client waits for
 * this list before its first turn. A tool not in that module (the plan view's own) is converted here.
 */
export function toolListing(def: ToolDef): Tool {
  let tool = listed.get(def);
  if (!tool) {
    const { inputSchema, outputSchema } = LISTED_SCHEMAS[def.name] ?? listedSchemas(def);
    tool = {
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema,
      outputSchema,
      annotations: { ...def.annotations, openWorldHint: false },
    };
    listed.set(def, tool);
  }
  return tool;
}

/**
 * A tool's input and output schemas as `tools/list` shows them, converted from its zod schemas. Every
 * agent pays for this listing in context on every turn, so validation detail the server enforces
 * anyway (patterns, minimum lengths, output bounds) is left out; input maximums stay, they tell the
 * limits. A tool without arguments lists {@link NO_ARGUMENTS}.
 */
export function listedSchemas(def: ToolDef): ListedSchemas {
  return {
    inputSchema: inputListing(def.input),
    outputSchema: outputListing(jsonSchema(def.output, "output")) as Tool["outputSchema"],
  };
}

/**
 * The input schema of a tool that takes no arguments, as the MCP specification recommends: an object
 * with no properties allowed. Strict clients refuse the bare `{"type":"object","properties":{}}` (the
 * OpenAI Agents SDK's strict mode cannot convert it).
 */
export const NO_ARGUMENTS: Readonly<{ type: "object"; additionalProperties: false }> = {
  type: "object",
  additionalProperties: false,
};

const INPUT_NOISE = new Set(["pattern", "additionalProperties"]);

/** An input schema as listed (see {@link toolListing}); {@link NO_ARGUMENTS} for a tool that takes none. */
function inputListing(schema: z.ZodObject): Tool["inputSchema"] {
  const input = nestedOnce(compact(jsonSchema(schema, "input"), INPUT_NOISE)) as { properties?: object };
  const none = Object.keys(input.properties ?? {}).length === 0;
  return (none ? { ...NO_ARGUMENTS } : input) as Tool["inputSchema"];
}

function compact(schema: unknown, noise: ReadonlySet<string>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => compact(s, noise));
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (noise.has(key) && typeof value !== "object") continue;
    if ((key === "minLength" || key === "minimum" || key === "minItems") && value === 1) continue;
    if ((key === "minimum" || key === "maximum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) {
      continue;
    }
    out[key] = key === "properties" || key === "$defs"
      ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, compact(v, noise)]))
      : compact(value, noise);
  }
  return out;
}

const BOUNDS = new Set(["maxLength", "maxItems", "minimum", "maximum", "minItems"]);

/**
 * A nested schema (`$defs`) whose field repeats a top-level field of the same tool, limits and all
 * (createTask's subtasks), is listed with its type only: the limits are read once, at the top.
 */
function nestedOnce(schema: unknown): unknown {
  const { properties: top, $defs: defs } = schema as {
    properties?: Record<string, JsonSchema>;
    $defs?: Record<string, { properties?: Record<string, JsonSchema> }>;
  };
  if (!top || !defs) return schema;
  const bare = (s: JsonSchema): JsonSchema =>
    Object.fromEntries(
      Object.entries(s).filter(([k]) => k !== "description" && !BOUNDS.has(k)).map((
        [k, v],
      ) => [k, k === "items" && typeof v === "object" && v !== null ? bare(v as JsonSchema) : v]),
    );
  const plain = (s: JsonSchema) => JSON.stringify(Object.entries(s).filter(([k]) => k !== "description"));
  for (const def of Object.values(defs)) {
    for (const [key, field] of Object.entries(def.properties ?? {})) {
      if (top[key] && plain(top[key]) === plain(field)) def.properties![key] = bare(field);
    }
  }
  return schema;
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
 * A nested schema reduced to what the listing can afford: its type (a union's types), an array's
 * item type, and for an object the fields it always has (their types and the optional fields are in
 * docs/tools.md).
 */
function typed(schema: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema {
  const s = typeof schema.$ref === "string" ? defs[schema.$ref.split("/").pop()!] ?? {} : schema;
  const out: JsonSchema = {};
  const type = s.type ?? unionType((s.anyOf ?? s.oneOf) as JsonSchema[] | undefined, defs);
  if (type) out.type = type;
  if (s.items) out.items = typed(s.items as JsonSchema, defs);
  if (Array.isArray(s.required) && s.required.length > 0) out.required = s.required;
  return out;
}

/** The type of a union (a nullable object, a union of objects): the one type, or the list of them. */
function unionType(options: JsonSchema[] | undefined, defs: Record<string, JsonSchema>): unknown {
  if (!options) return undefined;
  const types = [...new Set(options.flatMap((o) => [typed(o, defs).type ?? []].flat()))];
  return types.length === 1 ? types[0] : types.length > 1 ? types : undefined;
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

/**
 * Validates the arguments, runs the tool, and turns every refusal into a coded `isError` reply.
 * Arguments are measured before zod sees them: a deeply nested value is refused without recursing
 * into it (a `tasks` tree 1,000 levels deep would overflow the stack of a recursive parser), and a
 * string or key holding a lone surrogate, anywhere, is `INVALID_INPUT` naming its field (unicode.ts).
 */
export async function callTool(def: ToolDef, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const refusal = refuseArguments(def.name, args ?? {});
  if (refusal) return refusal;
  const parsed = def.input.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const issue = issues.find((i) => i.code === "too_big") ?? issues[0]!;
    const code: ErrorCode = issue.code === "too_big" ? "LIMIT_EXCEEDED" : "INVALID_INPUT";
    return errorResult(
      code,
      `Invalid arguments for ${def.name}: ${fieldName(issue.path)} ${
        issueText(issue)
      }. See the tool's input schema.`,
    );
  }
  try {
    const reply = await def.run(parsed.data, ctx);
    const result: CallToolResult = {
      content: [{ type: "text", text: reply.text }],
      structuredContent: reply.structured as Record<string, unknown>,
    };
    const effect = effectOf(def, parsed.data, reply.effect);
    if (effect) result._meta = { [EFFECT_META_KEY]: effect };
    return result;
  } catch (error) {
    if (error instanceof DomainError) return errorResult(error.code, error.message);
    // The exception's text goes to the log only: it may name files, code or internals.
    ctx.log.error("tool failed", { tool: def.name, error });
    return {
      isError: true,
      content: [{
        type: "text",
        text: `Internal error in ${def.name}. Nothing was changed; retry or check the server log.`,
      }],
    };
  }
}

/** The groups whose changing tools say what they changed. */
const EFFECT_GROUPS: ReadonlySet<ToolDef["group"]> = new Set(["tasks", "checklist", "history"]);

/**
 * What a successful call of a changing tool of the task tree did: every such call says it (an empty
 * effect names only the tool and the session), read-only tools and other groups say nothing.
 */
function effectOf(def: ToolDef, args: unknown, tasks: TaskEffects | undefined): ToolEffect | undefined {
  if (def.annotations.readOnlyHint || !EFFECT_GROUPS.has(def.group)) return undefined;
  const { sessionId } = args as { sessionId: string };
  return { tool: def.name, sessionId, ...tasks };
}

/**
 * Arguments that are not an object, that nest deeper than {@link LIMITS}.jsonDepth, or that hold a
 * string that is not well-formed Unicode, refused unparsed.
 */
function refuseArguments(tool: string, args: unknown): CallToolResult | undefined {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    const kind = args === null ? "null" : Array.isArray(args) ? "an array" : `a ${typeof args}`;
    return errorResult(
      "INVALID_INPUT",
      `Invalid arguments for ${tool}: arguments must be a JSON object of named parameters, not ${kind}.`,
    );
  }
  for (const [key, value] of Object.entries(args)) {
    // A string or number nests 0 levels: only objects and arrays are measured.
    if (typeof value === "object" && value !== null && jsonDepth(value) > LIMITS.jsonDepth) {
      return errorResult(
        "LIMIT_EXCEEDED",
        `Invalid arguments for ${tool}: ${
          fieldName([key])
        } nests deeper than ${LIMITS.jsonDepth} levels (tasks nest at most ${LIMITS.depth}). Flatten it.`,
      );
    }
  }
  const illFormed = findIllFormed(args);
  if (illFormed) {
    return errorResult(
      "INVALID_INPUT",
      `Invalid arguments for ${tool}: ${fieldName(illFormed.path)} ${illFormedText(illFormed)}.`,
    );
  }
  return undefined;
}

/** A field path as a reader writes it: `tasks[0].name`; the whole arguments when empty. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "arguments" : `\`${fieldPath(path)}\``;
}

/** One issue in a few words, on one line. */
function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "too_small" && issue.origin === "string" && Number(issue.minimum) === 1) {
    return "must not be empty or blank";
  }
  if (issue.code === "invalid_type") {
    return /received undefined/.test(issue.message) ? "is required" : `must be ${article(issue.expected)}`;
  }
  return `is invalid (${issue.message.replace(/\s+/g, " ").replace(/^Invalid input: /, "")})`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
