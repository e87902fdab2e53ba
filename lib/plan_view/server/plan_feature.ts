/**
 * The plan view as the MCP server takes it: one feature (lib/mcp/feature.ts), on whenever a group
 * whose tools it shows is (plan_resource.ts), with its own read-only tools (plan_tools.ts), its
 * resource, the MCP Apps extension, and whether a client shows views: it announces the extension
 * with the view's MIME type (`@modelcontextprotocol/ext-apps`, imported in lib/plan_view alone).
 */
import { getUiCapability } from "@modelcontextprotocol/ext-apps/server";
import type { ServerFeature } from "../../mcp/feature.ts";
import {
  PLAN_VIEW_MIME,
  planViewListing,
  registerPlanView,
  UI_EXTENSION,
  viewEnabled,
  viewListing,
} from "./plan_resource.ts";
import { VIEW_TOOLS } from "./plan_tools.ts";

/** The plan view, for `createServer({ features })`. */
export const PLAN_VIEW: ServerFeature = {
  enabled: viewEnabled,
  tools: VIEW_TOOLS,
  extension: UI_EXTENSION,
  register(catalog) {
    registerPlanView(catalog);
    return [planViewListing()];
  },
  shows: (capabilities) => getUiCapability(capabilities)?.mimeTypes?.includes(PLAN_VIEW_MIME) ?? false,
  listing: viewListing,
};
