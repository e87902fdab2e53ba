/** Shared by the handoff tests: small readers of replies. */
import type { Client } from "./sdk_client.ts";
import { ok } from "./harness.ts";

/** One entry of get_recent_works_info. */
export interface RecentWork {
  workId: string;
  work_timestamp: string;
  work_description: string;
}

/** The recent works, most recently used first. */
export async function recent(client: Client): Promise<RecentWork[]> {
  return (await ok<{ works: RecentWork[] }>(client, "get_recent_works_info")).works;
}

/** The descriptions of the recent works, most recently used first. */
export async function recentDescriptions(client: Client): Promise<string[]> {
  return (await recent(client)).map((w) => w.work_description);
}

/** Saves work and returns its id. */
export async function save(
  client: Client,
  work_description: string,
  more: { work_summarize?: string; sessionId?: string } = {},
): Promise<string> {
  const { workId } = await ok<{ workId: string }>(client, "save_current_work_info", {
    work_summarize: `Summary: ${work_description}`,
    work_description,
    ...more,
  });
  return workId;
}

/** True when `s` is an ISO 8601 UTC timestamp as `Date.prototype.toISOString` writes it. */
export function isIsoTimestamp(s: unknown): boolean {
  return typeof s === "string" && !Number.isNaN(Date.parse(s)) && new Date(s).toISOString() === s;
}
