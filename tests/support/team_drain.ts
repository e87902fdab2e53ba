/**
 * Agents draining a plan through claimTask → completeTask, shared by the race tests and the team
 * benchmark: a parallel plan's createTask calls, a worker loop, and a journal of every reply (each
 * claim with its server-side `since`/`expires_at` and this process's clock around the call), with
 * the checks made on it afterwards (double claims, overlapping live claims, live claims reserving
 * overlapping paths). Any client will do:
 * the caller passes how to call a tool (the SDK client in tests, raw JSON-RPC in benchmarks).
 */
import { patternsOverlap } from "../../lib/domain/path_overlap.ts";
import { sleep } from "./time.ts";

/** Calls one tool and returns its result (`isError` and `structuredContent` are all that is read). */
export type ToolCaller = (
  name: string,
  args: Record<string, unknown>,
) => Promise<{ isError?: boolean; structuredContent?: Record<string, unknown> }>;

/** The session every drain works in. */
export const DRAIN_SESSION = "race";

/** How long a worker with nothing ready waits before asking again (a back-off, not a synchronization). */
const BACK_OFF_MS = 20;

/** One claimTask reply that handed out a leaf, with this process's clock around the call. */
export interface ClaimRecord {
  agent: string;
  leaf: string;
  /** The claim's `since` and `expires_at`, in milliseconds (the server's clock). */
  since: number;
  expires: number;
  renewed: boolean;
  takenOverFrom?: string;
  /** Date.now() when the call was sent and when its reply arrived. */
  sent: number;
  received: number;
}

/** One claimTask reply with nothing ready: what it waited on, with the times of the call. */
export interface WaitRecord {
  agent: string;
  sent: number;
  received: number;
  waitingOn: { id: string; agent: string; expires_at: string }[];
  blocked: number;
  /** Leaves that would be ready but for other agents' reservations. */
  reserved: number;
}

/** One completeTask success. */
export interface CompleteRecord {
  agent: string;
  leaf: string;
  sent: number;
  received: number;
}

/** A refused call (none is expected in a drain): who, which tool, on what, and the error. */
export interface ErrorRecord {
  agent: string;
  tool: string;
  leaf?: string;
  code: string;
  message: string;
}

/** Everything the agents saw, in the order the replies arrived. */
export interface Journal {
  claims: ClaimRecord[];
  waits: WaitRecord[];
  completions: CompleteRecord[];
  errors: ErrorRecord[];
}

/** The fields of a claimTask reply a drain reads. */
export interface ClaimReply {
  task: { id: string; status: string } | null;
  claim?: { agent: string; since: string; expires_at: string };
  taken_over_from?: string;
  renewed?: boolean;
  waiting_on?: { id: string; name: string; agent: string; expires_at: string }[];
  blocked?: { id: string; blocked_by: string[] }[];
  reserved?: { id: string; conflicts: { id: string; agent: string }[] }[];
}

/** An empty journal. */
export function newJournal(): Journal {
  return { claims: [], waits: [], completions: [], errors: [] };
}

/** The structured reply of a call in {@link DRAIN_SESSION}, or undefined after journaling its error. */
async function journaled<T>(
  call: ToolCaller,
  journal: Journal,
  tool: string,
  args: Record<string, unknown> & { agent: string; id?: string },
): Promise<T | undefined> {
  const result = await call(tool, { sessionId: DRAIN_SESSION, ...args });
  if (!result.isError) return result.structuredContent as T;
  const error = (result.structuredContent as { error?: { code: string; message: string } } | undefined)
    ?.error;
  journal.errors.push({
    agent: args.agent,
    tool,
    ...(args.id ? { leaf: args.id } : {}),
    code: error?.code ?? "UNKNOWN",
    message: error?.message ?? "no structured error",
  });
  return undefined;
}

/**
 * Calls claimTask for `agent` and journals the reply (a claim, a wait, or an error); returns it,
 * undefined when refused. A reply that hands out a leaf without the caller's claim is journaled as
 * an error too.
 */
