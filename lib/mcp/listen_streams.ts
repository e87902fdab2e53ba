/**
 * The 2026-07-28 `subscriptions/listen` streams over HTTP (docs/protocol.md "Protocol eras"): each is served
 * by the SDK handler of its namespace, whose event bus that namespace's {@link ResourceWatch} feeds,
 * so a stream hears only its own namespace.
 *
 * A stream has a life of two parts: **pending** from its admission until the SDK's response is in
 * hand (the watch reads what it listens to, the SDK builds its stream), then **open**. Both count:
 *
 * - In its credential's fair share of event streams, the dashboard's included
 *   (lib/auth/stream_shares.ts), from admission on, before anything is awaited: two requests arriving
 *   together cannot both take the last place. A stream the quota (or a revocation, or its token's
 *   expiry) ends while pending never opens: its request is answered with an error saying why.
 * - In the URIs its credential names (`LIMITS.listenUris` per stream,
 *   `LIMITS.listenUrisPerCredential` in all), refused past either with a JSON-RPC error naming the
 *   limit, before anything is read.
 * - In what revocation looks at: {@link ListenStreams.size} and {@link ListenStreams.endWhere} see
 *   pending streams too, and a stream whose credential was revoked meanwhile is ended when it opens.
 *
 * A namespace's handler and watch exist while it has a stream, pending or open, and are closed with
 * its last one: never while a stream is in flight, and never more of them than streams.
 *
 * An open stream's body is relayed (stream_relay.ts): a client that reads too slowly to keep up
 * (`LIMITS.listenQueueBytes` queued) is ended as a slow reader, with one log line.
 */
import { atExpiry } from "../auth/expiry.ts";
import type { Caller, Credential } from "../auth/credential.ts";
import type { StreamShares } from "../auth/stream_shares.ts";
import { LIMITS } from "../domain/limits.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import { listenInterest, type ResourceEvent, ResourceWatch } from "./resource_watch.ts";
import { errorReply, SERVER_ERROR } from "./rpc_errors.ts";
import {
  type AuthInfo,
  createMcpHandler,
  type McpHttpHandler,
  ProtocolErrorCode,
  type Server,
} from "./sdk.ts";
import { relay, type RelayEnd } from "./stream_relay.ts";

/** Options of {@link ListenStreams}. */
export interface ListenStreamsOptions {
  /** Makes the 2026-07-28 server of one request, from the caller the SDK passes through. */
  makeServer: (authInfo: AuthInfo | undefined) => Server;
  store: Store;
  /** Capacity of the work-info LRU (what the listing shows). */
  workCacheSize: number;
  log: Logger;
  /**
   * Where streams take their places, beside the dashboard's; without it they are not limited beyond
   * the SDK's own cap.
   */
  shares?: StreamShares;
  /** Whether a credential has been revoked since it was checked (a stream opening for it is ended). */
  revoked?: (credential: Credential) => boolean;
  /** Called when a stream is admitted (pending): revocation watches it from then on. */
  onAdmit?: () => void;
}

/** Why a stream ended, for the log and for a pending stream's answer. */
type EndReason = "quota" | "revoked" | "expired" | "slow" | "shutdown";

/** One stream, pending or open. */
interface Stream {
  caller: Caller;
  /** URIs it names (`resourceSubscriptions`). */
  uris: number;
  /** Set once it has ended (or must: a pending stream then never opens). */
  ended?: EndReason;
  /** Ends its body; set once it is open. */
  close?: (how: RelayEnd) => void;
}

/** A namespace's handler and watch, and how many streams (pending or open) use them. */
interface Place {
  handler: McpHttpHandler;
  watch: ResourceWatch;
  streams: number;
}

/** What a pending stream that was ended is answered with. */
const ENDED_BEFORE_OPEN: Record<EndReason, string> = {
  quota: "Stream ended before it opened: the credential opened more listen streams than its fair share " +
    "(its newest are kept); close some first",
  revoked: "Stream ended before it opened: the credential was revoked",
  expired: "Stream ended before it opened: the token expired; sign in again",
  slow: "Stream ended: the client did not read it",
  shutdown: "Stream ended before it opened: the server is stopping",
};

