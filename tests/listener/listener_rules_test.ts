/**
 * The `deno run` listener (lib/listener/serve.ts) on real sockets, one rule a test: strict framing
 * answered and closed, keep-alive and pipelining, chunked bodies, `Expect: 100-continue`, HEAD,
 * event streams, the head / body / idle deadlines, the handler's failures, shutdown.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createApp } from "../../lib/http/app.ts";
import { type HttpListener, serveHttp, type ServeOptions } from "../../lib/listener/serve.ts";
import { Http1Connection } from "../../lib/listener/http1_connection.ts";
import { plainRefusal } from "../../lib/listener/http1_refusal.ts";
import { LISTENER_OPTIONS } from "../../lib/http/listener_options.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { PLAN_VIEW } from "../../lib/plan_view/server/plan_feature.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import { quietLogger, recordingLogger } from "../support/logs.ts";
import { MCP_HEADERS } from "../support/http.ts";
import { sleep } from "../support/time.ts";
import { Raw, statuses } from "../support/raw_http.ts";
import { FUZZ_SEED, fuzzRuns } from "../support/fuzz.ts";

const encoder = new TextEncoder();
type Fetch = ServeOptions["fetch"];

async function listen(fetch: Fetch, options: Partial<ServeOptions> = {}): Promise<HttpListener> {
  return await serveHttp({
    hostname: "127.0.0.1",
    port: 0,
    fetch,
    log: quietLogger(),
    ...LISTENER_OPTIONS,
    ...options,
  });
}

/** An app that answers `METHOD path body` as text, counting its calls. */
function echo(): { fetch: Fetch; calls: Request[] } {
  const calls: Request[] = [];
  return {
    calls,
    fetch: async (request) => {
      calls.push(request);
      const body = request.body ? await request.text() : "";
      return new Response(`${request.method} ${new URL(request.url).pathname} ${body}`, {
        headers: { "content-type": "text/plain" },
      });
    },
  };
}

Deno.test("a listener given no refusal body refuses in plain text: it knows nothing of MCP", async () => {
  const app = echo();
  const { refusal: _app, ...deadlines } = LISTENER_OPTIONS;
  await using server = await disposable(
    serveHttp({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, log: quietLogger(), ...deadlines }),
  );
  await using raw = await Raw.open(server.port);
  await raw.write("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3x\r\n\r\nabc");
  assert.ok(await raw.closedWithin(), `still open: ${raw.text}`);
  assert.deepEqual(statuses(raw.text), [400], raw.text);
  assert.match(raw.text, /content-type: text\/plain; charset=utf-8\r\n/i);
  assert.match(raw.text, /\r\n\r\nBad Request: an invalid Content-Length$/);
  assert.equal(app.calls.length, 0);
});

Deno.test("ambiguous or malformed framing is answered 400, never reaches the app, and closes the connection", async (t) => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  const cases: [string, string | Uint8Array][] = [
    [
      "Content-Length and Transfer-Encoding",
      "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    ["two Content-Length", "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"],
    ["an invalid Content-Length", "Content-Length: 3x\r\n\r\nabc"],
    ["obs-fold", "X-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n"],
    ["a bare LF", "X-A: 1\nContent-Length: 0\r\n\r\n"],
    ["chunked framing broken", "Transfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n"],
  ];
  for (const [name, rest] of cases) {
    await t.step(name, async () => {
      await using raw = await Raw.open(server.port);
      await raw.write(`POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\n${rest}`);
      assert.ok(await raw.closedWithin(), `still open: ${raw.text}`);
      assert.deepEqual(statuses(raw.text), [400], raw.text);
      assert.match(raw.text, /connection: close\r\n/i);
      assert.match(raw.text, /"error":\{"code":-32000,"message":"Bad Request: /);
    });
  }
  for (
    const [name, bytes] of [
      ["an HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
      ["a TLS hello", new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])],
      ["garbage", "\x00\x01\x02\x03 hello\r\n\r\n"],
    ] as const
  ) {
    await t.step(name, async () => {
      await using raw = await Raw.open(server.port);
      await raw.write(bytes);
      assert.ok(await raw.closedWithin(), `still open: ${raw.text}`);
      assert.deepEqual(statuses(raw.text), [400], raw.text);
    });
  }
  // The chunked case's head reached the app before its framing broke; nothing else did.
  assert.ok(app.calls.length <= 1, `${app.calls.length} requests reached the app`);
});

Deno.test("limits: a long request line is 414, a large header block 431, an unknown coding 501; each closes", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  const cases: [string, number][] = [
    [`GET /${"a".repeat(9000)} HTTP/1.1\r\nHost: a\r\n\r\n`, 414],
    [`GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${"b".repeat(17_000)}\r\n\r\n`, 431],
    [`POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`, 501],
  ];
  for (const [request, status] of cases) {
    await using raw = await Raw.open(server.port);
    await raw.write(request);
    assert.ok(await raw.closedWithin(), `still open: ${raw.text}`);
    assert.deepEqual(statuses(raw.text), [status], raw.text);
  }
  assert.equal(app.calls.length, 0);
});

