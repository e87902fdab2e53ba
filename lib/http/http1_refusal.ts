/**
 * Why the listener of `deno run` refuses a request (lib/http/http1.ts, http1_target.ts, http1_chunked.ts):
 * the status it answers with and the reason it gives; the connection is closed after it.
 */

/** Why a request is refused, with the status to answer (the connection closes after it). */
export interface Refusal {
  status: number;
  reason: string;
}
