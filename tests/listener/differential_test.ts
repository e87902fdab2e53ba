/**
 * Our listener (lib/listener/serve.ts, `deno run`) against the one it replaces (Deno's own, `deno serve`):
 * the same echo app (tests/listener/fixtures/echo_server.ts) behind each, and a corpus of about 140 raw
 * requests sent to both over TCP. For each request: did the app see it, and if both let it through, did
 * the app see the same method and target; for the connection cases, did the server close. Every
 * difference must be in {@link DIFFERENCES} with its reason; a difference that is not, or one listed
 * that no longer shows, fails the test. (STYLE.md 14: a listener of our own keeps a differential test
 * against the library it replaces.)
 */
import assert from "node:assert/strict";
import { serverEnv } from "../support/env.ts";
import { CONFIG, ROOT } from "../support/paths.ts";
import { freePort } from "../support/processes.ts";
import { Raw } from "../support/raw_http.ts";
import { type ServerProcess, startHttpProcess } from "../support/server_process.ts";

const ECHO = `${ROOT}/tests/listener/fixtures/echo_server.ts`;
const encoder = new TextEncoder();

/** What a request got from one listener. */
interface Outcome {
  /** The first response's status; undefined when the server answered nothing. */
  status: number | undefined;
  /** What the echo app saw (method, and the target: its URL without scheme and host); undefined when it saw nothing. */
  app: { method: string; target: string } | undefined;
  /** Whether the server closed the connection within the wait. */
  closed: boolean;
}

/** How a listener treated a request: the app saw it, or it was refused before the app. */
type Verdict = "app" | "refused";

/** One raw request of the corpus; `connection` compares whether each server closed, too. */
interface Case {
  name: string;
  bytes: string | Uint8Array;
  connection?: boolean;
}

/**
 * The documented differences: for each request named, what Deno's listener and ours do, and why ours
 * differs (when both hand it to the app, the app sees another method or target). Ours refuses with a
 * status and closes; the rules are in lib/listener/http1.ts and lib/listener/http1_target.ts, and docs/hosting.md "Limits of the HTTP endpoint".
 */
const DIFFERENCES: Record<string, { deno: Verdict; ours: Verdict; why: string }> = {};
function differ(names: string[], deno: Verdict, ours: Verdict, why: string): void {
  for (const name of names) DIFFERENCES[name] = { deno, ours, why };
}
const CHANGED_TARGETS = [
  "dot segment ..",
  "dot segment .",
  "dot segment at the end",
  "a lone ..",
  "%2e%2e",
  "%2E",
  ".%2e",
  "%2e. at the end",
  "backslash",
  "backslash before ..",
  "fragment",
  'a " in the path',
  "< and > in the path",
  "a backtick in the path",
  "braces in the path",
  "a ' in the query",
  'a " in the query',
  "< in the query",
  "absolute form with ..",
];
differ(
  CHANGED_TARGETS,
  "app",
  "refused",
  "a target a URL parser changes: Deno hands the app the raw string, whose path then depends on how the app " +
    "reads it (`new URL(request.url).pathname` resolves it, a router that slices the string does not); " +
    "ours answers 400 so that every reader sees what was sent",
);
differ(
  ["method delete", "method Get", "method pOST", "method put", "method options", "method head"],
  "app",
  "refused",
  "methods are case-sensitive; a web Request upper-cases these six, so ours cannot hand `delete` on unchanged " +
    "and answers 501 (Deno builds its Request without that step)",
);
differ(
  ["method TRACE", "method trace", "method TRACK", "CONNECT authority form"],
  "app",
  "refused",
  "a web Request cannot carry CONNECT, TRACE or TRACK: ours answers 501",
);
differ(
  ["OPTIONS *"],
  "app",
  "refused",
  "asterisk form: Deno hands the app `/*`, another target; ours serves nothing server-wide (400)",
);
differ(
  ["absolute form with user info", "absolute form ftp"],
  "app",
  "refused",
  "an absolute-form target must be http(s) with a plain host (RFC 9110 section 4.2.4 forbids user info)",
);
differ(
  ["no Host in HTTP/1.1"],
  "app",
  "refused",
  "RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host",
);
differ(
  ["two equal Content-Length"],
  "app",
  "refused",
  "several Content-Length fields are refused even when equal: one framing rule, no guessing (smuggling)",
);
differ(
  ["Expect: the-moon"],
  "app",
  "refused",
  "an expectation other than 100-continue is 417 (RFC 9110 section 10.1.1); Deno ignores it",
);
differ(
  ["gzip, chunked"],
  "app",
  "refused",
  "a transfer-coding other than chunked is 501: the app would get a body still encoded",
);
differ(
  ["a 9 KiB request line", "a 17 KiB header", "a 60 KiB header"],
  "app",
  "refused",
  "our limits are lower (request line 8 KiB: 414; head 16 KiB: 431); Deno takes heads of hundreds of KiB",
);