Deno.test("keep-alive: HTTP/1.1 serves several requests on one connection until Connection: close", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  await using raw = await Raw.open(server.port);
  await raw.write("GET /one HTTP/1.1\r\nHost: a\r\n\r\n");
  await raw.until(/GET \/one $/);
  await raw.write("POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc");
  await raw.until(/POST \/two abc$/);
  assert.equal(raw.closed, false);
  await raw.write("GET /three HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  assert.ok(await raw.closedWithin(), raw.text);
  assert.deepEqual(statuses(raw.text), [200, 200, 200]);
  assert.match(raw.text, /connection: close\r\n[^]*GET \/three $/);
});

Deno.test("HTTP/1.0 closes after its answer unless it asks for keep-alive", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  {
    await using raw = await Raw.open(server.port);
    await raw.write("GET /old HTTP/1.0\r\n\r\n");
    assert.ok(await raw.closedWithin(), raw.text);
    assert.match(raw.text, /^HTTP\/1\.1 200 [^]*GET \/old $/);
  }
  await using raw = await Raw.open(server.port);
  await raw.write("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  await raw.until(/GET \/a $/);
  assert.match(raw.text, /connection: keep-alive\r\n/i);
  await raw.write("GET /b HTTP/1.0\r\n\r\n");
  assert.ok(await raw.closedWithin(), raw.text);
  assert.deepEqual(statuses(raw.text), [200, 200]);
});

Deno.test("a chunked request body reaches the app whole, its extensions and trailers ignored", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  await using raw = await Raw.open(server.port);
  await raw.write("POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n");
  await sleep(30);
  await raw.write("6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n");
  await raw.until(/GET \/next $/);
  assert.match(raw.text, /POST \/c hello world/);
  assert.deepEqual(statuses(raw.text), [200, 200]);
  assert.equal(app.calls[0]!.headers.get("x-trailer"), null);
});

Deno.test("Expect: 100-continue gets 100 Continue before the body is sent", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  await using raw = await Raw.open(server.port);
  await raw.write("POST /e HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
  await raw.until(/\r\n\r\n/);
  assert.equal(raw.text, "HTTP/1.1 100 Continue\r\n\r\n");
  await raw.write("body");
  await raw.until(/POST \/e body$/);
  assert.deepEqual(statuses(raw.text), [100, 200]);
});

Deno.test("HEAD answers headers only, and the connection serves the next request", async () => {
  await using server = await disposable(
    listen(() =>
      new Response("twelve bytes", { headers: { "content-length": "12", "content-type": "text/plain" } })
    ),
  );
  await using raw = await Raw.open(server.port);
  await raw.write("HEAD / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
  await raw.until(/twelve bytes$/);
  const [head, get] = raw.text.split(/(?=HTTP\/1\.1 )/);
  assert.match(head!, /content-length: 12\r\n\r\n$/i);
  assert.match(get!, /content-length: 12\r\n\r\ntwelve bytes$/i);
});

Deno.test("pipelined requests are answered in order, a slow first one included", async () => {
  await using server = await disposable(listen(async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/slow") await sleep(100);
    return new Response(path);
  }));
  await using raw = await Raw.open(server.port);
  await raw.write(
    "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n" +
      "POST /fast HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi" +
      "GET /last HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
  );
  assert.ok(await raw.closedWithin(), raw.text);
  assert.deepEqual([...raw.text.matchAll(/\r\n\r\n(\/[a-z]+)/g)].map((m) => m[1]), [
    "/slow",
    "/fast",
    "/last",
  ]);
});

