/** The shared SSE reader: whole bodies and live streams give the same events, by the format's rules. */
import assert from "node:assert/strict";
import { jsonRpcMessages, readSse, sseEvents } from "./sse.ts";

const BODY = [
  ": a comment line",
  "event: message",
  "id: 1",
  'data: {"jsonrpc":"2.0",',
  'data: "id":1,"result":{}}',
  "",
  "id: 2",
  "data:",
  "",
  "event: update",
  "data:no space after the colon",
].join("\r\n");

const EVENTS = [
  { event: "message", id: "1", data: '{"jsonrpc":"2.0",\n"id":1,"result":{}}' },
  { event: "update", data: "no space after the colon" },
];

Deno.test("sseEvents joins data lines, skips comments and events without data, ends the last event at EOF", () => {
  assert.deepEqual(sseEvents(BODY), EVENTS);
});

Deno.test("readSse yields the same events from a stream cut at arbitrary points", async () => {
  const bytes = new TextEncoder().encode(BODY);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
      controller.close();
    },
  });
  const events = [];
  for await (const event of readSse(stream)) events.push(event);
  assert.deepEqual(events, EVENTS);
});

Deno.test("jsonRpcMessages reads a JSON body, a batch, an SSE body and an empty body", () => {
  const message = { jsonrpc: "2.0", id: 1, result: {} };
  assert.deepEqual(jsonRpcMessages(JSON.stringify(message), "application/json"), [message]);
  assert.deepEqual(jsonRpcMessages(JSON.stringify([message, message]), "application/json"), [
    message,
    message,
  ]);
  assert.deepEqual(jsonRpcMessages(`data: ${JSON.stringify(message)}\n\n`, "text/event-stream"), [message]);
  assert.deepEqual(jsonRpcMessages("", "text/event-stream"), []);
});
