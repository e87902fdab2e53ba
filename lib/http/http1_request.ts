/**
 * The web `Request` the listener of `deno run` hands the app for a parsed head
 * (lib/http/http1_connection.ts), and the request's path as logs may show it.
 */
import type { RequestHead } from "./http1.ts";

/** The request's path without its query, for logs: a share link's `?token=` never reaches them. */
export function pathOf(target: string): string {
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}

/** A simple `Host` (name or address, port): the URL can be built by concatenation. */
const SIMPLE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The web `Request` for `head`; undefined when none can be built (a method `fetch` forbids). */
export function toRequest(
  head: RequestHead,
  signal: AbortSignal,
  body: BodyInit | null,
): Request | undefined {
  const hasBody = body !== null && head.method !== "GET" && head.method !== "HEAD";
  const init = {
    method: head.method,
    // Pairs, not a Headers object: the Request would copy (and check) a Headers object's list again.
    headers: head.headers,
    signal,
    ...(hasBody ? { body, duplex: "half" } : {}),
  } as RequestInit;
  try {
    return new Request(requestUrl(head), init);
  } catch {
    return undefined;
  }
}

/**
 * The request's URL from its target and `Host`. A `Host` no URL can be built from (`::1`) gets a
 * placeholder: the app's guard refuses the request by its header (lib/http/guards.ts).
 */
function requestUrl(head: RequestHead): string {
  const { target, host } = head;
  if (target.startsWith("/") && host !== undefined && SIMPLE_HOST.test(host)) {
    return `http://${host}${target}`;
  }
  try {
    return new URL(target, `http://${host ?? "localhost"}`).href;
  } catch {
    return new URL(target.startsWith("/") ? target : "/", "http://invalid.host").href;
  }
}