Deno.test("an event stream goes out chunked as events come; the client leaving aborts the request's signal", async () => {
  let signal: AbortSignal | undefined;
  let cancelled = false;
  let push: ((text: string) => void) | undefined;
  await using server = await disposable(listen((request) => {
    signal = request.signal;
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(encoder.encode(text));
        },
        cancel() {
          cancelled = true;
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  }));
  const raw = await Raw.open(server.port);
  await raw.write("GET /events HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n");
  await raw.until(/\r\n\r\n/);
  assert.match(raw.text, /transfer-encoding: chunked\r\n/i);
  push!("data: 1\n\n");
  await raw.until(/data: 1\n\n\r\n$/);
  push!("data: 2\n\n");
  await raw.until(/data: 2\n\n\r\n$/);
  assert.match(raw.text, /\r\n\r\n9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n$/);
  assert.equal(signal!.aborted, false);
  await raw[Symbol.asyncDispose]();
  for (let i = 0; i < 100 && !(signal!.aborted && cancelled); i++) await sleep(10);
  assert.equal(signal!.aborted, true, "the request's signal aborted");
  assert.equal(cancelled, true, "the response stream was cancelled");
});

Deno.test("a request head that stalls is 408 and closed after the head deadline", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch, { headersTimeoutMs: 200 }));
  await using raw = await Raw.open(server.port);
  const started = performance.now();
  await raw.write("GET / HTTP/1.1\r\nHost: a\r\n");
  assert.ok(await raw.closedWithin(3000), `still open: ${raw.text}`);
  assert.ok(performance.now() - started >= 150, "closed before the deadline");
  assert.deepEqual(statuses(raw.text), [408]);
  assert.equal(app.calls.length, 0);
});

Deno.test("a body that stalls while the app reads it is 408 and closed; the app's read fails and its signal aborts", async () => {
  let signal: AbortSignal | undefined;
  let failure: unknown;
  const { log, records } = recordingLogger();
  await using server = await disposable(listen(async (request) => {
    signal = request.signal;
    try {
      await request.text();
    } catch (error) {
      failure = error;
    }
    return new Response("too late");
  }, { bodyTimeoutMs: 200, log }));
  await using raw = await Raw.open(server.port);
  await raw.write('POST /slow?key=secret HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{"a":');
  assert.ok(await raw.closedWithin(3000), `still open: ${raw.text}`);
  assert.deepEqual(statuses(raw.text), [408]);
  assert.match(raw.text, /Request Timeout: the body did not arrive within 0.2 s/);
  assert.doesNotMatch(raw.text, /too late/);
  for (let i = 0; i < 50 && failure === undefined; i++) await sleep(10);
  assert.ok(failure instanceof Error, "the body read failed");
  assert.equal(signal?.aborted, true);
  const record = records.find((r) => r.msg === "request body timed out; connection closed");
  assert.equal(record?.path, "/slow");
});

Deno.test("a client that leaves mid-body fails the app's read and aborts the request's signal", async () => {
  let signal: AbortSignal | undefined;
  let failure: unknown;
  const done = Promise.withResolvers<void>();
  await using server = await disposable(listen(async (request) => {
    signal = request.signal;
    try {
      await request.text();
    } catch (error) {
      failure = error;
    }
    done.resolve();
    return new Response("nobody reads this");
  }));
  const raw = await Raw.open(server.port);
  await raw.write("POST /gone HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
  await sleep(50);
  await raw[Symbol.asyncDispose]();
  await Promise.race([done.promise, sleep(2000)]);
  assert.ok(failure instanceof Error, "the body read failed");
  assert.equal(signal?.aborted, true);
});

Deno.test("an idle keep-alive connection is closed after the idle deadline, a busy one is not", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch, { idleTimeoutMs: 300 }));
  await using idle = await Raw.open(server.port);
  await using busy = await Raw.open(server.port);
  for (let i = 0; i < 4; i++) {
    await busy.write(`GET /${i} HTTP/1.1\r\nHost: a\r\n\r\n`);
    await busy.until(new RegExp(`GET /${i} $`));
    await sleep(120);
  }
  assert.equal(busy.closed, false, "a connection with a request every 120 ms stays open");
  assert.ok(await idle.closedWithin(2000), "the idle connection was closed");
  assert.equal(idle.text, "", "silently");
});