/** See the module doc. */
export class ListenStreams {
  readonly #options: ListenStreamsOptions;
  readonly #places = new Map<string, Place>();
  readonly #streams = new Set<Stream>();
  #closed = false;

  constructor(options: ListenStreamsOptions) {
    this.#options = options;
  }

  /** Streams now, pending or open. */
  get size(): number {
    return this.#streams.size;
  }

  /** Answers a `subscriptions/listen` request (`body` parsed) of `caller`: a stream, or why not. */
  async answer(request: Request, body: unknown, caller: Caller, authInfo: AuthInfo): Promise<Response> {
    const { log, shares } = this.#options;
    const id = requestId(body);
    const interest = listenInterest((body as { params?: unknown }).params);
    const uris = interest.uris?.length ?? 0;
    const refusal = this.#uriRefusal(caller, uris);
    if (refusal) {
      log.warn("listen stream refused: too many resources", { credential: caller.credential.name, uris });
      return Response.json(errorReply(ProtocolErrorCode.InvalidParams, refusal, id));
    }
    const stream: Stream = { caller, uris };
    const release = this.#closed
      ? undefined
      : shares
      ? shares.admit(caller.credential, () => this.#end(stream, "quota"))
      : noop;
    if (!release) {
      return Response.json(
        errorReply(SERVER_ERROR, "Service Unavailable: too many open event streams; try again shortly", id),
        { status: 503, headers: { "Retry-After": "5" } },
      );
    }
    this.#streams.add(stream);
    const place = this.#enter(caller.namespace);
    let unwant = noop;
    let cancelExpiry = noop;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      cancelExpiry();
      unwant();
      release();
      this.#streams.delete(stream);
      this.#leave(caller.namespace, place);
    };
    this.#options.onAdmit?.();
    try {
      unwant = await place.watch.want(interest);
      if (!this.#stillWanted(stream)) return this.#endedBeforeOpen(stream, id, leave);
      const response = await place.handler.fetch(request, { parsedBody: body, authInfo });
      if (!response.body || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        leave(); // refused by the SDK (a malformed filter): nothing opened
        return response;
      }
      if (!this.#stillWanted(stream)) {
        await response.body.cancel().catch(() => {});
        return this.#endedBeforeOpen(stream, id, leave);
      }
      const relayed = relay(response.body, {
        maxQueuedBytes: LIMITS.listenQueueBytes,
        onSlow: (queuedBytes) => {
          stream.ended ??= "slow";
          log.warn("listen stream ended: its client reads too slowly", {
            credential: caller.credential.name,
            namespace: caller.namespace,
            queuedBytes,
            limitBytes: LIMITS.listenQueueBytes,
          });
        },
        onDone: leave,
      });
      stream.close = relayed.end;
      const expiresAt = caller.credential.expiresAt;
      if (expiresAt !== undefined) {
        cancelExpiry = atExpiry(expiresAt, () => {
          log.info("listen stream ended: its token expired", { credential: caller.credential.name });
          this.#end(stream, "expired");
        });
      }
      log.debug("listen stream opened", {
        credential: caller.credential.name,
        namespace: caller.namespace,
        open: this.#openOf(caller.credential),
      });
      return new Response(relayed.body, { status: response.status, headers: response.headers });
    } catch (error) {
      leave();
      throw error;
    }
  }

  /** Ends every stream, pending or open, whose credential `refused` names; returns how many. */
  endWhere(refused: (credential: Credential) => boolean): number {
    let ended = 0;
    for (const stream of [...this.#streams]) {
      if (stream.ended !== undefined || !refused(stream.caller.credential)) continue;
      this.#options.log.warn("listen stream ended: its credential was revoked", {
        credential: stream.caller.credential.name,
        pending: stream.close === undefined,
      });
      this.#end(stream, "revoked");
      ended++;
    }
    return ended;
  }

