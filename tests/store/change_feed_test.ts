/**
 * Every store's change feed (`watch`): a change made through the store, or through another store
 * object on the same place (as another process would), is reported; a stopped watch reports nothing.
 */
import assert from "node:assert/strict";
import { createTask } from "../../lib/domain/task_ops.ts";
import type { Store } from "../../lib/store/store.ts";
import { STORE_KINDS } from "../support/store_places.ts";

function changes(
  store: Store,
): { count: () => number; next: (ms?: number) => Promise<void>; stop: () => void } {
  let count = 0;
  let wake: (() => void) | undefined;
  const stop = store.watch(() => {
    count++;
    wake?.();
  });
  return {
    count: () => count,
    next: (ms = 2000) => {
      const before = count;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no change reported within ${ms} ms`)), ms);
        wake = () => {
          if (count > before) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
    },
    stop,
  };
}

function addTask(store: Store, name: string) {
  return store.space("default").updateTree("s", (tree) => createTask(tree, { name }));
}

for (const kind of STORE_KINDS) {
  Deno.test(`${kind.name} store: watch reports changes to tasks, works and progress until stopped`, async () => {
    const place = await kind.place();
    const store = await place.open();
    try {
      const feed = changes(store);
      let next = feed.next();
      await addTask(store, "one");
      await next;
      next = feed.next();
      await store.space("default").updateProgress("p", () => ({
        project: "p",
        content: { goal: "g" },
        revision: 1,
        updated_at: "2026-01-01T00:00:00Z",
      }));
      await next;
      feed.stop();
      const seen = feed.count();
      await addTask(store, "two");
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.equal(feed.count(), seen, "no report after stop");
    } finally {
      await store.close();
      await place.cleanup();
    }
  });

  if (kind.shared) {
    Deno.test(`${kind.name} store: watch reports a change made through another store on the same place`, async () => {
      const place = await kind.place();
      const watched = await place.open();
      const other = await place.open();
      try {
        await addTask(other, "first"); // the place exists before the watch starts
        const feed = changes(watched);
        await new Promise((resolve) => setTimeout(resolve, 100));
        const next = feed.next();
        const started = performance.now();
        await addTask(other, "from elsewhere");
        await next;
        assert.ok(performance.now() - started < 2000);
        feed.stop();
      } finally {
        await other.close();
        await watched.close();
        await place.cleanup();
      }
    });
  }
}