differ(
  ["a bare LF ending a field", "bare LF line ends", "a bare LF before the request"],
  "app",
  "refused",
  "RFC 9112 section 2.2 lets a recipient take a bare LF for a line end, and Deno does; ours refuses it (400), " +
    "so that no proxy in front that ends lines otherwise can be made to read other requests than ours",
);
differ(
  ["non-ASCII in the target"],
  "app",
  "refused",
  "a request target is ASCII (RFC 9112 section 3.2; RFC 3986): ours answers 400, Deno passes the bytes on",
);
differ(
  ["absolute form, query without a path"],
  "app",
  "app",
  "the empty path of `http://a?x=1` reaches the app as `/` (RFC 9110 section 4.2.3); Deno hands on the raw " +
    "string, whose path a URL parser reads as `/` too",
);

const CLOSE = "Connection: close\r\n";
const get = (target: string, headers = "") => `GET ${target} HTTP/1.1\r\nHost: a\r\n${headers}${CLOSE}\r\n`;
const post = (headers: string, body: string) =>
  `POST /p HTTP/1.1\r\nHost: a\r\n${headers}${CLOSE}\r\n${body}`;
const method = (name: string) => `${name} /m HTTP/1.1\r\nHost: a\r\n${CLOSE}\r\n`;
const bytes = (before: string, raw: number[], after: string) =>
  new Uint8Array([...encoder.encode(before), ...raw, ...encoder.encode(after)]);
const fields = (n: number) => Array.from({ length: n }, (_, i) => `X-F${i}: ${i}\r\n`).join("");

