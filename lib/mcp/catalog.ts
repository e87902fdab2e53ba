/**
 * What a client can read besides the tools: resources at fixed URIs, resource templates, prompts, and
 * the completion of their arguments, answered on an SDK `Server` (`resources/templates/list`,
 * `resources/read`, `prompts/list`, `prompts/get`, `completion/complete`). The SDK carries the wire;
 * this file only says what exists and who reads it. `resources/list` is resources.ts's (it pages).
 *
 * Why not the SDK's `McpServer` registries: the server is a low-level `Server` because its tool list
 * is computed per request (access, the plan view) and its `tools/call` refuses bad arguments with a
 * coded tool result (server.ts); an `McpServer` cannot be built over such a `Server`.
 */
import type { z } from "zod";
import {
  type GetPromptResult,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type Server,
  UriTemplate,
  type Variables,
} from "./sdk.ts";

/** A resource's listing fields besides its URI and name. */
export type ResourceMetadata = Omit<Resource, "uri" | "name">;

/** Suggests values for one argument or template variable, given what the client typed so far. */
export type Complete = (value: string) => string[] | Promise<string[]>;

/** A resource template: its URI template, its listing fields, how to read and how to complete. */
export interface TemplateConfig {
  uriTemplate: string;
  metadata: ResourceMetadata;
  read: (uri: URL, variables: Variables) => ReadResourceResult | Promise<ReadResourceResult>;
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
  get: (args: { [K in keyof A]: z.output<A[K]["schema"]> }) => GetPromptResult | Promise<GetPromptResult>;
}

const EMPTY_COMPLETION = { completion: { values: [], hasMore: false } };
/** Values a completion returns at most (the specification's limit). */
const COMPLETION_VALUES = 100;

/**
 * Parsed templates by their text, for the process: a parsed template never changes, and every server
 * (one per 2026-07-28 HTTP request) has the same few.
 */
const PARSED_TEMPLATES = new Map<string, UriTemplate>();

function parsedTemplate(uriTemplate: string): UriTemplate {
  let template = PARSED_TEMPLATES.get(uriTemplate);
  if (!template) PARSED_TEMPLATES.set(uriTemplate, template = new UriTemplate(uriTemplate));
  return template;
}

/**
 * The resources, templates and prompts of one server. {@link install} answers their requests on a
 * `Server` and declares the capabilities they need: call it before the server connects.
 */
export class Catalog {
  readonly #resources = new Map<string, { name: string; read: (uri: URL) => Promise<ReadResourceResult> }>();
  readonly #templates = new Map<string, TemplateConfig & { template: UriTemplate }>();
  // deno-lint-ignore no-explicit-any
  readonly #prompts = new Map<string, PromptConfig<any>>();

  /** A resource at a fixed URI (its listing is the caller's: `resources/list` pages). */
  resource(name: string, uri: string, read: (uri: URL) => Promise<ReadResourceResult>): void {
    this.#resources.set(uri, { name, read });
  }

  /** A resource template: listed by `resources/templates/list`, read and completed. */
  template(name: string, config: TemplateConfig): void {
    this.#templates.set(name, { ...config, template: parsedTemplate(config.uriTemplate) });
  }

  /** A prompt: listed, answered with checked arguments, its arguments completed. */
  prompt<A extends Record<string, PromptArgument>>(name: string, config: PromptConfig<A>): void {
    this.#prompts.set(name, config);
  }

  /** Whether anything is readable (the `resources` capability). */
  get hasResources(): boolean {
    return this.#resources.size > 0 || this.#templates.size > 0;
  }

  /**
   * Answers the catalog's requests on `server` and declares what they need: `resources` (with
   * `listChanged` and `subscribe` as `declare` says), `prompts` (with its `promptsListChanged`), and
   * `completions` when something completes.
   */
  install(
    server: Server,
    declare: { listChanged: boolean; subscribe: boolean; promptsListChanged: boolean },
  ): void {
    const completes = [...this.#templates.values()].some((t) => t.complete) ||
      [...this.#prompts.values()].some((p) =>
        Object.values(p.arguments as Record<string, PromptArgument>).some((a) => a.complete)
      );
    if (this.hasResources) {
      server.registerCapabilities({
        resources: { listChanged: declare.listChanged, ...(declare.subscribe ? { subscribe: true } : {}) },
      });
      this.#answerResources(server);
    }
    if (completes) {
      server.registerCapabilities({ completions: {} });
      this.#answerCompletions(server);
    }
    if (this.#prompts.size > 0) {
      server.registerCapabilities({ prompts: declare.promptsListChanged ? { listChanged: true } : {} });
      this.#answerPrompts(server);
    }
  }

  #answerResources(server: Server): void {
    server.setRequestHandler("resources/templates/list", () => ({
      resourceTemplates: [...this.#templates].map(([name, t]) => ({
        name,
        uriTemplate: t.template.toString(),
        ...t.metadata,
      })),
    }));
    server.setRequestHandler("resources/read", ({ params }) => {
      let uri: URL;
      try {
        uri = new URL(params.uri);
      } catch {
        throw invalidParams(`Invalid resource URI "${params.uri}": not a URI`);
      }
      const fixed = this.#resources.get(uri.toString());
      if (fixed) return fixed.read(uri);
      for (const t of this.#templates.values()) {
        const variables = t.template.match(uri.toString());
        if (variables) return t.read(uri, variables);
      }
      throw new ResourceNotFoundError(params.uri, `Resource ${uri} not found`);
    });
  }

  #answerPrompts(server: Server): void {
    server.setRequestHandler("prompts/list", () => ({
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
    server.setRequestHandler("prompts/get", async ({ params }) => {
      const prompt = this.#prompts.get(params.name);
      if (!prompt) throw invalidParams(`Prompt ${params.name} not found`);
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
        throw invalidParams(`Invalid arguments for prompt ${params.name}: ${problems.join("\n")}`);
      }
      return await prompt.get(args);
    });
  }

  #answerCompletions(server: Server): void {
    server.setRequestHandler("completion/complete", async ({ params }) => {
      const { ref, argument } = params;
      let complete: Complete | undefined;
      if (ref.type === "ref/prompt") {
        const prompt = this.#prompts.get(ref.name);
        if (!prompt) throw invalidParams(`Prompt ${ref.name} not found`);
        complete = (prompt.arguments as Record<string, PromptArgument>)[argument.name]?.complete;
      } else {
        const template = [...this.#templates.values()].find((t) => t.template.toString() === ref.uri);
        if (!template) {
          // Completing a fixed resource's URI is not an error in the specification.
          if (this.#resources.has(ref.uri)) return EMPTY_COMPLETION;
          throw invalidParams(`Resource template ${ref.uri} not found`);
        }
        complete = template.complete?.[argument.name];
      }
      if (!complete) return EMPTY_COMPLETION;
      const values = await complete(argument.value);
      return {
        completion: {
          values: values.slice(0, COMPLETION_VALUES),
          total: values.length,
          hasMore: values.length > COMPLETION_VALUES,
        },
      };
    });
  }
}

/** An invalid-params protocol error for parameters a request refuses, with the message as written. */
export function invalidParams(message: string, data?: unknown): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message, data);
}
