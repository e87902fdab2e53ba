/**
 * Names a store may hold from before the Unicode rule (contract "Failures, limits and hostile
 * input"): a session id or project with a lone surrogate cannot be written any more, but an older
 * JSON file can still hold one. Such a name has no URI and no link (`encodeURIComponent` throws, a
 * URL turns it into U+FFFD, which names another session), so lists that link to names leave it out
 * and say so in the log, once per store and name. docs/troubleshooting.md "What you see when things go wrong" says how to repair it.
 */
import { isWellFormed } from "../domain/unicode.ts";
import type { Logger } from "../log.ts";

const reported = new WeakMap<object, Set<string>>();

/** Where names come from, for the one warning per name. */
export interface NameSource {
  /** The store (or any object that lives as long as it): one warning per name per store. */
  store: object;
  namespace: string;
  kind: "session" | "project";
  log: Logger;
}

/** The well-formed names of `names`; the others are logged once (per store and name) and left out. */
export function linkableNames(names: readonly string[], source: NameSource): string[] {
  const out = names.filter(isWellFormed);
  if (out.length === names.length) return out;
  let seen = reported.get(source.store);
  if (!seen) reported.set(source.store, seen = new Set());
  for (const name of names) {
    const key = `${source.namespace}\u0000${source.kind}\u0000${name}`;
    if (isWellFormed(name) || seen.has(key)) continue;
    seen.add(key);
    source.log.warn(`stored ${source.kind} name is not well-formed Unicode; not listed`, {
      namespace: source.namespace,
      [source.kind]: JSON.stringify(name),
    });
  }
  return out;
}
