/**
 * One MCP server connection on the SDK's base `Protocol`: `initialize`, the capabilities, and the
 * resources, resource templates, prompts and completions this server registers. Tools, the
 * resource listing and `logging/setLevel` are plain request handlers (server.ts, resources.ts,
 * log_bridge.ts).
 *
 * Why not the SDK's `Server` and `McpServer`: `Server` imports Ajv and ajv-formats at load, about
 * 80 CommonJS files that Deno resolves one by one through `require`, whether or not a validator is
 * ever built (only elicitation uses it, and this server never elicits). That was about a third of
 * a start over stdio. Everything here answers as those classes do (same results, same error codes
 * and messages; tests/mcp/protocol_server_test.ts holds the edges, the rest of the suite the rest).
 */
import type { z } from "zod";
import {
  type ClientCapabilities,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  type GetPromptResult,
  type Implementation,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  mergeCapabilities,
  Protocol,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type RequestHandlerExtra,
  type Resource,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  SUPPORTED_PROTOCOL_VERSIONS,
  UriTemplate,
  type Variables,
} from "./sdk.ts";
import { INVALID_PARAMS } from "./rpc_errors.ts";

/** What a request handler gets besides the request: its session, signal and notification channel. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

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

const EMPTY_COMPLETION = { completion: { values: [], hasMore: false } };

/** An MCP server for one connection (or one stateless request). */
export class ProtocolServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  readonly #info: Implementation;
  readonly #instructions: string | undefined;
  // Not a `#` field: the base constructor registers `ping` before this class's fields exist, and
  // that registration reads the capabilities (undefined then).
  private serverCapabilities: ServerCapabilities | undefined;
  #clientCapabilities: ClientCapabilities | undefined;
  readonly #resources = new Map<string, { name: string; read: ReadResource }>();
  readonly #templates = new Map<string, TemplateConfig & { template: UriTemplate }>();
  // deno-lint-ignore no-explicit-any
  readonly #prompts = new Map<string, PromptConfig<any>>();

  /** Called when the client says it is initialized. */
  oninitialized?: () => void;

  constructor(info: Implementation, options: ProtocolServerOptions) {
    super();
    this.#info = info;
    this.serverCapabilities = options.capabilities;
    this.#instructions = options.instructions;
    this.setRequestHandler(InitializeRequestSchema, (request) => {
      this.#clientCapabilities = request.params.capabilities;
      const asked = request.params.protocolVersion;
      return {
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION,
        capabilities: this.serverCapabilities ?? {},
        serverInfo: this.#info,
        ...(this.#instructions ? { instructions: this.#instructions } : {}),
      };
    });
    this.setNotificationHandler(InitializedNotificationSchema, () => this.oninitialized?.());
  }

  /** What the client announced at `initialize` (undefined before). */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.#clientCapabilities;
  }

  /** Adds capabilities; only before connecting, as the client reads them at `initialize`. */
  registerCapabilities(capabilities: ServerCapabilities): void {
    if (this.transport) throw new Error("Cannot register capabilities after connecting to a transport");
    this.serverCapabilities = mergeCapabilities(this.serverCapabilities ?? {}, capabilities);
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

  protected assertCapabilityForMethod(method: ServerRequest["method"]): void {
    const client = this.#clientCapabilities;
    const needs: Record<string, unknown> = {
      "sampling/createMessage": client?.sampling,
      "elicitation/create": client?.elicitation,
      "roots/list": client?.roots,
    };
    if (method in needs && !needs[method]) throw new Error(`Client does not support ${method}`);
  }

  protected assertNotificationCapability(method: ServerNotification["method"]): void {
    const capabilities = this.serverCapabilities;
    const needs: Record<string, unknown> = {
      "notifications/message": capabilities?.logging,
      "notifications/resources/updated": capabilities?.resources,
      "notifications/resources/list_changed": capabilities?.resources,
      "notifications/tools/list_changed": capabilities?.tools,
      "notifications/prompts/list_changed": capabilities?.prompts,
    };
    if (method in needs && !needs[method]) throw new Error(`Server does not support ${method}`);
  }

  protected assertRequestHandlerCapability(method: string): void {
    // The base class registers `ping` before this class has set its capabilities.
    const capabilities = this.serverCapabilities;
    if (!capabilities) return;
    const family = method.split("/")[0]!;
    const needs: Record<string, unknown> = {
      completion: capabilities.completions,
      logging: capabilities.logging,
      prompts: capabilities.prompts,
      resources: capabilities.resources,
      tools: capabilities.tools,
      tasks: capabilities.tasks,
    };
    if (family in needs && !needs[family]) throw new Error(`Server does not support ${method}`);
  }

  protected assertTaskCapability(method: string): void {
    throw new Error(`Server does not send task-augmented requests (${method})`);
  }

  protected assertTaskHandlerCapability(_method: string): void {
    // Task-augmented requests are refused by capability: none is declared.
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
    this.setRequestHandler(ReadResourceRequestSchema, (request, extra) => {
      let uri: URL;
      try {
        uri = new URL(request.params.uri);
      } catch {
        throw new McpError(INVALID_PARAMS, `Invalid resource URI "${request.params.uri}": not a URI`);
      }
      const fixed = this.#resources.get(uri.toString());
      if (fixed) return fixed.read(uri, extra);
      for (const t of this.#templates.values()) {
        const variables = t.template.match(uri.toString());
        if (variables) return t.read(uri, variables, extra);
      }
      throw new McpError(INVALID_PARAMS, `Resource ${uri} not found`);
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
    this.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
      const prompt = this.#prompts.get(request.params.name);
      if (!prompt) throw new McpError(INVALID_PARAMS, `Prompt ${request.params.name} not found`);
      const given: Record<string, unknown> = request.params.arguments ?? {};
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
        throw new McpError(
          INVALID_PARAMS,
          `Invalid arguments for prompt ${request.params.name}: ${problems.join("\n")}`,
        );
      }
      return await prompt.get(args, extra);
    });
  }

  #complete(): void {
    if (this.serverCapabilities?.completions) return;
    this.registerCapabilities({ completions: {} });
    this.setRequestHandler(CompleteRequestSchema, async (request) => {
      const { ref, argument } = request.params;
      let complete: Complete | undefined;
      if (ref.type === "ref/prompt") {
        const prompt = this.#prompts.get(ref.name);
        if (!prompt) throw new McpError(INVALID_PARAMS, `Prompt ${ref.name} not found`);
        complete = (prompt.arguments as Record<string, PromptArgument>)[argument.name]?.complete;
      } else {
        const template = [...this.#templates.values()].find((t) => t.template.toString() === ref.uri);
        if (!template) {
          // Completing a fixed resource's URI is not an error in the specification.
          if (this.#resources.has(ref.uri)) return EMPTY_COMPLETION;
          throw new McpError(INVALID_PARAMS, `Resource template ${ref.uri} not found`);
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
