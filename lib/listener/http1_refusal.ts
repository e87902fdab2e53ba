/**
 * Why the listener of `deno run` refuses a request (lib/listener/http1.ts, http1_target.ts, http1_chunked.ts):
 * the status it answers with and the reason it gives; the connection is closed after it. And the body
 * it answers with, which the app may choose (lib/listener/serve.ts `refusal`).
 */

/** Why a request is refused, with the status to answer (the connection closes after it). */
export interface Refusal {
  status: number;
  reason: string;
}

/** The body of an answer the listener gives itself: its media type and its text. */
export interface RefusalAnswer {
  type: string;
  text: string;
}

/** Writes the body of an answer the listener gives itself, from its status and message. */
export type RefusalBody = (status: number, message: string) => RefusalAnswer;

/** The listener's own refusal body: the message as plain text (an app that wants another passes its own). */
export function plainRefusal(_status: number, message: string): RefusalAnswer {
  return { type: "text/plain; charset=utf-8", text: message };
}
