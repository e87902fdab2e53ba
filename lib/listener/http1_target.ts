/**
 * Which request targets and methods the listener of `deno run` (lib/listener/serve.ts) hands to the app, and
 * the URL the app sees for a target. Pure.
 *
 * The rule: the app sees the method and the target exactly as the client sent them, or the request is
 * refused before it reaches the app (and the connection closed). A web `Request` cannot carry every
 * target or method a client can send: its URL is parsed as a WHATWG URL, which resolves dot segments
 * (`/a/../b`, `/%2e%2e/b`), turns `\` into `/`, percent-encodes some characters and drops a fragment; and
 * its method is upper-cased when it names a standard one (`delete` becomes `DELETE`). A router, a guard or
 * a proxy's allow-list in front would then judge one path and the app serve another. So:
 *
 * - Origin form (`/path?query`) is served when parsing it as a URL changes nothing: no dot segment (also
 *   percent-encoded), no `\`, `"`, `<`, `>`, `` ` ``, `{`, `}` or `#` in the path, no `"`, `<`, `>`, `'` or
 *   `#` in the query. Otherwise `400`. ({@link originFormKept} is that rule; a property test holds it equal
 *   to "the WHATWG parse gives back the same characters".)
 * - Absolute form (`http://host:port/path?query`, RFC 9112 section 3.2.2) is served for `http` and `https`
 *   with a plain host (no user info), its path by the same rule; the app's URL and `Host` header are the
 *   target's, since a server must ignore the received `Host` then. Otherwise `400`.
 * - Authority form (`CONNECT`'s) and asterisk form (`OPTIONS *`) are `400`: this server is no proxy and
 *   answers nothing server-wide.
 * - Methods are case-sensitive (RFC 9110 section 9.1): `delete` is not `DELETE`, but `fetch` would make
 *   it so. A standard method in another case (`delete`, `Get`) is `501 Not Implemented`, as an unknown
 *   method is: the request is well formed, so `400` would be wrong. `CONNECT`, `TRACE` and `TRACK`, which a
 *   web `Request` cannot carry, are `501` too. Any other token (`PATCH`, `patch`, `PROPFIND`) reaches the
 *   app as sent.
 */
import type { Refusal } from "./http1_refusal.ts";

/** How a request target names its resource. */
export type TargetForm =
  | { form: "origin" }
  | { form: "absolute"; scheme: "http" | "https"; authority: string; path: string };

/** A simple `Host` (name or address, port): a URL can be built from it by concatenation. */
const SIMPLE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

const SLASH = 47;
const QUESTION = 63;

/**
 * Characters a URL parser changes in a path (escapes, or reads as a delimiter or `/`), by byte: `"`, `#`,
 * `<`, `>`, `\`, `` ` ``, `{`, `}`.
 */
const CHANGED_IN_PATH = new Uint8Array(128);
for (const c of '"#<>\\`{}') CHANGED_IN_PATH[c.charCodeAt(0)] = 1;
/** The same for a query of an `http(s)` URL: `"`, `#`, `<`, `>`, `'`. */
const CHANGED_IN_QUERY = new Uint8Array(128);
for (const c of "\"#<>'") CHANGED_IN_QUERY[c.charCodeAt(0)] = 1;

const encoder = new TextEncoder();

/**
 * Whether `target` is origin form (`/…`) that a WHATWG URL parser gives back unchanged: what the app
 * reads from `request.url` is then what was sent.
 */
export function originFormKept(target: string): boolean {
  const bytes = encoder.encode(target);
  return originBytesKept(bytes, 0, bytes.byteLength);
}

/** {@link originFormKept} for the target at `buf[start, end)`, as the request line holds it. */
export function originBytesKept(buf: Uint8Array, start: number, end: number): boolean {
  if (buf[start] !== SLASH) return false;
  let segmentStart = start + 1;
  let i = start + 1;
  for (; i <= end; i++) {
    const c = i < end ? buf[i]! : QUESTION;
    if (c === SLASH || c === QUESTION) {
      if (isDotSegment(buf, segmentStart, i)) return false;
      if (c === QUESTION) break;
      segmentStart = i + 1;
    } else if (c <= 32 || c >= 127 || CHANGED_IN_PATH[c]) return false;
  }
  for (i++; i < end; i++) {
    const c = buf[i]!;
    if (c <= 32 || c >= 127 || CHANGED_IN_QUERY[c]) return false;
  }
  return true;
}