Deno.test("a body left unread behind an early answer: a small one is dropped and the connection kept, a large one closes it", async () => {
  let calls = 0;
  await using server = await disposable(listen((request) => {
    calls++;
    return new Response(`early ${request.method}`, { status: 401 });
  }));
  await using raw = await Raw.open(server.port);
  await raw.write("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234");
  await raw.until(/early POST$/);
  await raw.write("56789GET /b HTTP/1.1\r\nHost: a\r\n\r\n");
  await raw.until(/early POST[^]*early \w+$/);
  assert.match(raw.text, /early GET$/, "the next request was read after the dropped body");
  assert.deepEqual(statuses(raw.text), [401, 401]);
  assert.equal(calls, 2);
  await raw.write(`POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\nxxx`);
  assert.ok(await raw.closedWithin(), raw.text);
  assert.match(
    raw.text.slice(raw.text.lastIndexOf("HTTP/1.1")),
    /^HTTP\/1\.1 401 [^]*connection: close\r\n/i,
  );
});

Deno.test("the app's body limit answers 413 through the listener, declared or chunked", async () => {
  const store = new MemoryStore();
  const log = quietLogger();
  const { app, close } = createApp({
    store,
    log,
    makeServer: () => createServer({ store, log, features: [PLAN_VIEW] }),
  });
  await using server = await disposable(listen(app.fetch));
  try {
    const headers = Object.entries({ ...MCP_HEADERS, host: `127.0.0.1:${server.port}` })
      .map(([k, v]) => `${k}: ${v}\r\n`).join("");
    {
      await using raw = await Raw.open(server.port);
      await raw.write(`POST /mcp HTTP/1.1\r\n${headers}Content-Length: ${2 * 1024 * 1024}\r\n\r\n{"a":`);
      await raw.until(/"message":"[^"]*"/);
      assert.deepEqual(statuses(raw.text), [413]);
    }
    await using raw = await Raw.open(server.port);
    await raw.write(`POST /mcp HTTP/1.1\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`);
    const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
    for (let i = 0; i < 20 && !/HTTP\/1\.1 /.test(raw.text) && !raw.closed; i++) {
      await raw.write(chunk).catch(() => {});
    }
    await raw.until(/"message":"[^"]*"/);
    assert.deepEqual(statuses(raw.text), [413]);
  } finally {
    await close();
  }
});

