/**
 * `subscriptions/listen` streams as a raw 2026-07-28 client opens them over the network (no SDK
 * client): the request, and its reply read as it arrives, each message with the time it came.
 */
import { modernRequest } from "./http.ts";
import { jsonRpcMessages, readSse } from "./sse.ts";

/** One message a stream delivered, and when (`Date.now()`). */
export interface Heard {
  message: Record<string, unknown>;
  at: number;
}

/** A listen request's reply, followed as it arrives. */
export interface ListenStream {
  status: number;
  /** Whether the reply is a stream (`text/event-stream`) rather than one JSON answer. */
  streaming: boolean;
  /** Every message so far, in order (for a JSON answer: that answer). */
  heard: Heard[];
  /** Settles when the reply has ended (or failed); `endedAt` is set then. */
  ended: Promise<void>;
  endedAt?: number;
  /** Ends it from the client's side. */
  cancel(): Promise<void>;
}

/**
 * POSTs `subscriptions/listen` with `notifications` to `url` (a server's `/mcp` or `/mcp/NAME`) and
 * follows the reply.
 */
export async function openListen(
  url: string,
  notifications: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<ListenStream> {
  const request = modernRequest("subscriptions/listen", { notifications }, { id: 7 });
  const controller = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: { ...request.headers, ...headers },
    body: request.body,
    signal: controller.signal,
  });
  const type = response.headers.get("content-type") ?? "";
  const stream: ListenStream = {
    status: response.status,
    streaming: type.startsWith("text/event-stream"),
    heard: [],
    ended: Promise.resolve(),
    cancel: async () => {
      controller.abort();
      await stream.ended;
    },
  };
  stream.ended = (async () => {
    try {
      if (!stream.streaming) {
        for (const message of jsonRpcMessages(await response.text(), type)) {
          stream.heard.push({ message, at: Date.now() });
        }
        return;
      }
      for await (const event of readSse(response.body!)) {
        stream.heard.push({ message: JSON.parse(event.data), at: Date.now() });
      }
    } catch {
      // Cut off, or cancelled: it has ended all the same.
    } finally {
      stream.endedAt = Date.now();
    }
  })();
  return stream;
}

/** Whether a stream has been acknowledged (its first message), i.e. it opened. */
export function acknowledged(stream: ListenStream): boolean {
  return stream.heard[0]?.message.method === "notifications/subscriptions/acknowledged";
}

/** A listen request written by hand on its own socket, its body held back until {@link sendBody}. */
export interface HeldListen extends AsyncDisposable {
  /** Sends the body: until then the server has the request's head only (and has checked its credential). */
  sendBody(): Promise<void>;
  /** What came back, as it came (one character per byte), with when. */
  received: { text: string; at: number }[];
  close(): void;
}

/**
 * Opens a connection to 127.0.0.1:`port` and writes the head of a `subscriptions/listen` POST to
 * `/mcp` with `headers`; reads whatever comes back from then on.
 */
export async function holdListen(
  port: number,
  notifications: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<HeldListen> {
  const request = modernRequest("subscriptions/listen", { notifications }, { id: 7 });
  const body = new TextEncoder().encode(request.body);
  const head = Object.entries({ ...request.headers, ...headers, host: `127.0.0.1:${port}` })
    .map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const write = async (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.byteLength;) at += await conn.write(bytes.subarray(at));
  };
  await write(
    new TextEncoder().encode(`POST /mcp HTTP/1.1\r\n${head}content-length: ${body.byteLength}\r\n\r\n`),
  );
  const received: { text: string; at: number }[] = [];
  const reading = (async () => {
    const buffer = new Uint8Array(64 * 1024);
    const decoder = new TextDecoder("latin1");
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) return;
        received.push({ text: decoder.decode(buffer.subarray(0, n)), at: Date.now() });
      }
    } catch {
      // Closed by us, or reset.
    }
  })();
  const close = () => {
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  };
  return {
    sendBody: () => write(body),
    received,
    close,
    [Symbol.asyncDispose]: async () => {
      close();
      await reading;
    },
  };
}
