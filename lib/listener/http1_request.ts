/**
 * The web `Request` the listener of `deno run` hands the app for a parsed head
 * (lib/listener/http1_connection.ts), and the request's path as logs may show it.
 */
import type { RequestHead } from "./http1.ts";

/** The request's path without its query, for logs: a share link's `?token=` never reaches them. */
export function pathOf(target: string): string {
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}

/**
 * The web `Request` for `head`: its method and URL as sent (http1_target.ts refused what a `Request`
 * would change); undefined when none can be built.
 */
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
    return new Request(head.url, init);
  } catch {
    return undefined;
  }
}