export async function claim(
  call: ToolCaller,
  agent: string,
  journal: Journal,
  extra: Record<string, unknown> = {},
): Promise<ClaimReply | undefined> {
  const sent = Date.now();
  const reply = await journaled<ClaimReply>(call, journal, "claimTask", { agent, ...extra });
  const received = Date.now();
  if (!reply) return undefined;
  if (reply.task === null) {
    journal.waits.push({
      agent,
      sent,
      received,
      waitingOn: reply.waiting_on ?? [],
      blocked: reply.blocked?.length ?? 0,
      reserved: reply.reserved?.length ?? 0,
    });
    return reply;
  }
  if (reply.claim?.agent !== agent || reply.task.status !== "in_progress") {
    const message = `handed out ${reply.task.id} (${reply.task.status}) with claim ${
      JSON.stringify(reply.claim)
    }`;
    journal.errors.push({ agent, tool: "claimTask", leaf: reply.task.id, code: "BAD_CLAIM", message });
    return undefined;
  }
  journal.claims.push({
    agent,
    leaf: reply.task.id,
    since: Date.parse(reply.claim.since),
    expires: Date.parse(reply.claim.expires_at),
    renewed: reply.renewed === true,
    ...(reply.taken_over_from ? { takenOverFrom: reply.taken_over_from } : {}),
    sent,
    received,
  });
  return reply;
}

/**
 * A worker: claimTask → completeTask (resolution `by AGENT`) until claimTask finds nothing ready,
 * nothing held by others, nothing blocked and nothing reserved; with nothing ready but something
 * held, blocked or reserved, it backs off and asks again. Stops after three refusals, or at `deadline` (performance.now()),
 * journaling a `DEADLINE` error, so a broken store fails the checks instead of hanging.
 */
export async function worker(
  call: ToolCaller,
  agent: string,
  journal: Journal,
  deadline: number,
): Promise<void> {
  const refusals = () => journal.errors.filter((e) => e.agent === agent).length;
  while (refusals() < 3) {
    if (performance.now() > deadline) {
      journal.errors.push({ agent, tool: "worker", code: "DEADLINE", message: "not finished in time" });
      return;
    }
    const reply = await claim(call, agent, journal);
    if (!reply) continue;
    if (reply.task === null) {
      if (!reply.waiting_on?.length && !reply.blocked?.length && !reply.reserved?.length) return;
      await sleep(BACK_OFF_MS);
      continue;
    }
    const leaf = reply.task.id;
    const sent = Date.now();
    const args = { id: leaf, agent, resolution: `by ${agent}` };
    if (await journaled(call, journal, "completeTask", args)) {
      journal.completions.push({ agent, leaf, sent, received: Date.now() });
    }
  }
}

/** What a drain's plan holds besides its shape: blockers per part, paths per leaf. */
export interface PlanOptions {
  /** A part's `blocked_by`, by part id (`p9: ["p0"]`). */
  blockedBy?: Record<string, string[]>;
  /** The `paths` of leaf `l` of part `p` (normalised, as stored); none when absent or empty. */
  paths?: (part: number, leaf: number) => string[];
}

/**
 * The createTask calls of a parallel plan in {@link DRAIN_SESSION}: a parallel root `plan`, then one
 * call per parallel part `p0…` of `leaves` leaves `p0.l0…` (each call within the per-call limit).
 */
export function parallelPlanCalls(
  parts: number,
  leaves: number,
  options: PlanOptions = {},
): Record<string, unknown>[] {
  const { blockedBy = {}, paths } = options;
  const root = { sessionId: DRAIN_SESSION, id: "plan", name: "Parallel plan", parallel: true };
  return [
    root,
    ...Array.from({ length: parts }, (_, p) => ({
      sessionId: DRAIN_SESSION,
      parentId: "plan",
      id: `p${p}`,
      name: `Part ${p}`,
      parallel: true,
      ...(blockedBy[`p${p}`] ? { blocked_by: blockedBy[`p${p}`] } : {}),
      tasks: Array.from({ length: leaves }, (_, l) => {
        const own = paths?.(p, l) ?? [];
        return { id: `p${p}.l${l}`, name: `Leaf ${p}.${l}`, ...(own.length > 0 ? { paths: own } : {}) };
      }),
    })),
  ];
}

