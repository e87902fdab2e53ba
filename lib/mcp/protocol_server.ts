/**
 * One MCP server connection: the JSON-RPC exchange over a transport (requests answered in the
 * order their handlers finish, cancellation, notifications tied to their request), `initialize`
 * and the capabilities, and the resources, resource templates, prompts and completions this server
 * registers. Tools, the resource listing and `logging/setLevel` are plain request handlers
 * (server.ts, resources.ts, log_bridge.ts). The server only answers: it never sends a request.
 *
 * Why not the SDK's `Server` or `McpServer`, or its base `Protocol`: `Server` loads Ajv and
 * ajv-formats (about 80 CommonJS files that Deno resolves one by one) and `Protocol` loads the SDK's
 * `types.js` (several hundred zod schemas), zod 3 and zod-to-json-schema, whether or not they are
 * used: together two thirds of a start over stdio. Everything here answers as those classes did
 * (same results, error codes and messages); tests/mcp/protocol_server_test.ts holds the edges, and
 * the rest of the suite talks to it through the SDK's own client.
 */
import type { z } from "zod";
import {
  CancelledNotificationSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./request_schemas.ts";
import { INTERNAL_ERROR, INVALID_PARAMS, mcpError, METHOD_NOT_FOUND } from "./rpc_errors.ts";
import { invalidParams } from "./jsonrpc.ts";
import {
  type ClientCapabilities,
  type GetPromptResult,
  type Implementation,
  type JSONRPCMessage,
  type ReadResourceResult,
  type Resource,
  type ServerCapabilities,
  type ServerNotification,
  type Transport,
  UriTemplate,
  type Variables,
} from "./sdk.ts";

/** A request as its handler gets it: the method and its checked params. */
interface Incoming {
  method: string;
  params?: unknown;
}

/** What a request handler gets besides the request. */
export interface RequestExtra {
  /** Aborted when the client cancels the request or the connection closes. */
  signal: AbortSignal;
  requestId: string | number;
  /** The transport's session (HTTP), if any. */
  sessionId?: string | undefined;
  /** Sends a notification tied to this request (on HTTP: on this request's own stream). */
  sendNotification(notification: ServerNotification): Promise<void>;
}

type Handler = (request: Incoming, extra: RequestExtra) => unknown;

/** A resource's listing fields besides its URI and name. */
export type ResourceMetadata = Omit<Resource, "uri" | "name">;

/** Reads a fixed resource. */
export type ReadResource = (
  uri: URL,
  extra: RequestExtra,
) => ReadResourceResult | Promise<ReadResourceResult>;

/** Reads a resource that a template matched, with the template's variables. */
export type ReadTemplateResource = (
  uri: URL,
  variables: Variables,
  extra: RequestExtra,
) => ReadResourceResult | Promise<ReadResourceResult>;

/** Suggests values for one argument or template variable, given what the client typed so far. */
export type Complete = (value: string) => string[] | Promise<string[]>;

/** A resource template: its URI template, its listing fields, how to read and how to complete. */
export interface TemplateConfig {
  uriTemplate: string;
  metadata: ResourceMetadata;
  read: ReadTemplateResource;
  /** Completion of each variable, by name. */
  complete?: Record<string, Complete>;
}

/** A prompt argument: its schema (its description and optionality are listed) and its completion. */
export interface PromptArgument {
  schema: z.ZodType;
  complete?: Complete;
}

/** A prompt: its listing fields, its arguments, and the message it builds from checked arguments. */
export interface PromptConfig<A extends Record<string, PromptArgument>> {
  title?: string;
  description?: string;
  arguments: A;
  get: (
    args: { [K in keyof A]: z.output<A[K]["schema"]> },
    extra: RequestExtra,
  ) => GetPromptResult | Promise<GetPromptResult>;
}

/** Options of {@link ProtocolServer}. */
export interface ProtocolServerOptions {
  capabilities: ServerCapabilities;
  /** Sent at `initialize`. */
  instructions?: string;
}

/** The schema of a request or notification: an object whose `method` is one literal. */
type MethodSchema = z.ZodObject<{ method: z.ZodLiteral<string>; params: z.ZodType }>;

/** Which capability a request of each family needs (tasks and sampling are never declared). */
const FAMILY_CAPABILITY: Record<string, keyof ServerCapabilities> = {
  completion: "completions",
  logging: "logging",
  prompts: "prompts",
  resources: "resources",
  tools: "tools",
};

const EMPTY_COMPLETION = { completion: { values: [], hasMore: false } };

/** An MCP server for one connection (or one stateless request). */
export class ProtocolServer {
  readonly #info: Implementation;
  readonly #instructions: string | undefined;
  #capabilities: ServerCapabilities;
  #clientCapabilities: ClientCapabilities | undefined;
  #transport: Transport | undefined;
  readonly #handlers = new Map<string, Handler>();
  readonly #inFlight = new Map<string | number, AbortController>();
  readonly #resources = new Map<string, { name: string; read: ReadResource }>();
  readonly #templates = new Map<string, TemplateConfig & { template: UriTemplate }>();
  // deno-lint-ignore no-explicit-any
  readonly #prompts = new Map<string, PromptConfig<any>>();

  /** Called when the client says it is initialized. */
  oninitialized?: () => void;
  /** Called once the transport has closed. */
  onclose?: () => void;
  /** Called with errors of the exchange that no reply can carry (a reply that could not be sent). */
  onerror?: (error: Error) => void;

  constructor(info: Implementation, options: ProtocolServerOptions) {
    this.#info = info;
    this.#capabilities = options.capabilities;
    this.#instructions = options.instructions;
    this.setRequestHandler(InitializeRequestSchema, ({ params }) => {
      this.#clientCapabilities = params.capabilities as ClientCapabilities;
      return {
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion)
          ? params.protocolVersion
          : LATEST_PROTOCOL_VERSION,
        capabilities: this.#capabilities,
        serverInfo: this.#info,
        ...(this.#instructions ? { instructions: this.#instructions } : {}),
      };
    });
    this.setRequestHandler(PingRequestSchema, () => ({}));
  }

  /** The transport while connected. */
  get transport(): Transport | undefined {
    return this.#transport;
  }

  /** What the client announced at `initialize` (undefined before). */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.#clientCapabilities;
  }

  /** Adds capabilities; only before connecting, as the client reads them at `initialize`. */
  registerCapabilities(capabilities: ServerCapabilities): void {
    if (this.#transport) throw new Error("Cannot register capabilities after connecting to a transport");
    this.#capabilities = { ...this.#capabilities, ...capabilities };
  }

  /**
   * Answers requests of `schema`'s method with `handler`, given the request as the schema parsed
   * it. Params the schema refuses are answered with {@link INVALID_PARAMS} naming the first field.
   */
  setRequestHandler<S extends MethodSchema>(
    schema: S,
    handler: (request: z.output<S>, extra: RequestExtra) => unknown,
  ): void {
    const method = schema.shape.method.value;
    const capability = FAMILY_CAPABILITY[method.split("/")[0]!];
    if (capability && !this.#capabilities[capability]) {
      throw new Error(`Server does not declare the ${capability} capability (required for ${method})`);
    }
    this.#handlers.set(method, (request, extra) => {
      const parsed = schema.safeParse(request);
      if (!parsed.success) throw invalidParams(parsed.error.issues[0]!);
      return handler(parsed.data, extra);
    });
  }

  /** Takes over `transport` (its callbacks keep being called first) and starts it. */
  async connect(transport: Transport): Promise<void> {
    if (this.#transport) throw new Error("Already connected to a transport: use one server per connection");
    this.#transport = transport;
    const { onclose, onerror, onmessage } = transport;
    transport.onclose = () => {
      onclose?.();
      this.#closed();
    };
    transport.onerror = (error) => {
      onerror?.(error);
      this.onerror?.(error);
    };
    transport.onmessage = (message, extra) => {
      onmessage?.(message, extra);
      this.#receive(message);
    };
    await transport.start();
  }

  /** Closes the transport; handlers still running are aborted and their answers dropped. */
  async close(): Promise<void> {
    await this.#transport?.close();
  }

  /** Sends a notification, tied to a request when `relatedRequestId` is given. */
  async notification(
    notification: ServerNotification,
    options: { relatedRequestId?: string | number } = {},
  ): Promise<void> {
    const transport = this.#transport;
    if (!transport) throw new Error("Not connected");
    if (notification.method === "notifications/message" && !this.#capabilities.logging) {
      throw new Error("Server does not declare the logging capability (required for notifications/message)");
    }
    await transport.send({ ...notification, jsonrpc: "2.0" } as JSONRPCMessage, options);
  }

  /**
   * Registers a resource at a fixed URI, read by `resources/read`. The listing is the caller's
   * (`resources/list` is paged in resources.ts).
   */
  registerResource(name: string, uri: string, read: ReadResource): void {
    this.#readResources();
    this.#resources.set(uri, { name, read });
  }

  /** Registers a resource template: listed by `resources/templates/list`, read and completed. */
  registerTemplate(name: string, config: TemplateConfig): void {
    this.#readResources();
    if (config.complete) this.#complete();
    this.#templates.set(name, { ...config, template: new UriTemplate(config.uriTemplate) });
  }

  /** Registers a prompt: listed, answered with checked arguments, its arguments completed. */
  registerPrompt<A extends Record<string, PromptArgument>>(name: string, config: PromptConfig<A>): void {
    if (this.#prompts.size === 0) this.#answerPrompts();
    if (Object.values(config.arguments).some((a) => a.complete)) this.#complete();
    this.#prompts.set(name, config);
  }

  #receive(message: JSONRPCMessage): void {
    const m = message as { id?: string | number; method?: string; params?: unknown };
    if (typeof m.method !== "string") {
      // A response: this server sends no request, so nothing waits for one.
      this.onerror?.(new Error(`Received a response to no request: ${JSON.stringify(message)}`));
    } else if (m.id === undefined) {
      this.#notified({ method: m.method, params: m.params });
    } else {
      this.#answer(m.id, { method: m.method, params: m.params });
    }
  }

  #notified(notification: Incoming): void {
    if (notification.method === "notifications/initialized") {
      if (InitializedNotificationSchema.safeParse(notification).success) this.oninitialized?.();
    } else if (notification.method === "notifications/cancelled") {
      const parsed = CancelledNotificationSchema.safeParse(notification);
      const { requestId, reason } = parsed.success ? parsed.data.params : {};
      if (requestId !== undefined) this.#inFlight.get(requestId)?.abort(reason);
    }
    // Any other notification asks nothing of this server.
  }

  #answer(id: string | number, request: Incoming): void {
    const transport = this.#transport;
    const handler = this.#handlers.get(request.method);
    const failed = (error: unknown) => this.onerror?.(new Error(`Failed to send a reply: ${error}`));
    if (!handler) {
      const reply = { jsonrpc: "2.0", id, error: { code: METHOD_NOT_FOUND, message: "Method not found" } };
      transport?.send(reply as JSONRPCMessage).catch(failed);
      return;
    }
    const controller = new AbortController();
    this.#inFlight.set(id, controller);
    const extra: RequestExtra = {
      signal: controller.signal,
      requestId: id,
      sessionId: transport?.sessionId,
      sendNotification: async (notification) => {
        if (!controller.signal.aborted) await this.notification(notification, { relatedRequestId: id });
      },
    };
    Promise.resolve()
      .then(() => handler(request, extra))
      .then(
        async (result) => {
          if (!controller.signal.aborted) {
            await transport?.send({ result, jsonrpc: "2.0", id } as JSONRPCMessage);
          }
        },
        async (error) => {
          if (controller.signal.aborted) return;
          const { code, message, data } = (error ?? {}) as {
            code?: unknown;
            message?: unknown;
            data?: unknown;
          };
          const reply = {
            jsonrpc: "2.0",
            id,
            error: {
              code: Number.isSafeInteger(code) ? code : INTERNAL_ERROR,
              message: typeof message === "string" ? message : "Internal error",
              ...(data !== undefined ? { data } : {}),
            },
          };
          await transport?.send(reply as JSONRPCMessage);
        },
      )
      .catch(failed)
      .finally(() => {
        if (this.#inFlight.get(id) === controller) this.#inFlight.delete(id);
      });
  }

  #closed(): void {
    for (const controller of this.#inFlight.values()) controller.abort();
    this.#inFlight.clear();
    this.#transport = undefined;
    this.onclose?.();
  }

  #readResources(): void {
    if (this.#resources.size > 0 || this.#templates.size > 0) return;
    this.registerCapabilities({ resources: { listChanged: true } });
    this.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [...this.#templates].map(([name, t]) => ({
        name,
        uriTemplate: t.template.toString(),
        ...t.metadata,
      })),
    }));
    this.setRequestHandler(ReadResourceRequestSchema, ({ params }, extra) => {
      let uri: URL;
      try {
        uri = new URL(params.uri);
      } catch {
        throw mcpError(INVALID_PARAMS, `Invalid resource URI "${params.uri}": not a URI`);
      }
      const fixed = this.#resources.get(uri.toString());
      if (fixed) return fixed.read(uri, extra);
      for (const t of this.#templates.values()) {
        const variables = t.template.match(uri.toString());
        if (variables) return t.read(uri, variables, extra);
      }
      throw mcpError(INVALID_PARAMS, `Resource ${uri} not found`);
    });
  }

  #answerPrompts(): void {
    this.registerCapabilities({ prompts: { listChanged: true } });
    this.setRequestHandler(ListPromptsRequestSchema, () => ({
      prompts: [...this.#prompts].map(([name, prompt]) => ({
        name,
        title: prompt.title,
        description: prompt.description,
        arguments: Object.entries(prompt.arguments as Record<string, PromptArgument>).map(([arg, a]) => ({
          name: arg,
          description: a.schema.description,
          required: !a.schema.safeParse(undefined).success,
        })),
      })),
    }));
    this.setRequestHandler(GetPromptRequestSchema, async ({ params }, extra) => {
      const prompt = this.#prompts.get(params.name);
      if (!prompt) throw mcpError(INVALID_PARAMS, `Prompt ${params.name} not found`);
      const given: Record<string, unknown> = params.arguments ?? {};
      const args: Record<string, unknown> = {};
      const problems: string[] = [];
      for (const [name, a] of Object.entries(prompt.arguments as Record<string, PromptArgument>)) {
        const parsed = await a.schema.safeParseAsync(given[name]);
        if (parsed.success) {
          if (parsed.data !== undefined) args[name] = parsed.data;
        } else {
          for (const issue of parsed.error.issues) {
            problems.push(`${issue.message} at ${[name, ...issue.path.map(String)].join(".")}`);
          }
        }
      }
      if (problems.length > 0) {
        throw mcpError(INVALID_PARAMS, `Invalid arguments for prompt ${params.name}: ${problems.join("\n")}`);
      }
      return await prompt.get(args, extra);
    });
  }

  #complete(): void {
    if (this.#capabilities.completions) return;
    this.registerCapabilities({ completions: {} });
    this.setRequestHandler(CompleteRequestSchema, async ({ params }) => {
      const { ref, argument } = params;
      let complete: Complete | undefined;
      if (ref.type === "ref/prompt") {
        const prompt = this.#prompts.get(ref.name);
        if (!prompt) throw mcpError(INVALID_PARAMS, `Prompt ${ref.name} not found`);
        complete = (prompt.arguments as Record<string, PromptArgument>)[argument.name]?.complete;
      } else {
        const template = [...this.#templates.values()].find((t) => t.template.toString() === ref.uri);
        if (!template) {
          // Completing a fixed resource's URI is not an error in the specification.
          if (this.#resources.has(ref.uri)) return EMPTY_COMPLETION;
          throw mcpError(INVALID_PARAMS, `Resource template ${ref.uri} not found`);
        }
        complete = template.complete?.[argument.name];
      }
      if (!complete) return EMPTY_COMPLETION;
      const values = await complete(argument.value);
      return {
        completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 },
      };
    });
  }
}
