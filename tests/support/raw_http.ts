/**
 * HTTP/1.1 by hand on a real socket, for the listener's tests and benchmark: bytes written exactly as
 * given (no client library fixes them up), what comes back read as text, and whether the server closed.
 */
import { sleep } from "./time.ts";

const encoder = new TextEncoder();

/** A raw client connection: writes bytes, reads what comes back. */
export class Raw implements AsyncDisposable {
  text = "";
  closed = false;
  #conn: Deno.TcpConn;
  #reading: Promise<void>;
  #changed: (() => void) | undefined;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
    this.#reading = this.#read();
  }

  /** Connects to 127.0.0.1:`port`; every write goes out at once (no Nagle delay). */
  static async open(port: number): Promise<Raw> {
    return Raw.attach(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Reads and writes `conn`, a connection opened elsewhere. */
  static attach(conn: Deno.TcpConn): Raw {
    conn.setNoDelay(true);
    return new Raw(conn);
  }

  async write(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    for (let at = 0; at < bytes.byteLength;) at += await this.#conn.write(bytes.subarray(at));
  }

  /** Waits until the text received matches `pattern` (or the server closes, or `ms` pass). */
  async until(pattern: RegExp | ((text: string) => boolean), ms = 5000): Promise<string> {
    const test = typeof pattern === "function" ? pattern : (text: string) => pattern.test(text);
    const deadline = performance.now() + ms;
    while (!test(this.text) && !this.closed && performance.now() < deadline) {
      await Promise.race([
        new Promise<void>((resolve) => (this.#changed = resolve)),
        sleep(Math.max(1, deadline - performance.now())),
      ]);
    }
    return this.text;
  }

  /** Waits for the server to close the connection; true when it did within `ms`. */
  async closedWithin(ms = 5000): Promise<boolean> {
    await this.until(() => false, ms);
    return this.closed;
  }

  close(): void {
    try {
      this.#conn.close();
    } catch {
      // closed already
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
    await this.#reading;
  }

  async #read(): Promise<void> {
    // One character per byte: a response's head is bytes, and a test may look at any of them.
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await this.#conn.read(buffer);
        if (n === null) break;
        this.text += latin1(buffer.subarray(0, n));
        this.#changed?.();
      }
    } catch {
      // closed by us, or reset
    }
    this.closed = true;
    this.#changed?.();
  }
}

function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.byteLength; i += 4096) {
    text += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.byteLength, i + 4096)));
  }
  return text;
}

/** The status codes of the responses in `text`, in order. */
export function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
}

/** What one request written by hand got: the bytes back, and whether the server closed within the wait. */
export interface Exchange {
  text: string;
  closed: boolean;
}

/**
 * Writes `bytes` on a new connection to `port` and reads until the server closes it, or until `ms` pass
 * (then `closed` is false), or until `done` says the text is complete.
 */
export async function exchange(
  port: number,
  bytes: string | Uint8Array,
  options: { ms?: number; done?: (text: string) => boolean } = {},
): Promise<Exchange> {
  await using raw = await Raw.open(port);
  await raw.write(bytes).catch(() => {});
  await raw.until(options.done ?? (() => false), options.ms ?? 5000);
  return { text: raw.text, closed: raw.closed };
}
