/**
 * The plan view for chat clients (MCP Apps, SEP-1865): the resource `ui://checklist/plan.html`, one
 * self-contained HTML document (lib/plan_view), and the `_meta.ui` that ties tools to it.
 *
 * Registered as `@modelcontextprotocol/ext-apps/server`'s `registerAppResource` registers it (that
 * helper needs the SDK's `McpServer`; tests/plan_view/apps_extension_test.ts keeps the two equal).
 * In the 2026-07-28 era the server declares the extension and each request says whether its client
 * shows views (`clientCapabilities.extensions`); in the handshake era the client says so once, at
 * `initialize`. Clients without the extension see one more resource and a `_meta` on some tools,
 * nothing else: replies are unchanged. The view-only tools (plan_tools.ts) are listed only to clients that announce the
 * extension, so a model never sees them; any client may call them (they only read). What the MCP
 * server takes of all this is one feature (plan_feature.ts).
 */
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import type { ToolGroup } from "../../config.ts";
import type { Resource, Tool } from "../../mcp/sdk.ts";
import type { Catalog } from "../../mcp/catalog.ts";
import { type ToolDef, toolListing } from "../../mcp/tool.ts";

/** URI of the plan view. */
export const PLAN_VIEW_URI = "ui://checklist/plan.html";
/** Its MIME type: HTML for an MCP App. */
export const PLAN_VIEW_MIME: string = RESOURCE_MIME_TYPE;
/** The extension's id in client capabilities (`capabilities.extensions`). */
export const UI_EXTENSION: string = EXTENSION_ID;

/** The groups whose tools show the plan view. */
export const VIEW_GROUPS: readonly ToolGroup[] = ["tasks", "checklist", "history"];

/** The content security policy the view needs: no domain at all (everything is inline). */
const CSP = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };

/** Whether the enabled groups include one that shows the view. */
export function viewEnabled(groups: ReadonlySet<ToolGroup>): boolean {
  return VIEW_GROUPS.some((group) => groups.has(group));
}

const META = { ui: { csp: CSP, prefersBorder: true } };
const CONFIG = {
  title: "Plan view",
  description: "The session a task tool answered about, drawn in the chat (MCP Apps).",
  mimeType: PLAN_VIEW_MIME,
  _meta: META,
};

/** The view's `resources/list` entry (resources.ts lists it first). */
export function planViewListing(): Resource {
  return { uri: PLAN_VIEW_URI, name: "plan_view", ...CONFIG };
}

/** Registers the view's resource (listed by `resources/list`, read by `resources/read`). */
export function registerPlanView(catalog: Catalog): void {
  const meta = META;
  catalog.resource(
    "plan_view",
    PLAN_VIEW_URI,
    // The document (~400 KB of text) loads on its first read, not at every start.
    async (uri) => {
      const { PLAN_HTML } = await import("../assets/plan_html.ts");
      return { contents: [{ uri: uri.href, mimeType: PLAN_VIEW_MIME, text: PLAN_HTML, _meta: meta }] };
    },
  );
}

const withView = new WeakMap<ToolDef, Tool>();

/**
 * A tool's `tools/list` entry with the view's `_meta.ui`: `resourceUri` for the tools of
 * {@link VIEW_GROUPS}, `visibility: ["app"]` for the view's own tools; undefined for any other tool.
 */
export function viewListing(def: ToolDef): Tool | undefined {
  const app = def.group === "view";
  if (!app && !VIEW_GROUPS.includes(def.group as ToolGroup)) return undefined;
  let tool = withView.get(def);
  if (!tool) {
    const ui = app ? { resourceUri: PLAN_VIEW_URI, visibility: ["app"] } : { resourceUri: PLAN_VIEW_URI };
    tool = { ...toolListing(def), _meta: { ui } };
    withView.set(def, tool);
  }
  return tool;
}