/** The leaf ids of {@link parallelPlanCalls}, in tree order. */
export function parallelPlanLeaves(parts: number, leaves: number): string[] {
  return Array.from({ length: parts }, (_, p) => Array.from({ length: leaves }, (_, l) => `p${p}.l${l}`))
    .flat();
}

/** The leaves claimed more than once, with how often (0 double claims: empty). */
export function doubleClaims(journal: Journal): [string, number][] {
  return [...countBy(journal.claims, (c) => c.leaf)].filter(([, n]) => n > 1);
}

/**
 * Pairs of claims on one leaf by different agents that were live at the same time. A claim is live
 * from its `since` until its `expires_at` (its latest renewal's), or until the leaf was completed;
 * a leaf completed is never claimed again, so a later claim must start at or after the earlier one's
 * expiry. Returns one line per violation.
 */
export function overlappingClaims(journal: Journal): string[] {
  const holdings = new Map<string, { agent: string; since: number; expires: number }[]>();
  for (const c of journal.claims) {
    const list = holdings.get(c.leaf) ?? [];
    const own = list.find((h) => h.agent === c.agent && c.renewed);
    if (own) own.expires = Math.max(own.expires, c.expires);
    else list.push({ agent: c.agent, since: c.since, expires: c.expires });
    holdings.set(c.leaf, list);
  }
  const problems: string[] = [];
  for (const [leaf, list] of holdings) {
    list.sort((a, b) => a.since - b.since);
    for (let i = 1; i < list.length; i++) {
      const before = list[i - 1]!;
      const after = list[i]!;
      if (after.since < before.expires) {
        problems.push(
          `${leaf}: ${after.agent} claimed it at ${
            new Date(after.since).toISOString()
          } while ${before.agent}'s ` +
            `claim was live until ${new Date(before.expires).toISOString()}`,
        );
      }
    }
  }
  return problems;
}

/**
 * Paths that make agents wait on each other: leaf `l` changes `src/m{l mod 10}/**` and
 * `docs/d{l mod 7}.md`, so two leaves collide when their numbers agree modulo 10 or modulo 7, and at
 * most 7 of any set of leaves can be held at once (the drains of the race tests and the benchmark).
 */
export function collidingPaths(_part: number, leaf: number): string[] {
  return [`src/m${leaf % 10}/**`, `docs/d${leaf % 7}.md`];
}

/**
 * Pairs of claims by different agents whose leaves' paths (`pathsOf`) overlap and that were live at
 * the same time: the later claim's `since` (server clock) before the earlier one ended. A claim ends at
 * its lease's end or when its leaf was completed; the completion is taken at the moment its call was
 * sent (the earliest it can have happened), so only overlaps that certainly happened are reported.
 * Returns one line per violation.
 */
export function overlappingReservations(journal: Journal, pathsOf: (leaf: string) => string[]): string[] {
  const completedAt = new Map(journal.completions.map((c) => [c.leaf, c.sent]));
  const holdings = new Map<string, { agent: string; leaf: string; since: number; end: number }>();
  for (const c of journal.claims) {
    const key = `${c.agent} ${c.leaf}`;
    const held = holdings.get(key);
    if (held && c.renewed) held.end = Math.max(held.end, c.expires);
    else holdings.set(key, { agent: c.agent, leaf: c.leaf, since: c.since, end: c.expires });
  }
  for (const held of holdings.values()) {
    const done = completedAt.get(held.leaf);
    if (done !== undefined && done >= held.since) held.end = Math.min(held.end, done);
  }
  const list = [...holdings.values()].sort((a, b) => a.since - b.since);
  const problems: string[] = [];
  for (const [i, early] of list.entries()) {
    for (const late of list.slice(i + 1)) {
      if (late.since >= early.end) continue;
      if (late.agent === early.agent) continue;
      const pair = pathsOf(early.leaf).flatMap((a) =>
        pathsOf(late.leaf).filter((b) => patternsOverlap(a, b)).map((b) => `${a} / ${b}`)
      );
      if (pair.length === 0) continue;
      problems.push(
        `${late.agent} claimed ${late.leaf} at ${
          new Date(late.since).toISOString()
        } while ${early.agent} held ` +
          `${early.leaf} (until ${new Date(early.end).toISOString()}): ${pair[0]}`,
      );
    }
  }
  return problems;
}

/** Counts per key. */
export function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
