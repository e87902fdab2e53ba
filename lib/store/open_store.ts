/** Picks and opens the configured store: JSON file, Deno KV, or memory. */
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { guardStore } from "./guarded_store.ts";
import { MemoryStore } from "./memory_store.ts";
import type { Store } from "./store.ts";

/** Options of {@link openStore} besides the configuration. */
export interface OpenStoreOptions {
  /** Running on Deno Deploy (`DENO_DEPLOYMENT_ID` set): without FILE_PATH or KV_PATH, use the default KV. */
  onDeploy?: boolean;
}

/**
 * Opens the store the configuration names: `FILE_PATH`, else `KV_PATH`, else on Deno Deploy its
 * default KV, else memory. Throws `StoreOpenError` with the place and the problem. The store's own
 * failures afterwards are `STORE_UNAVAILABLE` (guarded_store.ts).
 */
export async function openStore(
  config: Pick<Config, "filePath" | "kvPath"> & Partial<Pick<Config, "historySize">>,
  log: Logger,
  options: OpenStoreOptions = { onDeploy: Deno.env.get("DENO_DEPLOYMENT_ID") !== undefined },
): Promise<Store> {
  if (config.filePath) {
    const { JsonFileStore } = await import("./json_file_store.ts");
    const store = await JsonFileStore.open(config.filePath, {
      historySize: config.historySize,
      onRepair: (message) =>
        log.warn("repaired tree loaded from file", { file: config.filePath, repair: message }),
      onConvert: (original) =>
        log.warn("converted a task-orchestrator file to the store format", {
          file: config.filePath,
          original,
        }),
    });
    log.info("store opened", { store: "file", file: config.filePath });
    return guardStore(store, log);
  }
  if (config.kvPath || options.onDeploy) {
    const [{ KvStore }, { LEASE_MS }] = await Promise.all([
      import("./kv/kv_store.ts"),
      import("./kv/liveness.ts"),
    ]);
    const kv = config.kvPath ?? "(Deno Deploy default)";
    const store = await KvStore.open(config.kvPath, {
      historySize: config.historySize,
      onRepair: (message) => log.warn("repaired names loaded from Deno KV", { kv, repair: message }),
      onBusy: (error) =>
        log.warn("Deno KV is busy (another process holds it); waiting to open it", { kv, error }),
      onSweep: ({ deleted, kept, error }) => {
        if (error !== undefined) {
          log.warn("cannot reclaim what interrupted writes left; trying again after the next change", {
            kv,
            keysDeleted: deleted,
            error,
          });
        } else if (kept > 0) {
          log.warn(
            "cannot reclaim yet what writers that may still run staged; trying again once their leases run out",
            {
              kv,
              keysDeleted: deleted,
              writesKept: kept,
              inSeconds: Math.ceil(LEASE_MS / 1000) + 1,
            },
          );
        } else if (deleted > 0) {
          log.info("reclaimed what interrupted writes left", { kv, keysDeleted: deleted });
        }
      },
    });
    log.info("store opened", { store: "kv", kv });
    return guardStore(store, log);
  }
  log.info("store opened", { store: "memory" });
  return new MemoryStore({ historySize: config.historySize });
}