/** Whether `buf[start, end)` is `.` or `..`, each dot maybe written `%2e` or `%2E` (WHATWG's dot segments). */
function isDotSegment(buf: Uint8Array, start: number, end: number): boolean {
  let dots = 0;
  for (let i = start; i < end;) {
    if (buf[i] === 46) i += 1;
    else if (i + 3 <= end && buf[i] === 37 && buf[i + 1] === 50 && (buf[i + 2]! | 32) === 101) i += 3;
    else return false;
    if (++dots > 2) return false;
  }
  return dots > 0;
}

/** The form of `target`, or why it is refused (see the rules above). */
export function targetForm(target: string): TargetForm | Refusal {
  if (target.charCodeAt(0) === SLASH) {
    return originFormKept(target) ? ORIGIN : refusal("a request target that a URL parser would change");
  }
  if (target === "*") return refusal("asterisk form (OPTIONS *) is not served");
  const scheme = /^(https?):\/\//i.exec(target);
  if (!scheme) return refusal("a request target that is neither a path nor an http(s) URL");
  const from = scheme[0].length;
  let to = from;
  while (to < target.length && !"/?#".includes(target[to]!)) to++;
  const authority = target.slice(from, to);
  if (!SIMPLE_HOST.test(authority)) return refusal("an absolute-form target without a plain host");
  const rest = target.slice(to);
  const path = rest === "" ? "/" : rest.startsWith("?") ? `/${rest}` : rest;
  if (!originFormKept(path)) return refusal("a request target that a URL parser would change");
  return { form: "absolute", scheme: scheme[1]!.toLowerCase() as "http" | "https", authority, path };
}

/** The form of every origin-form target. */
export const ORIGIN: TargetForm = { form: "origin" };

function refusal(reason: string): Refusal {
  return { status: 400, reason };
}

/** The methods `fetch` upper-cases (byte-case-insensitively), in their one form that reaches the app. */
const NORMALIZED = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
/** The methods a web `Request` refuses to carry, in any case. */
const FORBIDDEN = new Set(["CONNECT", "TRACE", "TRACK"]);

/** The methods of {@link NORMALIZED} as bytes, for the check that needs no string. */
const CANONICAL = [...NORMALIZED].map((m) => encoder.encode(m));

/** Whether `buf[start, end)` is one of the methods a web `Request` keeps as they are (`GET`, `POST`, …). */
export function canonicalMethod(buf: Uint8Array, start: number, end: number): boolean {
  next: for (const method of CANONICAL) {
    if (method.byteLength !== end - start) continue;
    for (let i = 0; i < method.byteLength; i++) if (buf[start + i] !== method[i]) continue next;
    return true;
  }
  return false;
}

/** Why `method` (a token, as sent) cannot reach the app unchanged, or undefined when it can. */
export function methodRefusal(method: string): Refusal | undefined {
  if (NORMALIZED.has(method)) return undefined;
  const upper = method.toUpperCase();
  if (NORMALIZED.has(upper)) {
    return { status: 501, reason: `methods are case-sensitive: ${method} is not ${upper}` };
  }
  if (FORBIDDEN.has(upper)) return { status: 501, reason: `the ${method} method is not served` };
  return undefined;
}

/**
 * The URL the app sees: the target's own for absolute form; for origin form `http://` + `Host` + the
 * target. A `Host` that is not a host alone (`::1`, `a b`, `a/b`, `a@b`) never reaches the URL, where
 * it could move the path: the URL gets a placeholder host, and the app's guard refuses the request by
 * its header (lib/http/guards.ts).
 */
export function requestUrl(target: string, form: TargetForm, host: string | undefined): string {
  if (form.form === "absolute") return `${form.scheme}://${form.authority}${form.path}`;
  if (host !== undefined && SIMPLE_HOST.test(host)) return `http://${host}${target}`;
  try {
    const base = new URL(`http://${host ?? "localhost"}/`);
    if (base.href === `${base.origin}/`) return `${base.origin}${target}`;
  } catch {
    // not a host
  }
  return `http://invalid.host${target}`;
}
