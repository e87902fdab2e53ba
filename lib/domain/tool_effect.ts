/**
 * What a changing tool call did, as it says in its result's `_meta` (under {@link EFFECT_META_KEY}):
 * which tool, the session, and the tasks it started, completed, added, removed or changed. The tool
 * wrapper (lib/mcp/tool.ts) sets it on every successful call of a changing tool of the groups
 * `tasks`, `checklist` and `history`; the plan view reads it (lib/render/changes.ts) instead of
 * guessing from the shape of a reply. No imports: the view's browser bundle carries it.
 */

/** The `_meta` key of a result's {@link ToolEffect} (a prefixed key, as MCP asks for `_meta`). */
export const EFFECT_META_KEY = "checklist-mcp/effect";

/** The task ids a call touched, by what it did to them; each list in the order the call met them. */
export interface TaskEffects {
  /** Started (a cascade lists every ancestor it put in progress, then the leaf). */
  started?: string[];
  completed?: string[];
  /** Created, with every task of a created subtree. */
  added?: string[];
  /** Deleted (the root of each deleted subtree). */
  removed?: string[];
  /** Fields or place changed. */
  changed?: string[];
  /** The leaf a start or claim put in progress (a view centres on it). */
  focus?: string;
}

/** What a successful changing call did: `_meta[EFFECT_META_KEY]` of its result. */
export interface ToolEffect extends TaskEffects {
  tool: string;
  sessionId: string;
}

const LISTS = ["started", "completed", "added", "removed", "changed"] as const;

/**
 * The effect a result's `_meta` holds; undefined when it holds none or one of another shape (a
 * reader is tolerant: a result from an older server simply says nothing).
 */
export function readEffect(meta: unknown): ToolEffect | undefined {
  const value = (meta as Record<string, unknown> | null | undefined)?.[EFFECT_META_KEY];
  if (typeof value !== "object" || value === null) return undefined;
  const { tool, sessionId, focus } = value as Record<string, unknown>;
  if (typeof tool !== "string" || typeof sessionId !== "string" || sessionId === "") return undefined;
  const effect: ToolEffect = { tool, sessionId };
  for (const key of LISTS) {
    const ids = (value as Record<string, unknown>)[key];
    if (Array.isArray(ids)) {
      effect[key] = ids.filter((id): id is string => typeof id === "string" && id !== "");
    }
  }
  if (typeof focus === "string" && focus !== "") effect.focus = focus;
  return effect;
}
