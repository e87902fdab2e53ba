/** What a changing task tool reads of git before its change (docs/teams.md "Where the work lives"). */
import type { GitState } from "../domain/schemas.ts";
import type { ToolContext } from "./tool.ts";

/**
 * Where the caller's work lives, read before a change that may record it, so git never runs while the
 * store holds its lock; undefined for the anonymous agent and on a server that records none (HTTP).
 * The change applies it with `recordGit` (lib/domain/git_record.ts).
 */
export async function gitOf(ctx: ToolContext, agent?: string): Promise<GitState | undefined> {
  return (agent ?? ctx.agent) === undefined || !ctx.readGit ? undefined : await ctx.readGit();
}
