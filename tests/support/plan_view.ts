/**
 * A chat host for the plan view tests, benchmark and screenshot: a client that announces MCP Apps
 * connected to a real server, and a page built on the official host side (tests/support/plan_view_host.js)
 * that shows the view's HTML, as read from that server, in a sandboxed iframe of another origin under
 * the CSP its `_meta.ui.csp` asks for. Every tool call the view makes is relayed to the server by the
 * SDK client and recorded.
 */
import type { Frame, Page } from "playwright-core";
import { PLAN_VIEW_MIME, PLAN_VIEW_URI, UI_EXTENSION } from "../../lib/plan_view/server/plan_resource.ts";
import { bundleClient } from "../../scripts/build_web.ts";
import { type BrowserHandle, newPage, type PageRecord } from "./browser.ts";
import { connectInMemory, type InMemoryOptions, type ToolResult } from "./harness.ts";
import { type Client, newClient } from "./sdk_client.ts";

/** The capabilities of a client that shows MCP Apps (as Claude, ChatGPT, VS Code and Goose send). */
export const UI_CAPABILITIES = { extensions: { [UI_EXTENSION]: { mimeTypes: [PLAN_VIEW_MIME] } } };

/** A new SDK client announcing MCP Apps, of the handshake era unless told otherwise. */
export function uiClient(era: "legacy" | "modern" | "auto" = "legacy"): Client {
  return newClient(era, { name: "checklist-test-host", capabilities: UI_CAPABILITIES });
}

/**
 * A client that shows MCP Apps, connected in process to a new server over `options.store` (memory by
 * default), in `options.era` (the handshake era by default; in 2026-07-28 it says so per request).
 */
export function connectUi(
  options: Omit<InMemoryOptions, "capabilities" | "name"> = {},
): Promise<{ client: Client } & AsyncDisposable> {
  return connectInMemory({ ...options, name: "checklist-test-host", capabilities: UI_CAPABILITIES });
}

/** The view's document and the CSP a host derives from its `_meta.ui.csp`. */
export async function readPlanView(client: Client): Promise<{ html: string; csp: string }> {
  const { contents } = await client.readResource({ uri: PLAN_VIEW_URI });
  const content = contents[0] as { text: string; mimeType: string; _meta?: { ui?: { csp?: Csp } } };
  if (content.mimeType !== PLAN_VIEW_MIME) throw new Error(`plan view is ${content.mimeType}`);
  return { html: content.text, csp: cspHeader(content._meta?.ui?.csp ?? {}) };
}

interface Csp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** The policy the MCP Apps specification sets for a view: inline code, and only the domains it names. */
export function cspHeader(csp: Csp): string {
  const list = (domains: string[] | undefined, none = "'none'") => domains?.length ? domains.join(" ") : none;
  const resources = list(csp.resourceDomains, "");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    `connect-src ${list(csp.connectDomains)}`,
    `frame-src ${list(csp.frameDomains)}`,
    `base-uri ${list(csp.baseUriDomains)}`,
    "form-action 'none'",
  ].join("; ");
}

const hostScripts = new Map<string, Promise<string>>();

/** The test host's script, bundled for browsers once per process. */
function hostScript(): Promise<string> {
  const entry = new URL("./plan_view_host.js", import.meta.url).pathname;
  let script = hostScripts.get(entry);
  if (!script) hostScripts.set(entry, script = bundleClient(entry));
  return script;
}

/** A tool call the view made, as relayed. */
export interface RelayedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Bytes of the reply's JSON. */
  bytes: number;
}

/** Options of {@link openPlanHost}. */
export interface PlanHostOptions {
  theme?: "light" | "dark";
  /** Width of the chat column in CSS pixels (default 420). */
  width?: number;
}

/** A host page showing the plan view; disposing closes it and its servers. */
export interface PlanHost extends AsyncDisposable {
  page: Page;
  /** The view's frame. */
  view: Frame;
  record: PageRecord;
  /** Every call the view made, in order. */
  calls: RelayedCall[];
  /** Origin of the host page and of the view's frame. */
  origins: { host: string; view: string };
  /** Hands the view a tool call's arguments and result, as a host does after the call; waits for the redraw. */
  show(args: Record<string, unknown>, result: ToolResult): Promise<void>;
  /** Switches the host's theme. */
  theme(theme: "light" | "dark"): Promise<void>;
}

/** Opens the test host on `client`'s server in a new page of `browser`. */
export async function openPlanHost(
  browser: BrowserHandle,
  client: Client,
  options: PlanHostOptions = {},
): Promise<PlanHost> {
  const { html, csp } = await readPlanView(client);
  const script = await hostScript();
  const hostPage = `<!doctype html><html><head><meta charset="utf-8"><title>test host</title></head>` +
    `<body style="margin:0;padding:12px;background:${options.theme === "dark" ? "#202124" : "#f4f4f4"}">` +
    `<script type="module" src="/host.js"></script></body></html>`;
  const servers = [
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/host.js") {
        return new Response(script, { headers: { "content-type": "text/javascript" } });
      }
      return new Response(hostPage, { headers: { "content-type": "text/html; charset=utf-8" } });
    }),
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
      new Response(html, {
        headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp },
      })),
  ];
  const [host, view] = servers.map((s) => `http://127.0.0.1:${s.addr.port}`) as [string, string];
  const tab = await newPage(browser, { viewport: { width: (options.width ?? 420) + 40, height: 900 } });
  const calls: RelayedCall[] = [];
  await tab.page.exposeFunction("relay", async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    calls.push({ name, arguments: args, bytes: new TextEncoder().encode(JSON.stringify(result)).length });
    return result;
  });
  const query = new URLSearchParams({
    view: `${view}/plan.html`,
    theme: options.theme ?? "light",
    width: String(options.width ?? 420),
  });
  const close = async () => {
    await tab[Symbol.asyncDispose]();
    await Promise.all(servers.map((s) => s.shutdown()));
  };
  try {
    await tab.page.goto(`${host}/?${query}`);
    await tab.page.waitForFunction("window.host !== undefined");
    await tab.page.evaluate("window.host.ready");
    const frame = tab.page.frames().find((f) => f.url().startsWith(view));
    if (!frame) throw new Error("the view's frame did not load");
    return {
      page: tab.page,
      view: frame,
      record: tab.record,
      calls,
      origins: { host, view },
      async show(args, result) {
        const seq = await frame.evaluate(() =>
          Number((globalThis as unknown as ViewGlobals).document.body.dataset.seq ?? "0")
        );
        await tab.page.evaluate(
          ([a, r]) => (globalThis as unknown as HostGlobals).host.show(a, r),
          [
            args,
            result,
          ] as const,
        );
        await frame.waitForFunction(
          (n) => Number((globalThis as unknown as ViewGlobals).document.body.dataset.seq ?? "0") > n,
          seq,
          { timeout: 10_000 },
        );
      },
      async theme(next) {
        await tab.page.evaluate((t) => (globalThis as unknown as HostGlobals).host.theme(t), next);
        await frame.waitForFunction(
          (t) => (globalThis as unknown as ViewGlobals).document.documentElement.dataset.theme === t,
          next,
        );
      },
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The host page's globals the tests call (tests are type-checked without the DOM lib). */
interface HostGlobals {
  host: {
    show(args: unknown, result: unknown): Promise<void>;
    theme(theme: "light" | "dark"): void;
  };
}

/** The view's globals the tests read. */
interface ViewGlobals {
  document: {
    body: { dataset: Record<string, string | undefined> };
    documentElement: { dataset: Record<string, string | undefined> };
  };
}
