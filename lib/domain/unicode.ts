/**
 * Well-formed Unicode (contract "Failures, limits and hostile input"): every string an agent sends,
 * and every key of an object it sends, must be UTF-16 without a lone surrogate. A lone surrogate has
 * no UTF-8 form: Deno KV keys and JSON writers turn it into U+FFFD, so `q\ud800`, `q\udbff` and
 * `q\ufffd` would name one session. Refusing it at the edge keeps every name distinct in every store.
 */

/** Where a lone surrogate sits: the path to the string (or the key) and the offending code unit. */
export interface IllFormed {
  /** Keys and indexes from the value to the string; for a key, the path ends at that key. */
  path: (string | number)[];
  /** The lone surrogate, as `U+D800`. */
  unit: string;
  /** Whether the key itself (not its value) holds it. */
  inKey: boolean;
}

/**
 * The first string or object key in `value` that is not well-formed Unicode, depth first in key
 * order; undefined when all are. Recursive: measure the depth first (limits.ts `jsonDepth`).
 */
export function findIllFormed(value: unknown, path: (string | number)[] = []): IllFormed | undefined {
  const found = illFormedIn(value);
  if (found) found.path.unshift(...path);
  return found;
}

/**
 * {@link findIllFormed} from `value` itself. Every tool call's arguments pass through here: the path
 * is built only on the way back from a find, so well-formed arguments allocate nothing.
 */
function illFormedIn(value: unknown): IllFormed | undefined {
  if (typeof value === "string") {
    return value.isWellFormed() ? undefined : { path: [], unit: loneSurrogate(value), inKey: false };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedIn(value[i]);
      if (found) {
        found.path.unshift(i);
        return found;
      }
    }
    return undefined;
  }
  if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) {
      if (!key.isWellFormed()) return { path: [key], unit: loneSurrogate(key), inKey: true };
      const found = illFormedIn((value as Record<string, unknown>)[key]);
      if (found) {
        found.path.unshift(key);
        return found;
      }
    }
  }
  return undefined;
}

/** Whether `text` is well-formed Unicode (no lone surrogate). */
export function isWellFormed(text: string): boolean {
  return text.isWellFormed();
}

/** What a refusal says after the field's name: `holds a lone surrogate (U+D800); …`. */
export function illFormedText(found: IllFormed): string {
  return `${
    found.inKey ? "has a key that holds" : "holds"
  } a lone surrogate (${found.unit}): send well-formed Unicode (every surrogate paired)`;
}

/** A field path as a reader writes it, `tasks[0].name`, each lone surrogate in it written as `\ud800`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const part of path) {
    text += typeof part === "number" ? `[${part}]` : `${text === "" ? "" : "."}${escapeLone(String(part))}`;
  }
  return text;
}

/** `text` with each lone surrogate written as `\ud800`, so a message naming it is well-formed itself. */
export function escapeLone(text: string): string {
  return text.isWellFormed() ? text : text.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
}

/** `U+D800` for the first unpaired surrogate of an ill-formed `text`. */
function loneSurrogate(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return unit(c);
    }
    if (c >= 0xdc00 && c <= 0xdfff) return unit(c);
  }
  return "none";
}

function unit(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}