  /** Ends every stream and closes every handler (at shutdown); later requests are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const stream of [...this.#streams]) this.#end(stream, "shutdown");
    const places = [...this.#places.values()];
    this.#places.clear();
    await Promise.all(places.map(({ handler, watch }) => {
      watch.close();
      return handler.close().catch(() => {});
    }));
  }

  /** Why `uris` more URIs are refused to `caller` (a message naming the limit), or undefined. */
  #uriRefusal(caller: Caller, uris: number): string | undefined {
    if (uris > LIMITS.listenUris) {
      return `Limit exceeded: a listen stream names at most ${LIMITS.listenUris} resources ` +
        `(listenUris); this one names ${uris}. Subscribe to fewer, or split them over several streams.`;
    }
    let held = 0;
    for (const s of this.#streams) {
      if (s.ended === undefined && s.caller.credential.name === caller.credential.name) held += s.uris;
    }
    if (held + uris > LIMITS.listenUrisPerCredential) {
      return `Limit exceeded: one credential's listen streams name at most ${LIMITS.listenUrisPerCredential} ` +
        `resources in all (listenUrisPerCredential); its open streams name ${held} and this one ${uris}. ` +
        "Close a stream first.";
    }
    return undefined;
  }

  /** Whether a stream not yet open may still open: not ended, and its credential not revoked meanwhile. */
  #stillWanted(stream: Stream): boolean {
    if (stream.ended === undefined && this.#options.revoked?.(stream.caller.credential)) {
      this.#options.log.warn("listen stream ended: its credential was revoked", {
        credential: stream.caller.credential.name,
        pending: true,
      });
      stream.ended = "revoked";
    }
    return stream.ended === undefined;
  }

  #endedBeforeOpen(stream: Stream, id: string | number | null, leave: () => void): Response {
    leave();
    // In-band (HTTP 200), as the SDK answers a listen request it refuses; 503 at shutdown.
    const status = stream.ended === "shutdown" ? 503 : 200;
    return Response.json(errorReply(SERVER_ERROR, ENDED_BEFORE_OPEN[stream.ended ?? "quota"], id), {
      status,
    });
  }

  /** Ends a stream: an open one now, a pending one when it would open. */
  #end(stream: Stream, why: EndReason): void {
    if (stream.ended !== undefined) return;
    stream.ended = why;
    // Revoked or expired: what is queued for the client is dropped too; otherwise it is delivered.
    stream.close?.(why === "revoked" || why === "expired" ? "abort" : "close");
  }

  /** Open streams of `credential` now (for the log). */
  #openOf(credential: Credential): number {
    let open = 0;
    for (const s of this.#streams) {
      if (s.ended === undefined && s.close !== undefined && s.caller.credential.name === credential.name) {
        open++;
      }
    }
    return open;
  }

  /** The namespace's place, made on first use; counts one more stream in it. */
  #enter(namespace: string): Place {
    let place = this.#places.get(namespace);
    if (!place) {
      const { makeServer, store, log, workCacheSize } = this.#options;
      const handler = createMcpHandler(({ authInfo }) => makeServer(authInfo), {
        legacy: "reject",
        onerror: (error) => log.debug("listen request refused", { error: error.message }),
      });
      const watch = new ResourceWatch({
        store,
        namespace,
        emit: (event: ResourceEvent) => handler.bus.publish(event),
        workCacheSize,
        log,
      });
      place = { handler, watch, streams: 0 };
      this.#places.set(namespace, place);
    }
    place.streams++;
    return place;
  }

  /** One stream fewer in the namespace; with its last, its handler and watch are closed. */
  #leave(namespace: string, place: Place): void {
    if (--place.streams > 0) return;
    if (this.#places.get(namespace) === place) this.#places.delete(namespace);
    place.watch.close();
    place.handler.close().catch(() => {});
  }
}

function noop(): void {}

/** The request's JSON-RPC id, when it has a usable one. */
function requestId(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}
