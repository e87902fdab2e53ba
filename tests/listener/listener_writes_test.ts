/**
 * The `deno run` listener (lib/listener/serve.ts) on a real socket: how it writes answers (each socket
 * write costs more than its bytes, so a one-event answer goes out whole) and how it feeds request
 * bodies to the app.
 */
import assert from "node:assert/strict";
import { type HttpListener, serveHttp } from "../../lib/listener/serve.ts";
import { LISTENER_OPTIONS } from "../../lib/http/listener_options.ts";
import { quietLogger } from "../support/logs.ts";

const SSE = { "content-type": "text/event-stream" };
const encoder = new TextEncoder();

async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<HttpListener> {
  return await serveHttp({ hostname: "127.0.0.1", port: 0, fetch, log: quietLogger(), ...LISTENER_OPTIONS });
}

/** Sends `request` on a new connection; reads until the server closes it, or until `until` matches. */
async function exchange(port: number, request: string, until?: RegExp): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), 5000);
  let text = "";
  try {
    await conn.write(encoder.encode(request));
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(64 * 1024);
    while (!until?.test(text)) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // closed by the timer
    }
  }
  return text;
}

function post(port: number, body = "{}"): string {
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${encoder.encode(body).byteLength}\r\n\r\n${body}`;
}

Deno.test("an event stream that ends with its first event goes out whole, with a Content-Length", async () => {
  const event = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
  const server = await listen(() =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(encoder.encode(event));
          controller.close();
        },
      }),
      { headers: SSE },
    )
  );
  try {
    const reply = await exchange(server.port, post(server.port));
    assert.match(reply, /^HTTP\/1\.1 200 /);
    assert.match(reply, new RegExp(`\r\ncontent-length: ${encoder.encode(event).byteLength}\r\n`, "i"));
    assert.doesNotMatch(reply, /transfer-encoding/i);
    assert.ok(reply.endsWith(`\r\n\r\n${event}`), reply);
  } finally {
    await server.shutdown();
  }
});

Deno.test("an event stream whose events come apart is written as they come, every event kept", async () => {
  const server = await listen(() => {
    let sent = 0;
    return new Response(
      new ReadableStream({
        async pull(controller) {
          if (sent === 3) return controller.close();
          if (sent > 0) await new Promise((resolve) => setTimeout(resolve, 30));
          controller.enqueue(encoder.encode(`data: ${sent++}\n\n`));
        },
      }, { highWaterMark: 0 }),
      { headers: SSE },
    );
  });
  try {
    const reply = await exchange(server.port, post(server.port));
    assert.match(reply, /transfer-encoding: chunked/i);
    assert.deepEqual([...reply.matchAll(/data: (\d)/g)].map((m) => m[1]), ["0", "1", "2"]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a GET event stream sends its headers before its first event", async () => {
  const never = new ReadableStream<Uint8Array>();
  const server = await listen(() => new Response(never, { headers: SSE }));
  try {
    const request =
      `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAccept: text/event-stream\r\n\r\n`;
    const reply = await exchange(server.port, request, /\r\n\r\n/);
    assert.match(reply, /^HTTP\/1\.1 200 [^]*content-type: text\/event-stream[^]*\r\n\r\n$/i);
  } finally {
    await never.cancel().catch(() => {});
    await server.shutdown();
  }
});

Deno.test("a request body reaches the app whole, sent in pieces or large", async (t) => {
  const server = await listen(async (request) => {
    const bytes = new Uint8Array(await request.arrayBuffer());
    let sum = 0;
    for (const byte of bytes) sum = (sum + byte) % 65_521;
    return Response.json({ length: bytes.byteLength, sum });
  });
  const expected = (text: string) => {
    let sum = 0;
    for (const byte of encoder.encode(text)) sum = (sum + byte) % 65_521;
    return { length: encoder.encode(text).byteLength, sum };
  };
  try {
    await t.step("in pieces", async () => {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "ping",
        params: { pad: "é".repeat(200) },
      });
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
        `Content-Length: ${encoder.encode(body).byteLength}\r\n\r\n`;
      await conn.write(encoder.encode(head));
      const bytes = encoder.encode(body);
      for (let i = 0; i < bytes.byteLength; i += 100) {
        await conn.write(bytes.subarray(i, i + 100));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const reply = await new Response(conn.readable).text();
      assert.deepEqual(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)), expected(body));
    });
    await t.step("large (2 MB, past the stream's buffer)", async () => {
      const body = "x".repeat(2 * 1024 * 1024);
      const response = await fetch(`http://127.0.0.1:${server.port}/mcp`, { method: "POST", body });
      assert.deepEqual(await response.json(), expected(body));
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("headers reach the client as the app set them: each cookie on its own line, no length on a 204", async () => {
  const server = await listen((request) => {
    if (new URL(request.url).pathname === "/empty") return new Response(null, { status: 204 });
    const headers = new Headers({ "content-type": "text/plain", "x-one": "1" });
    headers.append("set-cookie", "a=1; Path=/");
    headers.append("set-cookie", "b=2; Path=/");
    return new Response("hello", { headers });
  });
  try {
    const reply = await exchange(
      server.port,
      `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    assert.match(reply, /^HTTP\/1\.1 200 /);
    assert.deepEqual([...reply.matchAll(/\r\nset-cookie: ([^\r]*)/gi)].map((m) => m[1]), [
      "a=1; Path=/",
      "b=2; Path=/",
    ]);
    assert.match(reply, /\r\nx-one: 1\r\n/i);
    assert.match(reply, /\r\ncontent-length: 5\r\n/i);
    assert.ok(reply.endsWith("\r\n\r\nhello"), reply);
    const empty = await exchange(
      server.port,
      `GET /empty HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    assert.match(empty, /^HTTP\/1\.1 204 /);
    assert.doesNotMatch(empty, /content-length|transfer-encoding/i);
  } finally {
    await server.shutdown();
  }
});
