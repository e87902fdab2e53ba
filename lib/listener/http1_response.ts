/**
 * The head of an HTTP/1.1 response as the listener of `deno run` writes it (lib/listener/serve.ts): the
 * status line, the app's headers without the framing ones the listener decides, and a buffer of head
 * and body for one socket write. Pure.
 */

/** Reason phrases of the statuses this server sends. */
const REASONS: Record<number, string> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

/** The reason phrase of `status` (`Not Found`), empty for a status this server does not send. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? "";
}

/** The status line of `status`, with its CRLF. */
export function statusLine(status: number): string {
  return `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n`;
}

/**
 * The header lines of a response (each with its CRLF) as the app set them, without the framing
 * and connection headers the listener writes itself; each cookie on its own line.
 */
export function headerLines(headers: Headers): string {
  let lines = "";
  // forEach, not for…of: the iterator's machinery costs several times the copying.
  headers.forEach((value, name) => {
    if (!FRAMING.has(name)) lines += `${name}: ${value}\r\n`;
  });
  if (headers.has("set-cookie")) {
    for (const cookie of headers.getSetCookie()) lines += `set-cookie: ${cookie}\r\n`;
  }
  return lines;
}

/** Headers the listener decides (hop by hop, or the body's framing), never copied from the app. */
const FRAMING = new Set(["set-cookie", "content-length", "transfer-encoding", "connection", "keep-alive"]);

/** Statuses whose responses carry no body and no length. */
export const NO_BODY_STATUS: ReadonlySet<number> = new Set([101, 103, 204, 304]);

const encoder = new TextEncoder();

/**
 * `head` (a string of single-byte characters) and `body` in one buffer, for one socket write.
 * Header values are byte strings: a character above U+007F is its own byte, not UTF-8.
 */
export function encodeMessage(head: string, body?: Uint8Array): Uint8Array {
  const size = body?.byteLength ?? 0;
  const out = new Uint8Array(head.length + size);
  const { read, written } = encoder.encodeInto(head, out);
  if (read !== head.length || written !== head.length) {
    for (let i = 0; i < head.length; i++) out[i] = head.charCodeAt(i) & 0xff;
  }
  if (body) out.set(body, head.length);
  return out;
}

const CRLF = new Uint8Array([13, 10]);

/** A chunk of a chunked body: size line, data, CRLF, in one buffer (one socket write). */
export function chunkOf(data: Uint8Array): Uint8Array {
  const size = `${data.byteLength.toString(16)}\r\n`;
  const out = new Uint8Array(size.length + data.byteLength + 2);
  for (let i = 0; i < size.length; i++) out[i] = size.charCodeAt(i);
  out.set(data, size.length);
  out.set(CRLF, size.length + data.byteLength);
  return out;
}
