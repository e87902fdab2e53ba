/**
 * Sweeping a KV session's unreachable task keys (sessions.ts): keys of removed tasks that did not fit
 * in the commit that removed them, and stale chunks found by a full load. Each delete commit checks
 * the session meta, so a sweep never deletes a live record.
 */
import { Commit } from "./commit.ts";
import type { KvLayout, KvPlace } from "./layout.ts";
import { AGAIN, retry, type RetryPolicy } from "./retry.ts";
import type { CachedSession } from "./session_load.ts";

/** A sweep of unreachable keys: a few rounds, then left to a later one (it fails harmlessly). */
const SWEEP: RetryPolicy = { attempts: 5, pauseMs: () => 0 };

/**
 * Deletes task keys that no longer belong to the tree, in commits that check the session meta: a
 * key is deleted only while the version at which it was judged unreachable is still current.
 */
export async function sweepUnreachable(
  place: KvPlace,
  current: (sessionId: string) => Promise<CachedSession | undefined>,
  sessionId: string,
  keys: Deno.KvKey[],
): Promise<void> {
  if (keys.length === 0) return;
  await retry(SWEEP, async () => {
    const session = await current(sessionId);
    if (!session) return;
    keys = keys.filter((key) => isGarbage(place.layout, session, key));
    let i = 0;
    for (let ok = true; ok && i < keys.length;) {
      const commit = new Commit().check(place.layout.meta(sessionId), session.versionstamp);
      const start = i;
      while (i < keys.length && commit.fitsDelete(keys[i]!)) commit.delete(keys[i++]!);
      ok = (await commit.commit(place.kv)) !== null;
      if (!ok) i = start;
    }
    keys = keys.slice(i);
    return keys.length === 0 ? undefined : AGAIN;
  }, () => new Error(`Session "${sessionId}" kept changing during a sweep; its garbage is swept later.`));
}

/** Whether `key` is still unreachable in `session` (of its generation, and no task's or past its chunks). */
function isGarbage(layout: KvLayout, session: CachedSession, key: Deno.KvKey): boolean {
  const { gen, id, chunk } = layout.taskOf(key);
  // Keys of another generation are swept with their generation.
  if (gen !== session.gen) return false;
  if (id !== "" && !session.tree.get(id)) return true;
  return chunk >= (session.chunks.get(id) ?? 1);
}
