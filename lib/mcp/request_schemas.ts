/**
 * The MCP requests and notifications this server answers, as zod schemas of what their `params`
 * must hold, and the protocol versions it speaks. Written here rather than taken from the SDK's
 * `types.js`: that module builds several hundred schemas at import, about a third of a start over
 * stdio, for the dozen this server reads. tests/mcp/request_schemas_test.ts keeps these accepting
 * and refusing what the SDK's schemas accept and refuse.
 */
import { z } from "zod";

/** The newest protocol version; the answer to a client asking for one this server does not speak. */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";
/** Every protocol version this server speaks (those of the SDK it is built with). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/** MCP's logging levels, least to most severe (RFC 5424). */
export const LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;

const Meta = z.looseObject({}).optional();
/** An object of capabilities: each one an object of its own settings. */
const Capabilities = z.record(z.string(), z.unknown());

/** A request's schema: its method and what its params must hold. */
function request<M extends string, P extends z.ZodType>(method: M, params: P) {
  return z.object({ method: z.literal(method), params });
}

/** Params of a request that takes none but a cursor (and `_meta`). */
const Paginated = z.object({ _meta: Meta, cursor: z.string().optional() }).optional();

/** `initialize`. */
export const InitializeRequestSchema = request(
  "initialize",
  z.object({
    _meta: Meta,
    protocolVersion: z.string(),
    capabilities: Capabilities,
    clientInfo: z.looseObject({ name: z.string(), version: z.string() }),
  }),
);
/** `ping`. */
export const PingRequestSchema = request("ping", z.object({ _meta: Meta }).optional());
/** `tools/list`. */
export const ListToolsRequestSchema = request("tools/list", Paginated);
/** `resources/list`. */
export const ListResourcesRequestSchema = request("resources/list", Paginated);
/** `resources/templates/list`. */
export const ListResourceTemplatesRequestSchema = request("resources/templates/list", Paginated);
/** `resources/read`. */
export const ReadResourceRequestSchema = request(
  "resources/read",
  z.object({ _meta: Meta, uri: z.string() }),
);
/** `prompts/list`. */
export const ListPromptsRequestSchema = request("prompts/list", Paginated);
/** `prompts/get`. */
export const GetPromptRequestSchema = request(
  "prompts/get",
  z.object({ _meta: Meta, name: z.string(), arguments: z.record(z.string(), z.string()).optional() }),
);
/** `completion/complete`: a prompt's argument or a resource template's variable. */
export const CompleteRequestSchema = request(
  "completion/complete",
  z.object({
    _meta: Meta,
    ref: z.discriminatedUnion("type", [
      z.looseObject({ type: z.literal("ref/prompt"), name: z.string() }),
      z.looseObject({ type: z.literal("ref/resource"), uri: z.string() }),
    ]),
    argument: z.object({ name: z.string(), value: z.string() }),
    context: z.object({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
  }),
);
/** `logging/setLevel`. */
export const SetLevelRequestSchema = request(
  "logging/setLevel",
  z.object({ _meta: Meta, level: z.enum(LOGGING_LEVELS) }),
);

/** `notifications/initialized`. */
export const InitializedNotificationSchema = request(
  "notifications/initialized",
  z.object({ _meta: Meta }).optional(),
);
/** `notifications/cancelled`: the client no longer wants the answer to `requestId`. */
export const CancelledNotificationSchema = request(
  "notifications/cancelled",
  z.object({
    _meta: Meta,
    requestId: z.union([z.string(), z.number().int()]).optional(),
    reason: z.string().optional(),
  }),
);

/** Whether `value` is an `initialize` request (HTTP opens a connection only with one). */
export function isInitializeRequest(value: unknown): boolean {
  return InitializeRequestSchema.safeParse(value).success;
}
