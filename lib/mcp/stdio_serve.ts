/**
 * Our server over stdio: the SDK's `serveStdio` picks the era from the connection's first message
 * and carries the protocol (both eras on one process); stdio_transport.ts frames the lines; and a
 * {@link ResourceWatch} feeds the connection's 2026-07-28 `subscriptions/listen` streams, so a lead
 * hears every change that any process on the same store makes to the resources it listens to.
 *
 * The SDK routes a served instance's `sendResourceUpdated()` and `sendResourceListChanged()` onto the
 * listen streams that asked for them; which resources the streams want is read off the listen
 * requests as they pass the transport (and given back when the client cancels one, or leaves).
 */
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import { listenInterest, ResourceWatch } from "./resource_watch.ts";
import { type JSONRPCMessage, type Server, serveStdio } from "./sdk.ts";
import type { Era } from "./server.ts";
import { StdioTransport } from "./stdio_transport.ts";

/** Options of {@link serveOverStdio}. */
export interface StdioServeOptions {
  /** Makes the server of the connection for the era its first message opens. */
  makeServer: (era: Era) => Server;
  store: Store;
  namespace: string;
  workCacheSize: number;
  log: Logger;
  /** A failure of the input (reported once the input has ended). */
  onerror?: (error: Error) => void;
}

/** A served stdio connection. */
export interface StdioServing {
  /** Settles when the input has ended and every request read has been answered. */
  closed: Promise<void>;
  /** Tears the connection down. */
  close(): Promise<void>;
}

/** See the module doc. */
export function serveOverStdio(options: StdioServeOptions): StdioServing {
  const { store, log } = options;
  let served: Server | undefined;
  const watch = new ResourceWatch({
    store,
    namespace: options.namespace,
    emit: (event) => {
      const sent = event.kind === "resource_updated"
        ? served?.sendResourceUpdated({ uri: event.uri })
        : served?.sendResourceListChanged();
      Promise.resolve(sent).catch((error) => log.debug("listen: a notification was not sent", { error }));
    },
    workCacheSize: options.workCacheSize,
    log,
  });
  const listening = new Map<string | number, Promise<() => void>>();
  // A listen request waits until what it listens to has been read (its versions before any change
  // the acknowledgement might precede); nothing else waits.
  const observe = (message: JSONRPCMessage): Promise<unknown> | undefined => {
    const m = message as { id?: string | number; method?: string; params?: Record<string, unknown> };
    if (m.method === "subscriptions/listen" && m.id !== undefined) {
      const wanted = watch.want(listenInterest(m.params));
      listening.set(m.id, wanted);
      return wanted;
    } else if (m.method === "notifications/cancelled") {
      const id = m.params?.requestId as string | number | undefined;
      const held = id === undefined ? undefined : listening.get(id);
      if (held) {
        listening.delete(id!);
        held.then((release) => release());
      }
    }
    return undefined;
  };
  const transport = new StdioTransport({ log, observe });
  const handle = serveStdio(({ era }) => {
    const server = options.makeServer(era);
    if (era === "modern") served = server;
    return server;
  }, { transport, legacy: "serve", onerror: options.onerror });
  const closed = transport.closed.then(() => watch.close());
  return {
    closed,
    close: async () => {
      watch.close();
      await handle.close().catch(() => {});
    },
  };
}
