/// <reference lib="dom" />
/**
 * The plan view's script (bundled into lib/plan_view/assets/plan_html.ts by `deno task build:app`).
 *
 * It talks to the chat host with the official `App` class of `@modelcontextprotocol/ext-apps`: the
 * host hands it the arguments and the result of a task tool, and it reads the session through the
 * host with the read-only view tools (`view_session`, `view_rows` for folded parts), then draws it
 * with the dashboard's renderer (lib/render) as DOM nodes, lease times against the viewer's clock
 * (redrawn every second). A newer result redraws in place. Agent text is only ever set as text. It calls no tool that changes anything.
 */
import { App, applyDocumentTheme } from "@modelcontextprotocol/ext-apps";
import { effectOf } from "../../render/changes.ts";
import { toDom } from "../../render/dom.ts";
import type { ChildrenView, SessionView, TaskChange } from "../../render/model.ts";
import { changeSummary, noSessionPanel, sessionPanel } from "../../render/render.ts";
import { keepLeasesCurrent } from "../../render/lease_dom.ts";
import { listenTree, type RowLoader } from "../../render/tree_dom.ts";

/** Performance marks around each update (the benchmark and the tests read them). */
const MARK_RESULT = "checklist:result";
const MARK_SHOWN = "checklist:shown";

const app = new App({ name: "checklist-plan-view", version: "0.1.0" }, {}, { autoResize: true });
/** Ids the person unfolded (kept unfolded across updates). */
const opened = new Set<string>();
/** The arguments of the call being shown (the host sends them before the result). */
let args: Record<string, unknown> | undefined;
/** The session shown. */
let shown: string | undefined;
/** Bumped by every result: an older read that finishes late is dropped. */
let generation = 0;

function plan(): HTMLElement {
  return document.getElementById("plan")!;
}

function say(message: string): void {
  plan().replaceChildren(toDom(document, noSessionPanel(message)));
}

/** Calls a view tool through the host; its structured reply, or an Error with the tool's message. */
async function read<T>(name: string, params: Record<string, unknown>): Promise<T> {
  const result = await app.callServerTool({ name, arguments: params });
  if (result.isError) {
    const text = (result.content as { type: string; text?: string }[] | undefined)?.map((c) => c.text ?? "")
      .join(" ");
    throw new Error(text || `${name} failed`);
  }
  return result.structuredContent as T;
}

const loadRows: RowLoader = async ({ parentId, offset, count }) => {
  if (shown === undefined) return [];
  const params = { sessionId: shown, offset, count, ...(parentId === undefined ? {} : { parentId }) };
  return (await read<ChildrenView>("view_rows", params)).rows;
};

async function show(
  result: Record<string, unknown> | undefined,
  meta: Record<string, unknown> | undefined,
): Promise<void> {
  const mine = ++generation;
  const tool = app.getHostContext()?.toolInfo?.tool.name;
  const effect = effectOf({ tool, arguments: args, result, meta });
  if (effect.sessionId === undefined) return say("This call names no session.");
  if (effect.sessionId !== shown) opened.clear();
  const changes = Object.entries(effect.changes).map(([id, change]) => ({ id, change }));
  try {
    const view = await read<SessionView>("view_session", {
      sessionId: effect.sessionId,
      open: [...opened],
      changes,
      ...(effect.focus === undefined ? {} : { focus: effect.focus }),
    });
    if (mine !== generation) return;
    shown = effect.sessionId;
    const marks: Record<string, TaskChange> = effect.changes;
    const panel = toDom(document, sessionPanel(view));
    const summary = changeSummary(marks);
    if (summary) panel.insertBefore(toDom(document, summary), panel.childNodes[2] ?? null);
    plan().replaceChildren(panel);
    document.body.dataset.seq = String(Number(document.body.dataset.seq ?? "0") + 1);
    performance.mark(MARK_SHOWN);
  } catch (error) {
    if (mine === generation) say(`Cannot show session "${effect.sessionId}": ${(error as Error).message}`);
  }
}

function theme(context: { theme?: "light" | "dark" } | undefined): void {
  if (context?.theme) applyDocumentTheme(context.theme);
}

app.ontoolinput = (params) => {
  args = params.arguments;
};
app.ontoolresult = (params) => {
  performance.mark(MARK_RESULT);
  void show(params.structuredContent as Record<string, unknown> | undefined, params._meta);
};
app.onhostcontextchanged = (context) => theme(context);
listenTree(document, loadRows, opened);
keepLeasesCurrent(document);

await app.connect();
theme(app.getHostContext());
