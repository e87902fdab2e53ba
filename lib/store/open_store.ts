/** Picks and opens the configured store: JSON file, Deno KV, or memory. */
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Store } from "./store.ts";

/** Opens the store the configuration names; throws `StoreOpenError` with the place and the problem. */
export async function openStore(config: Pick<Config, "filePath" | "kvPath">, log: Logger): Promise<Store> {
  if (config.filePath) {
    const { JsonFileStore } = await import("./json_file_store.ts");
    const store = await JsonFileStore.open(config.filePath, {
      onRepair: (message) =>
        log.warn("repaired tree loaded from file", { file: config.filePath, repair: message }),
    });
    log.info("store opened", { store: "file", file: config.filePath });
    return store;
  }
  if (config.kvPath) {
    throw new Error("KV_PATH is not supported yet: unset it, or use FILE_PATH");
  }
  const { MemoryStore } = await import("./memory_store.ts");
  log.info("store opened", { store: "memory" });
  return new MemoryStore();
}
