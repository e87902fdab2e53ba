/**
 * Reading server-sent events: a whole body at once or a live stream as it arrives, and the JSON-RPC
 * messages of an MCP reply (a JSON body, or one message per SSE event). One parser serves all three.
 */
import { lines } from "./streams.ts";

/** One event: its type (`message` unless named), its `id` when given, and its data lines joined by `\n`. */
export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/** Folds lines into events as the format says: `field: value`, a blank line ends an event, `:` is a comment. */
class SseParser {
  #event = "message";
  #id: string | undefined;
  #data: string[] = [];

  /** Takes one line; returns the event it completes, if any. */
  push(line: string): SseEvent | undefined {
    if (line === "") return this.end();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id") this.#id = value;
    return undefined;
  }

  /** Ends the event in progress (blank line or end of input); events without data are not dispatched. */
  end(): SseEvent | undefined {
    const data = this.#data.join("\n");
    const event: SseEvent = { event: this.#event, data, ...(this.#id === undefined ? {} : { id: this.#id }) };
    this.#event = "message";
    this.#id = undefined;
    this.#data = [];
    return data === "" ? undefined : event;
  }
}

/** The events of a complete SSE body. */
export function sseEvents(text: string): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    const event = parser.push(line);
    if (event) events.push(event);
  }
  const last = parser.end();
  return last ? [...events, last] : events;
}

/** The events of a live SSE stream, each as soon as its blank line arrives. */
export async function* readSse(stream: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const line of lines(stream)) {
    const event = parser.push(line.endsWith("\r") ? line.slice(0, -1) : line);
    if (event) yield event;
  }
  const last = parser.end();
  if (last) yield last;
}

/** The JSON-RPC messages of a reply body: each SSE event's data, or the JSON (one message or a batch). */
export function jsonRpcMessages(text: string, contentType: string): Record<string, unknown>[] {
  if (text === "") return [];
  if (contentType.includes("text/event-stream")) {
    return sseEvents(text).filter((e) => e.data.trim() !== "").map((e) => JSON.parse(e.data));
  }
  const parsed = JSON.parse(text);
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** The JSON-RPC messages of a reply (reads its body). */
export async function messagesOf(response: Response): Promise<Record<string, unknown>[]> {
  return jsonRpcMessages(await response.text(), response.headers.get("content-type") ?? "");
}