Deno.test("the app's exception is a 500 JSON-RPC error without its text, logged by path", async () => {
  const { log, records } = recordingLogger();
  await using server = await disposable(listen(() => {
    throw new Error("secret detail at /srv/app.ts:12");
  }, { log }));
  await using raw = await Raw.open(server.port);
  await raw.write("GET /boom?token=abc HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  await raw.closedWithin();
  assert.match(raw.text, /^HTTP\/1\.1 500 /);
  assert.match(
    raw.text,
    /\{"jsonrpc":"2\.0","id":null,"error":\{"code":-32603,"message":"Internal error"\}\}$/,
  );
  assert.doesNotMatch(raw.text, /secret detail/);
  const record = records.find((r) => r.msg === "http request failed");
  assert.equal(record?.path, "/boom");
  assert.doesNotMatch(JSON.stringify(records), /token=abc/);
});

Deno.test("onListen gets the real port when asked for port 0; shutdown ends open event streams", async () => {
  let reported: number | undefined;
  const never = new ReadableStream<Uint8Array>();
  const server = await listen(
    () => new Response(never, { headers: { "content-type": "text/event-stream" } }),
    {
      onListen: ({ port }) => (reported = port),
    },
  );
  assert.ok(server.port > 0);
  assert.equal(reported, server.port);
  await using raw = await Raw.open(server.port);
  await raw.write("GET /events HTTP/1.1\r\nHost: a\r\n\r\n");
  await raw.until(/\r\n\r\n/);
  const stopped = performance.now();
  await server.shutdown();
  await server.finished;
  assert.ok(await raw.closedWithin(2000), "the stream's connection was closed");
  assert.ok(performance.now() - stopped < 1500, "shutdown did not wait for the stream");
});

Deno.test("any split of pipelined requests on a real socket gets the same answers", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  const requests = [
    "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nfirst",
    "GET /b HTTP/1.1\r\nHost: a\r\n\r\n",
    "PUT /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nsec\r\n3;e\r\nond\r\n0\r\nT: 1\r\n\r\n",
    "POST /d HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 4\r\n\r\nlast",
  ];
  const bytes = encoder.encode(requests.join(""));
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 1, max: bytes.byteLength - 1 }), { maxLength: 12 }),
      async (cuts) => {
        await using raw = await Raw.open(server.port);
        let at = 0;
        for (const cut of [...cuts.sort((a, b) => a - b), bytes.byteLength]) {
          await raw.write(bytes.subarray(at, cut));
          await sleep(1);
          at = cut;
        }
        assert.ok(await raw.closedWithin(), raw.text);
        const bodies = raw.text.split(/HTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\n/).slice(1);
        assert.deepEqual(bodies, ["POST /a first", "GET /b ", "PUT /c second", "POST /d last"]);
      },
    ),
    { numRuns: fuzzRuns(25), seed: FUZZ_SEED },
  );
});

Deno.test("hostile bytes get an answer or a closed connection, never a crash; the next client is served", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch, { headersTimeoutMs: 300, bodyTimeoutMs: 300 }));
  const valid = encoder.encode(
    "POST /v HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nContent-Length: 5\r\n\r\nhello" +
      "GET /w HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
  );
  const hostile = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 300 }),
    // A valid stream with bytes overwritten, inserted or cut.
    fc.tuple(
      fc.array(fc.tuple(fc.nat(valid.byteLength - 1), fc.integer({ min: 0, max: 255 })), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.nat(valid.byteLength),
    ).map(([edits, cut]) => {
      const bytes = valid.slice(0, Math.max(1, cut));
      for (const [at, byte] of edits) bytes[at % bytes.byteLength] = byte;
      return bytes;
    }),
  );
  await fc.assert(
    fc.asyncProperty(hostile, async (bytes) => {
      {
        await using raw = await Raw.open(server.port);
        await raw.write(bytes).catch(() => {});
        await raw.until(() => false, 50);
        for (const status of statuses(raw.text)) {
          assert.ok([200, 400, 408, 414, 417, 431, 501, 505].includes(status));
        }
      }
      await using next = await Raw.open(server.port);
      await next.write("GET /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
      assert.ok(await next.closedWithin(), next.text);
      assert.match(next.text, /^HTTP\/1\.1 200 [^]*GET \/ok $/);
    }),
    { numRuns: fuzzRuns(60), seed: FUZZ_SEED },
  );
});

/** `listener` with `await using`: shut down at the end of the scope. */
async function disposable(
  listener: Promise<HttpListener>,
): Promise<HttpListener & AsyncDisposable> {
  const server = await listener;
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.shutdown() });
}

Deno.test("the app sees the method and target as sent, or the listener answers 400 or 501 and the app sees nothing", async () => {
  const seen: { method: string; url: string }[] = [];
  await using server = await disposable(listen((request) => {
    seen.push({ method: request.method, url: request.url });
    return new Response("ok");
  }));
  const method = fc.oneof(
    fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,7}$/),
    fc.constantFrom("GET", "get", "Post", "DELETE", "delete", "PATCH", "patch", "TRACE", "options"),
  );
  const part = fc.oneof(
    fc.constantFrom(
      "a",
      "/",
      ".",
      "..",
      "%2e",
      "%2E",
      "?",
      "=",
      "&",
      "%20",
      "%2F",
      "\\",
      "#",
      "'",
      '"',
      "{",
      "~",
    ),
    fc.stringMatching(/^[!-~]{1,3}$/),
  );
  const target = fc.array(part, { maxLength: 10 }).map((parts) => `/${parts.join("")}`);
  await fc.assert(
    fc.asyncProperty(method, target, async (method, target) => {
      seen.length = 0;
      await using raw = await Raw.open(server.port);
      await raw.write(`${method} ${target} HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n`);
      assert.ok(await raw.closedWithin(), raw.text);
      const [status] = statuses(raw.text);
      if (status === 200) {
        assert.equal(seen.length, 1);
        assert.equal(seen[0]!.method, method);
        assert.equal(seen[0]!.url, `http://app.example${target}`);
        const url = new URL(seen[0]!.url);
        assert.equal(
          `${url.pathname}${url.search}`,
          target.replace(/\?$/, ""),
          "the URL parsed gives the target",
        );
      } else {
        assert.ok(status === 400 || status === 501, raw.text);
        assert.equal(seen.length, 0, "a refused request never reaches the app");
      }
    }),
    { numRuns: fuzzRuns(80), seed: FUZZ_SEED },
  );
});

