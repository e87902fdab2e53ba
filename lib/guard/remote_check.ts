/**
 * The commit guard over HTTP (`--url`; docs/guard.md "What it reads"): the question goes to a running
 * server through the official MCP client (SDK v2), as any agent would ask it: `checkPaths` for the
 * staged paths (1,000 a call), and, when no agent is named, `getTask` on each holder's task for its
 * `git` record (the work-tree rule). The bearer token is `AUTH_TOKEN` from the environment; the
 * namespace is in the URL (`/mcp/NAME`). Loaded only in this mode: the client is nothing a check of a
 * file or KV store, nor the server, needs.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { z } from "zod";
import { LIMITS } from "../domain/limits.ts";
import { GitRecordSchema, type PathConflict, PathConflictSchema } from "../domain/schemas.ts";
import { type GuardSelf, isOwnReservation, queryPattern } from "./guard_check.ts";
import { GuardError } from "./guard_error.ts";

/** What {@link remoteConflicts} asks, and of whom. */
export interface RemoteCheckOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8585/mcp/team-a`. */
  url: string;
  /** Sent as `Authorization: Bearer …` when set. */
  token?: string;
  session: string;
  /** The staged paths. */
  paths: readonly string[];
  /** The guard's agent, if named (checkPaths leaves it out). */
  agent?: string;
  /**
   * Without an agent: given the work trees the holders recorded, whether each is the guard's own
   * (the edge resolves real paths).
   */
  ownWorkTrees?: (worktrees: readonly string[]) => Promise<(worktree: string) => boolean>;
}

const ConflictsSchema = z.object({ conflicts: z.array(PathConflictSchema) });
const TaskGitSchema = z.object({ task: z.looseObject({ git: GitRecordSchema.optional() }) });

/**
 * The live reservations of others that the staged paths fall under, as the server at `url` sees them,
 * in the order of `paths`. Throws an `unreachable` {@link GuardError} when the endpoint cannot be
 * reached, refuses the credential, or answers with an error.
 */
export async function remoteConflicts(options: RemoteCheckOptions): Promise<PathConflict[]> {
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(options.url), { requestInit: { headers } });
  // "auto": the 2026-07-28 era where the server speaks it, else the handshake (an older server).
  const client = new Client(
    { name: "checklist-mcp-guard", version: "1" },
    { versionNegotiation: { mode: "auto" } } as ConstructorParameters<typeof Client>[1],
  );
  try {
    await client.connect(transport);
  } catch (error) {
    throw new GuardError("unreachable", `${options.url} did not answer: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const conflicts = await askCheckPaths(client, options);
    if (options.agent !== undefined || !options.ownWorkTrees || conflicts.length === 0) return conflicts;
    return await withoutOwn(client, conflicts, options.session, options.ownWorkTrees);
  } finally {
    await client.close().catch(() => {});
  }
}

/** checkPaths on every staged path (as {@link queryPattern} makes it), reported under the staged names. */
async function askCheckPaths(client: Client, options: RemoteCheckOptions): Promise<PathConflict[]> {
  const namesOf = new Map<string, string[]>();
  for (const path of new Set(options.paths)) {
    const query = queryPattern(path);
    const names = namesOf.get(query);
    if (names) names.push(path);
    else namesOf.set(query, [path]);
  }
  const queries = [...namesOf.keys()];
  const found = new Map<string, PathConflict[]>();
  for (let i = 0; i < queries.length; i += LIMITS.pathsPerCheck) {
    const args = {
      sessionId: options.session,
      paths: queries.slice(i, i + LIMITS.pathsPerCheck),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
    };
    const { conflicts } = ConflictsSchema.parse(await callTool(client, "checkPaths", args));
    for (const conflict of conflicts) {
      for (const name of namesOf.get(conflict.path) ?? []) {
        const list = found.get(name);
        const named = { ...conflict, path: name };
        if (list) list.push(named);
        else found.set(name, [named]);
      }
    }
  }
  return [...new Set(options.paths)].flatMap((path) => found.get(path) ?? []);
}

/** The conflicts whose holders are not the guard itself by the work-tree rule (getTask per holder's task). */
async function withoutOwn(
  client: Client,
  conflicts: readonly PathConflict[],
  session: string,
  ownWorkTrees: NonNullable<RemoteCheckOptions["ownWorkTrees"]>,
): Promise<PathConflict[]> {
  const records = new Map<string, z.infer<typeof GitRecordSchema> | undefined>();
  for (const id of new Set(conflicts.map((c) => c.task_id))) {
    try {
      const { task } = TaskGitSchema.parse(await callTool(client, "getTask", { sessionId: session, id }));
      records.set(id, task.git);
    } catch (error) {
      if (error instanceof GuardError && error.kind === "unreachable" && /NOT_FOUND/.test(error.message)) {
        continue; // gone since checkPaths answered: its conflict stands
      }
      throw error;
    }
  }
  const worktrees = [...new Set([...records.values()].flatMap((git) => git?.worktree ?? []))];
  const own = await ownWorkTrees(worktrees);
  const self: GuardSelf = { ownWorkTree: own };
  return conflicts.filter((c) => !isOwnReservation(c.agent, records.get(c.task_id), self));
}

/** Calls a tool; its structured content, or an `unreachable` {@link GuardError} naming the failure. */
async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  let result;
  try {
    result = await client.callTool({ name, arguments: args });
  } catch (error) {
    throw new GuardError("unreachable", `${name} failed: ${(error as Error).message}`, { cause: error });
  }
  if (result.isError) {
    const error = (result.structuredContent as { error?: { code?: string; message?: string } } | undefined)
      ?.error;
    const text = error?.message ??
      (result.content as { text?: string }[] | undefined)?.map((c) => c.text ?? "").join(" ") ?? "";
    throw new GuardError("unreachable", `${name} failed: ${error?.code ? `${error.code}: ` : ""}${text}`);
  }
  return result.structuredContent;
}
