/**
 * Which targets and methods the listener hands to the app (lib/listener/http1_target.ts), held against what
 * the web platform itself does: a target is served exactly when a WHATWG URL parser gives it back
 * unchanged, and a method exactly when a web `Request` keeps it as sent.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { methodRefusal, originFormKept, requestUrl, targetForm } from "../../lib/listener/http1_target.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

/** Request-target characters (`!`–`~`), the ones a URL parser treats specially many times over. */
const targetChar = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      ".",
      "%",
      "2",
      "e",
      "E",
      "/",
      "?",
      "\\",
      "#",
      "'",
      '"',
      "<",
      ">",
      "`",
      "{",
      "}",
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom("a", "b", "%2e", "%2E", "%2f", "..", "./", "/.") },
  { weight: 1, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) },
);
const originTarget = fc.array(targetChar, { maxLength: 14 }).map((parts) => `/${parts.join("")}`);

Deno.test("an origin-form target is served exactly when a URL parser gives it back unchanged", () => {
  fc.assert(
    fc.property(originTarget, (target) => {
      // A fragment is no part of a request target (RFC 9112 section 3.2): the URL would hold it apart.
      const unchanged = new URL(`http://h${target}`).href === `http://h${target}` && !target.includes("#");
      assert.equal(originFormKept(target), unchanged, target);
    }),
    { numRuns: fuzzRuns(20_000), seed: FUZZ_SEED },
  );
});

Deno.test("a served target reaches the app's URL as sent, whichever way the app reads it", () => {
  fc.assert(
    fc.property(
      originTarget,
      fc.constantFrom("a", "127.0.0.1:8585", "[::1]:1", "A.Example"),
      (target, host) => {
        const form = targetForm(target);
        if ("reason" in form) return;
        const raw = new Request(requestUrl(target, form, host)).url;
        const url = new URL(raw);
        assert.equal(raw.slice(url.origin.length), target, "the URL's text");
        const emptyQuery = target.indexOf("?") === target.length - 1;
        assert.equal(url.pathname + url.search, emptyQuery ? target.slice(0, -1) : target, "parsed");
      },
    ),
    { numRuns: fuzzRuns(5_000), seed: FUZZ_SEED },
  );
});

Deno.test("an absolute-form target is served with its path as sent, or refused", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("http://", "https://", "HTTP://", "ftp://", "http:/", "http:///"),
      fc.constantFrom("a", "a.example:8080", "[::1]", "u@a", "a b", ""),
      originTarget,
      (scheme, authority, path) => {
        const target = `${scheme}${authority}${path}`;
        const form = targetForm(target);
        if ("reason" in form) return;
        assert.equal(form.form, "absolute");
        const prefix = `${form.scheme}://${form.authority}`;
        assert.equal(target.slice(0, prefix.length).toLowerCase(), prefix.toLowerCase(), target);
        const rest = target.slice(prefix.length);
        assert.equal(form.path, rest === "" || rest.startsWith("?") ? `/${rest}` : rest, target);
        const url = new URL(requestUrl(target, form, "ignored"));
        assert.equal(url.href.slice(url.origin.length), form.path, target);
        assert.equal(url.host, form.authority.toLowerCase(), target);
      },
    ),
    { numRuns: fuzzRuns(5_000), seed: FUZZ_SEED },
  );
});

Deno.test("a method is served exactly when a web Request keeps it as sent", () => {
  const token = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,8}$/);
  const known = fc.constantFrom(
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "OPTIONS",
    "CONNECT",
    "TRACE",
    "TRACK",
    "PATCH",
  )
    .chain((m) =>
      fc.array(fc.boolean(), { minLength: m.length, maxLength: m.length }).map((lower) =>
        [...m].map((c, i) => (lower[i] ? c.toLowerCase() : c)).join("")
      )
    );
  fc.assert(
    fc.property(fc.oneof(token, known), (method) => {
      let kept: boolean;
      try {
        kept = new Request("http://h/", { method }).method === method;
      } catch {
        kept = false;
      }
      assert.equal(methodRefusal(method) === undefined, kept, method);
    }),
    { numRuns: fuzzRuns(5_000), seed: FUZZ_SEED },
  );
});