const CORPUS: Case[] = [
  // Valid requests: the app sees each, as sent.
  { name: "GET /", bytes: get("/") },
  { name: "a path and query", bytes: get("/a/b?c=d&e=f") },
  { name: "an empty query", bytes: get("/a?") },
  { name: "a ? in the query", bytes: get("/a?b?c=/d") },
  { name: "percent-encoded bytes kept", bytes: get("/%7Euser/a%2Fb/%20?q=%41") },
  { name: "an invalid percent kept", bytes: get("/%zz/%") },
  { name: "dots inside segments", bytes: get("/a/.b/..c/d../e.") },
  { name: "a dot segment in the query", bytes: get("/a?x=/../b") },
  { name: "double slash", bytes: get("//a//b") },
  { name: "sub-delims, colon and at", bytes: get("/!$&()*+,;=:@a") },
  { name: "a ' in the path", bytes: get("/it's") },
  { name: "[ ] | ^ in the path", bytes: get("/a[1]|b^c") },
  { name: "a long path", bytes: get(`/${"p".repeat(4000)}`) },
  { name: "Host with a port", bytes: `GET / HTTP/1.1\r\nHost: 127.0.0.1:8585\r\n${CLOSE}\r\n` },
  { name: "Host IPv6", bytes: `GET / HTTP/1.1\r\nHost: [::1]:8585\r\n${CLOSE}\r\n` },
  { name: "HTTP/1.0 without Host", bytes: "GET /old HTTP/1.0\r\n\r\n" },
  { name: "HTTP/1.0 with Host", bytes: "GET /old HTTP/1.0\r\nHost: a\r\n\r\n" },
  { name: "absolute form", bytes: get("http://a/abs?x=1") },
  { name: "absolute form, another host", bytes: get("http://other.example:8080/abs") },
  { name: "absolute form https", bytes: get("https://a/abs") },
  { name: "absolute form without a path", bytes: get("http://a") },
  { name: "absolute form, query without a path", bytes: get("http://a?x=1") },
  { name: "absolute form, upper-case scheme", bytes: get("HTTP://A.example/x") },
  { name: "POST with a length", bytes: post("Content-Length: 5\r\n", "hello") },
  { name: "POST with an empty length", bytes: post("Content-Length: 0\r\n", "") },
  { name: "POST chunked", bytes: post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n") },
  {
    name: "POST chunked with extensions and trailers",
    bytes: post("Transfer-Encoding: chunked\r\n", "3;a=b\r\nabc\r\n2 ; c\r\nde\r\n0\r\nX-T: 1\r\n\r\n"),
  },
  {
    name: "POST chunked, upper-case hex",
    bytes: post("Transfer-Encoding: chunked\r\n", `A\r\n${"x".repeat(10)}\r\n0\r\n\r\n`),
  },
  { name: "POST chunked, Chunked", bytes: post("Transfer-Encoding: Chunked\r\n", "1\r\nx\r\n0\r\n\r\n") },
  { name: "Expect: 100-continue", bytes: post("Expect: 100-continue\r\nContent-Length: 2\r\n", "hi") },
  { name: "Expect: the-moon", bytes: get("/", "Expect: the-moon\r\n") },
  { name: "method PUT", bytes: method("PUT") },
  { name: "method DELETE", bytes: method("DELETE") },
  { name: "method PATCH", bytes: method("PATCH") },
  { name: "method patch", bytes: method("patch") },
  { name: "method OPTIONS", bytes: method("OPTIONS") },
  { name: "method HEAD", bytes: method("HEAD") },
  { name: "method PROPFIND", bytes: method("PROPFIND") },
  { name: "method M-SEARCH", bytes: method("M-SEARCH") },
  { name: "method a token of symbols", bytes: method("!#$%&'*+-.^_`|~") },
  { name: "header value with inner spaces", bytes: get("/", "X-A: a  b\t c\r\n") },
  {
    name: "header value with obs-text",
    bytes: bytes("GET / HTTP/1.1\r\nHost: a\r\nX-A: ", [0xe9], `\r\n${CLOSE}\r\n`),
  },
  { name: "an empty header value", bytes: get("/", "X-A:\r\n") },
  { name: "whitespace around a value", bytes: get("/", "X-A: \t v \t\r\n") },
  { name: "100 header fields", bytes: get("/", fields(98)) },
  { name: "a 12 KiB header", bytes: get("/", `X-Big: ${"b".repeat(12 * 1024)}\r\n`) },
  { name: "empty lines before the request", bytes: `\r\n\r\n${get("/")}` },
  {
    name: "Connection: keep-alive, close",
    bytes: "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n",
    connection: true,
  },
  {
    name: "Connection: Close",
    bytes: "GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n",
    connection: true,
  },
  { name: "HTTP/1.1 keeps the connection", bytes: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", connection: true },
  { name: "HTTP/1.0 closes", bytes: "GET / HTTP/1.0\r\n\r\n", connection: true },
  {
    name: "HTTP/1.0 keep-alive",
    bytes: "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    connection: true,
  },
  {
    name: "HTTP/1.0 close, keep-alive",
    bytes: "GET / HTTP/1.0\r\nConnection: close, keep-alive\r\n\r\n",
    connection: true,
  },
  {
    name: "HTTP/1.0 keep-alive then close",
    bytes: "GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
    connection: true,
  },
  { name: "absolute form with ..", bytes: get("http://a/x/../y") },
  { name: "absolute form with user info", bytes: get("http://user@a/x") },
  { name: "absolute form ftp", bytes: get("ftp://a/x") },
  // Targets a URL parser would change.
  { name: "dot segment ..", bytes: get("/a/../b") },
  { name: "dot segment .", bytes: get("/a/./b") },
  { name: "dot segment at the end", bytes: get("/a/..") },
  { name: "a lone ..", bytes: get("/..") },
  { name: "%2e%2e", bytes: get("/mcp/%2e%2e/api") },
  { name: "%2E", bytes: get("/a/%2E/b") },
  { name: ".%2e", bytes: get("/a/.%2e/b") },
  { name: "%2e. at the end", bytes: get("/a/%2e.?x") },
  { name: "backslash", bytes: get("/a\\b") },
  { name: "backslash before ..", bytes: get("/mcp\\..\\api") },
  { name: "fragment", bytes: get("/a#b") },
  { name: 'a " in the path', bytes: get('/a"b') },
  { name: "< and > in the path", bytes: get("/<a>") },
  { name: "a backtick in the path", bytes: get("/a`b") },
  { name: "braces in the path", bytes: get("/{a}") },
  { name: "a ' in the query", bytes: get("/a?b='c'") },
  { name: 'a " in the query', bytes: get('/a?b="c"') },
  { name: "< in the query", bytes: get("/a?b=<c>") },
  // Other target forms.
  { name: "a target without a leading slash", bytes: get("a/b") },
  { name: "OPTIONS *", bytes: `OPTIONS * HTTP/1.1\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "GET *", bytes: get("*") },
  { name: "CONNECT authority form", bytes: "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" },
  // Methods.
  { name: "method delete", bytes: method("delete") },
  { name: "method Get", bytes: method("Get") },
  { name: "method pOST", bytes: method("pOST") },
  { name: "method put", bytes: method("put") },
  { name: "method options", bytes: method("options") },
  { name: "method head", bytes: method("head") },
  { name: "method TRACE", bytes: method("TRACE") },
  { name: "method trace", bytes: method("trace") },
  { name: "method TRACK", bytes: method("TRACK") },
  { name: "method CONNECT, origin form", bytes: method("CONNECT") },
  { name: "a method with a (", bytes: method("GE(T") },
  // Framing: what two parsers could read two ways.
  {
    name: "Content-Length and Transfer-Encoding",
    bytes: post("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"),
  },
  {
    name: "Transfer-Encoding and Content-Length",
    bytes: post("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "0\r\n\r\n"),
  },
  { name: "two equal Content-Length", bytes: post("Content-Length: 3\r\nContent-Length: 3\r\n", "abc") },
  { name: "two different Content-Length", bytes: post("Content-Length: 3\r\nContent-Length: 4\r\n", "abcd") },
  { name: "a Content-Length list", bytes: post("Content-Length: 3, 3\r\n", "abc") },
  { name: "a signed Content-Length", bytes: post("Content-Length: +3\r\n", "abc") },
  { name: "a hex Content-Length", bytes: post("Content-Length: 0x3\r\n", "abc") },
  { name: "an empty Content-Length", bytes: post("Content-Length: \r\n", "") },
  { name: "a huge Content-Length", bytes: post("Content-Length: 99999999999999999999\r\n", "") },
  { name: "chunked twice", bytes: post("Transfer-Encoding: chunked, chunked\r\n", "0\r\n\r\n") },
  {
    name: "chunked in two fields",
    bytes: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"),
  },
  { name: "chunked not last", bytes: post("Transfer-Encoding: chunked, gzip\r\n", "0\r\n\r\n") },
  { name: "identity coding", bytes: post("Transfer-Encoding: identity\r\n", "") },
  { name: "gzip, chunked", bytes: post("Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n") },
  {
    name: "Transfer-Encoding in HTTP/1.0",
    bytes: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
  },
  { name: "a bad chunk size", bytes: post("Transfer-Encoding: chunked\r\n", "x\r\nabc\r\n0\r\n\r\n") },
  { name: "a signed chunk size", bytes: post("Transfer-Encoding: chunked\r\n", "-3\r\nabc\r\n0\r\n\r\n") },
  {
    name: "a chunk size with junk",
    bytes: post("Transfer-Encoding: chunked\r\n", "3 3\r\nabc\r\n0\r\n\r\n"),
  },
  {
    name: "a huge chunk size",
    bytes: post("Transfer-Encoding: chunked\r\n", "1234567890abcdef1\r\nabc\r\n0\r\n\r\n"),
  },
  { name: "chunk data without CRLF", bytes: post("Transfer-Encoding: chunked\r\n", "3\r\nabcXX0\r\n\r\n") },
  {
    name: "a bare LF after a chunk size",
    bytes: post("Transfer-Encoding: chunked\r\n", "3\nabc\r\n0\r\n\r\n"),
  },
  { name: "obs-fold", bytes: get("/", "X-A: 1\r\n folded\r\n") },
  { name: "whitespace before a colon", bytes: get("/", "X-A : 1\r\n") },
  { name: "a header without a colon", bytes: get("/", "X-A 1\r\n") },
  { name: "an empty header name", bytes: get("/", ": 1\r\n") },
  { name: "a header name with (", bytes: get("/", "X(A): 1\r\n") },
  { name: "a control character in a value", bytes: get("/", "X-A: a\x01b\r\n") },
  { name: "a NUL in a value", bytes: get("/", "X-A: a\x00b\r\n") },
  { name: "a bare CR in a value", bytes: get("/", "X-A: a\rb\r\n") },
  { name: "a bare LF ending a field", bytes: `GET / HTTP/1.1\r\nHost: a\nX-A: 1\r\n${CLOSE}\r\n` },
  { name: "bare LF line ends", bytes: "GET / HTTP/1.1\nHost: a\nConnection: close\n\n" },
  { name: "a bare LF before the request", bytes: `\n${get("/")}` },
  { name: "two Host headers", bytes: get("/", "Host: b\r\n") },
  { name: "no Host in HTTP/1.1", bytes: `GET / HTTP/1.1\r\n${CLOSE}\r\n` },
  // The request line.
  { name: "two spaces", bytes: `GET  / HTTP/1.1\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "a tab for a space", bytes: `GET\t/ HTTP/1.1\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "a space at the end", bytes: `GET / HTTP/1.1 \r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "a space in the target", bytes: `GET /a b HTTP/1.1\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "non-ASCII in the target", bytes: get("/é") },
  { name: "a lower-case version", bytes: `GET / http/1.1\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "no version", bytes: `GET /\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "HTTP/1.2", bytes: `GET / HTTP/1.2\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "HTTP/2.0", bytes: `GET / HTTP/2.0\r\nHost: a\r\n${CLOSE}\r\n` },
  { name: "HTTP/0.9", bytes: `GET / HTTP/0.9\r\nHost: a\r\n${CLOSE}\r\n` },
  // Deno's listener speaks HTTP/2 to it (prior knowledge): no HTTP/1 answer, and the app sees nothing.
  { name: "HTTP/2 preface", bytes: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" },
  {
    name: "a TLS hello",
    bytes: new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]),
  },
  { name: "garbage", bytes: "\x00\x01\x02\x03 hello\r\n\r\n" },
  // Limits.
  { name: "a 9 KiB request line", bytes: get(`/${"a".repeat(9000)}`) },
  { name: "a 17 KiB header", bytes: get("/", `X-Big: ${"b".repeat(17 * 1024)}\r\n`) },
  { name: "a 60 KiB header", bytes: get("/", `X-Big: ${"b".repeat(60 * 1024)}\r\n`) },
  { name: "129 header fields", bytes: get("/", fields(128)) },
  { name: "20,000 empty lines", bytes: `${"\r\n".repeat(20_000)}${get("/")}` },
];

/** The echo app's JSON in a response, as method and target (the URL without scheme and host). */
function appSaw(text: string): Outcome["app"] {
  const match = /^HTTP\/1\.[01] 2\d\d [^]*?\r\n\r\n(\{[^]*\})/.exec(text);
  if (!match) return undefined;
  const { method, url } = JSON.parse(match[1]!) as { method: string; url: string };
  return { method, target: url.replace(/^[A-Za-z]+:\/\/[^/?#]*/, "") };
}

/** `text` without the interim responses (`100 Continue`) before the answer. */
function answer(text: string): string {
  return text.replace(/^(HTTP\/1\.[01] 1\d\d [^]*?\r\n\r\n)+/, "");
}

/** Whether `text` holds a whole answer: its head, and as many body bytes as its length says. */
function whole(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
  return text.length - end - 4 >= Number(length ?? 0);
}

/**
 * Sends `bytes` on a new connection and reads until the server closes it, or until half a second after a
 * whole answer (a connection kept open) or an answer that is no HTTP/1 one; never longer than 10 s, however
 * loaded the machine.
 */
async function send(port: number, bytes: Case["bytes"]): Promise<Outcome> {
  await using raw = await Raw.open(port);
  await raw.write(bytes).catch(() => {});
  await raw.until((text) => whole(answer(text)) || (text.length >= 5 && !text.startsWith("HTTP/")), 10_000);
  if (!raw.closed) await raw.closedWithin(500);
  const final = answer(raw.text);
  const status = /^HTTP\/1\.[01] (\d{3}) /.exec(final)?.[1];
  return {
    status: status === undefined ? undefined : Number(status),
    app: appSaw(final),
    closed: raw.closed,
  };
}

/** The app saw it (the echo app answers 200; a HEAD's answer has no body to show what it saw). */
function verdict(outcome: Outcome): Verdict {
  return outcome.status !== undefined && outcome.status < 300 ? "app" : "refused";
}

async function start(mode: "deno serve" | "ours"): Promise<ServerProcess> {
  const port = freePort();
  const args = mode === "ours"
    ? ["run", "-A", "--config", CONFIG, ECHO, "--own"]
    : ["serve", "-A", "--config", CONFIG, "--host", "127.0.0.1", "--port", String(port), ECHO];
  return await startHttpProcess(
    { command: Deno.execPath(), args, cwd: ROOT, env: serverEnv({ PORT: String(port) }) },
    { port, stderr: "null", graceMs: 2000, label: mode },
  );
}

Deno.test("our listener lets through what Deno's does, and refuses only the documented differences", async (t) => {
  await using deno = await start("deno serve");
  await using ours = await start("ours");
  const outcomes = new Map<string, [Outcome, Outcome]>();
  for (let i = 0; i < CORPUS.length; i += 16) {
    await Promise.all(
      CORPUS.slice(i, i + 16).map(async (c) => {
        outcomes.set(c.name, await Promise.all([send(deno.port, c.bytes), send(ours.port, c.bytes)]));
      }),
    );
  }
  assert.equal(new Set(CORPUS.map((c) => c.name)).size, CORPUS.length, "case names are unique");
  for (const name of Object.keys(DIFFERENCES)) assert.ok(outcomes.has(name), `no such case: ${name}`);
  for (const c of CORPUS) {
    await t.step(c.name, () => {
      const [theirs, mine] = outcomes.get(c.name)!;
      const detail = JSON.stringify({ deno: theirs, ours: mine });
      const documented = DIFFERENCES[c.name];
      if (documented) {
        assert.deepEqual([verdict(theirs), verdict(mine)], [documented.deno, documented.ours], detail);
        if (mine.app && theirs.app) assert.notDeepEqual(mine.app, theirs.app, `no longer differs: ${detail}`);
      } else {
        assert.equal(verdict(mine), verdict(theirs), detail);
        assert.deepEqual(mine.app, theirs.app, detail);
      }
      // Ours answers every refusal with a status, and closes.
      if (verdict(mine) === "refused") {
        assert.ok(mine.status !== undefined && mine.status >= 400, detail);
        assert.ok(mine.closed, detail);
      }
      if (c.connection) assert.equal(mine.closed, theirs.closed, detail);
    });
  }
});
