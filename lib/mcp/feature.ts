/**
 * A feature that meets the MCP server at one seam, as a tool group does: its own tools, its resources,
 * the extension it declares, whether a client shows it, and how it marks the tools it shows beside.
 * The plan view (lib/plan_view/server/plan_feature.ts) is one. The server (server.ts) is handed its
 * features and knows nothing else of them, so no module of this layer imports one.
 */
import type { ToolGroup } from "../config.ts";
import type { Catalog } from "./catalog.ts";
import type { ClientCapabilities, Resource, Tool } from "./sdk.ts";
import type { ToolDef } from "./tool.ts";

/** See the module doc. */
export interface ServerFeature {
  /** Whether the enabled tool groups turn it on. */
  enabled(groups: ReadonlySet<ToolGroup>): boolean;
  /** Its own tools: callable whenever it is on, listed only to clients that show it. */
  tools: readonly ToolDef[];
  /** The extension a 2026-07-28 server declares while it is on (`capabilities.extensions`). */
  extension: string;
  /** Puts its resources in the catalog; returns their `resources/list` entries (listed first). */
  register(catalog: Catalog): Resource[];
  /** Whether a client with these capabilities shows it. */
  shows(capabilities: ClientCapabilities | undefined): boolean;
  /**
   * A tool's `tools/list` entry as the feature marks it (its own tools, the tools it shows beside),
   * computed once per process; undefined for a tool it leaves alone.
   */
  listing(def: ToolDef): Tool | undefined;
}
