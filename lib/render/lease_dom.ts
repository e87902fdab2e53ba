/// <reference lib="dom" />
/**
 * Keeps lease times honest on a page that stays open: every claim drawn by render.ts (an element with
 * `data-expires`) is judged again against the viewer's clock, marked `stale` once its lease has ended,
 * and its `time.lease` says what is left; what is shown only while a lease is live or once it has
 * ended (`data-while`) follows. Shared by the dashboard and the chat view.
 */
import { leaseLabel, leaseLive } from "./text.ts";

/** How often the lease times are redrawn (ms). */
export const LEASE_TICK_MS = 1000;

/** Redraws every claim under `root` for `now`. */
export function refreshLeases(root: ParentNode, now: number): void {
  for (const claim of root.querySelectorAll<HTMLElement>("[data-expires]")) {
    const expires = claim.dataset.expires ?? "";
    claim.classList.toggle("stale", !leaseLive(expires, now));
    const lease = claim.querySelector("time.lease");
    if (lease) {
      const label = leaseLabel(expires, now);
      if (lease.textContent !== label) lease.textContent = label;
    }
  }
  for (const element of root.querySelectorAll<HTMLElement>("[data-while]")) {
    const expires = element.closest<HTMLElement>("[data-expires]")?.dataset.expires ?? "";
    const hidden = (element.dataset.while === "live") !== leaseLive(expires, now);
    if (element.hidden !== hidden) element.hidden = hidden;
  }
}

/**
 * Redraws the claims of `doc` with the viewer's clock now (a page rendered by the server was drawn
 * with the server's) and every {@link LEASE_TICK_MS} from then on.
 */
export function keepLeasesCurrent(doc: Document): void {
  refreshLeases(doc, Date.now());
  setInterval(() => refreshLeases(doc, Date.now()), LEASE_TICK_MS);
}
