/**
 * The few names of the MCP Apps extension (SEP-1865) the server side needs, written here rather than
 * imported from `@modelcontextprotocol/ext-apps/server`: that module builds the extension's whole
 * zod protocol at import (about 10 ms of every start) for helpers that are one line each. A test
 * (tests/mcp/apps_extension_test.ts) keeps these equal to the package's.
 */
import type { ProtocolServer, ReadResource } from "./protocol_server.ts";

/** The extension's id in client capabilities (`capabilities.extensions`). */
export const EXTENSION_ID = "io.modelcontextprotocol/ui";
/** The MIME type of an MCP App's HTML resource. */
export const RESOURCE_MIME_TYPE = "text/html;profile=mcp-app";

/** What a client announces for the extension: the MIME types of views it shows. */
export interface UiCapability {
  mimeTypes?: string[];
}

/** The client's MCP Apps capability, if it announced one. */
export function getUiCapability(
  capabilities: { extensions?: Record<string, unknown> } | null | undefined,
): UiCapability | undefined {
  return capabilities?.extensions?.[EXTENSION_ID] as UiCapability | undefined;
}

/**
 * Registers an MCP App's resource for `resources/read`. The package's helper also lists it (with
 * {@link RESOURCE_MIME_TYPE} unless the config names another); here every listing is the caller's
 * (resources.ts pages them), and tests/mcp/apps_extension_test.ts keeps the plan view's listing
 * equal to the helper's.
 */
export function registerAppResource(
  mcp: ProtocolServer,
  name: string,
  uri: string,
  read: ReadResource,
): void {
  mcp.registerResource(name, uri, read);
}
