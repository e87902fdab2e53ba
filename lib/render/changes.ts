/**
 * What a tool call did, as the view learns it: a changing tool says so in its result's `_meta`
 * (lib/domain/tool_effect.ts): the session, and the tasks it started, completed, added or changed.
 * Any other result (a read, a failure, a result from an older server) changes nothing, and its session
 * is read from the arguments or the reply (the view then shows the session as it is).
 */
import { DEFAULT_SESSION } from "../domain/names.ts";
import { readEffect } from "../domain/tool_effect.ts";
import type { TaskChange } from "./model.ts";

/** A tool call as the view sees it; every part may be missing. */
export interface SeenCall {
  /** The tool's name, when the host tells it. */
  tool?: string;
  arguments?: Record<string, unknown>;
  /** The reply's `structuredContent`. */
  result?: Record<string, unknown>;
  /** The reply's `_meta`: a changing tool's effect. */
  meta?: Record<string, unknown>;
}

/** What a call was about and did. */
export interface CallEffect {
  /** The session; undefined when neither the arguments nor the reply name one. */
  sessionId: string | undefined;
  /** Task id → what the call did to it, in the order found. */
  changes: Record<string, TaskChange>;
  /** The leaf the call started or claimed (the view centres on it when several are in progress). */
  focus?: string;
}

/** The checklist tools name their session; they have no default. */
const CHECKLIST = new Set(["update_tasks", "get_all_tasks", "mark_task_as_done"]);

/** How each list of an effect shows; removed tasks are gone from the tree and show nothing. */
const SHOWN: readonly [keyof Pick<Effect, "started" | "completed" | "added" | "changed">, TaskChange][] = [
  ["started", "started"],
  ["completed", "completed"],
  ["added", "added"],
  ["changed", "changed"],
];

type Effect = NonNullable<ReturnType<typeof readEffect>>;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** See the module doc. */
export function effectOf(call: SeenCall): CallEffect {
  const effect = readEffect(call.meta);
  if (!effect) {
    const args = call.arguments ?? {};
    const result = call.result ?? {};
    const named = text(args.sessionId) ?? text(result.sessionId);
    const sessionId = named ?? (call.tool && CHECKLIST.has(call.tool) ? undefined : DEFAULT_SESSION);
    return { sessionId, changes: {} };
  }
  const changes: Record<string, TaskChange> = {};
  for (const [list, change] of SHOWN) {
    for (const id of effect[list] ?? []) if (!(id in changes)) changes[id] = change;
  }
  const { sessionId, focus } = effect;
  return focus === undefined ? { sessionId, changes } : { sessionId, changes, focus };
}