Deno.test("a method a web Request would change is 501 and never reaches the app: a lower-case delete ends nothing", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  for (const method of ["delete", "Delete", "get", "TRACE"]) {
    await using raw = await Raw.open(server.port);
    await raw.write(`${method} /mcp HTTP/1.1\r\nHost: a\r\nMcp-Session-Id: s\r\n\r\n`);
    assert.ok(await raw.closedWithin(), raw.text);
    assert.deepEqual(statuses(raw.text), [501], raw.text);
    assert.match(raw.text, /"message":"Not Implemented: /);
  }
  assert.equal(app.calls.length, 0);
});

Deno.test("an absolute-form target: the app's URL and Host header are the target's, not the Host sent", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  await using raw = await Raw.open(server.port);
  await raw.write("GET http://evil.example/mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  assert.ok(await raw.closedWithin(), raw.text);
  assert.deepEqual(statuses(raw.text), [200]);
  assert.equal(app.calls[0]!.url, "http://evil.example/mcp?x=1");
  assert.equal(app.calls[0]!.headers.get("host"), "evil.example");
});

Deno.test("HTTP/1.0 with Connection: close, keep-alive closes after its answer (close wins)", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  await using raw = await Raw.open(server.port);
  await raw.write("GET /a HTTP/1.0\r\nConnection: close, keep-alive\r\n\r\n");
  assert.ok(await raw.closedWithin(2000), `still open: ${raw.text}`);
  assert.match(raw.text, /^HTTP\/1\.1 200 [^]*connection: close\r\n/i);
});

Deno.test("empty lines before a request count against the head limit: 35,000 are 431 at once, not held to the deadline", async () => {
  const app = echo();
  await using server = await disposable(listen(app.fetch));
  await using raw = await Raw.open(server.port);
  const started = performance.now();
  await raw.write("\r\n".repeat(35_000)).catch(() => {});
  assert.ok(await raw.closedWithin(5000), "still open");
  assert.ok(performance.now() - started < 5000);
  assert.deepEqual(statuses(raw.text), [431], raw.text);
  assert.equal(app.calls.length, 0);
});

Deno.test("an idle keep-alive connection holds a small read buffer, whatever its last request was", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const connection = new Http1Connection(await listener.accept(), {
    fetch: async (request) => new Response(String((await request.bytes()).byteLength)),
    log: quietLogger(),
    mistake: () => {},
    bodyMs: 5000,
    headersMs: 5000,
    idleMs: 60_000,
    refusal: plainRefusal,
    date: () => "",
  });
  const served = connection.serve();
  try {
    await using raw = await Raw.attach(client);
    const body = "x".repeat(200_000);
    await raw.write(`POST /large HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await raw.until(/\r\n\r\n200000$/);
    assert.ok(
      connection.buf.byteLength <= 4096,
      `${connection.buf.byteLength} bytes held after a large body`,
    );
    await raw.write("GET /small HTTP/1.1\r\nHost: a\r\n\r\n");
    await raw.until(/\r\n\r\n0$/);
    assert.ok(
      connection.buf.byteLength <= 4096,
      `${connection.buf.byteLength} bytes held after a small request`,
    );
  } finally {
    connection.close();
    await served;
    listener.close();
  }
});
