/**
 * A real browser for tests, benchmarks and screenshots: Debian's Chromium driven by playwright-core
 * (`CHROMIUM_PATH` overrides where it is). Every page records what a test wants to check afterwards:
 * requests to other origins, script errors, console errors (CSP reports land there) and dialogs.
 */
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Chromium is. */
export const CHROMIUM_PATH: string = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

/** A launched browser; disposing closes it. */
export interface BrowserHandle extends AsyncDisposable {
  browser: Browser;
  close(): Promise<void>;
}

/** Launches headless Chromium (`--no-sandbox`: test machines run as root). */
export async function launchBrowser(): Promise<BrowserHandle> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    headless: true,
  });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= browser.close());
  return { browser, close, [Symbol.asyncDispose]: close };
}

/** What happened on a page besides what it shows. */
export interface PageRecord {
  /** Every URL the page requested. */
  requests: string[];
  /** Uncaught script errors. */
  errors: string[];
  /** Console messages of type `error` (CSP violations among them). */
  consoleErrors: string[];
  /** Messages of `alert`/`confirm`/`prompt` dialogs (an injected script would open one). */
  dialogs: string[];
}

/** Options of {@link openPage}. */
export interface OpenPageOptions {
  /** Viewport width and height (default 1280×900); a phone is 390×844. */
  viewport?: { width: number; height: number };
  /** Extra headers on every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Emulate a touch phone (device scale 3, mobile viewport). */
  mobile?: boolean;
}

/** A new page in its own context, recording into a {@link PageRecord}; disposing closes the context. */
export async function newPage(
  handle: BrowserHandle,
  options: OpenPageOptions = {},
): Promise<{ page: Page; record: PageRecord } & AsyncDisposable> {
  const context = await handle.browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    extraHTTPHeaders: options.headers,
    isMobile: options.mobile ?? false,
    hasTouch: options.mobile ?? false,
    deviceScaleFactor: options.mobile ? 3 : 1,
  });
  const page = await context.newPage();
  const record: PageRecord = { requests: [], errors: [], consoleErrors: [], dialogs: [] };
  page.on("request", (request) => void record.requests.push(request.url()));
  page.on("pageerror", (error) => void record.errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") record.consoleErrors.push(message.text());
  });
  page.on("dialog", (dialog) => {
    record.dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  return { page, record, [Symbol.asyncDispose]: () => context.close() };
}

/** The requests of `record` that went anywhere but `origin` (data: and about: URLs aside). */
export function foreignRequests(record: PageRecord, origin: string): string[] {
  return record.requests.filter((url) =>
    !url.startsWith("data:") && !url.startsWith("about:") && new URL(url).origin !== origin
  );
}
