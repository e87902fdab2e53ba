/**
 * Schemas for objects keyed by what users chose (session ids, projects, JSON keys in a progress
 * document), which keep every key: zod's `z.record` and `z.json` drop a key named `__proto__`, and a
 * plain `obj[key] = value` would set the prototype instead of a property. Every key accepted is
 * stored and read back like any other (docs/troubleshooting.md "Limits").
 */
import { z } from "zod";

/** A JSON value as `JSON.parse` returns it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Whether `value` is a plain JSON value (checked without recursion, so any depth is fine). */
export function isJsonValue(value: unknown): value is JsonValue {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (Array.isArray(v)) {
      stack.push(...v);
      continue;
    }
    if (typeof v !== "object") return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    stack.push(...Object.values(v as object));
  }
  return true;
}

/**
 * A JSON object, kept as it is (every key, at every depth). Its JSON Schema says `type: "object"`
 * (a custom check has none of its own, and the MCP Inspector warns about a field without a type).
 */
export const JsonObjectSchema = z.custom<{ [key: string]: JsonValue }>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value) && isJsonValue(value),
  { message: "Expected a JSON object" },
).meta({ type: "object" });

/** Sets `obj[key] = value` as an own property, whatever the key (`__proto__` included). */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An object from `[key, value]` pairs, every key an own property. */
export function ownObject<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [key, value] of entries) setOwn(out, key, value);
  return out;
}

/**
 * Like `z.record(key, value)`, but keeps every key (see the module doc). Problems are reported at
 * `KEY.…` as `z.record` reports them.
 */
export function ownRecord<K extends z.ZodType<string, string>, V extends z.ZodType>(key: K, value: V) {
  return z.unknown().transform((input, ctx) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      ctx.addIssue({ code: "custom", message: "Expected an object" });
      return z.NEVER;
    }
    const out: Record<string, z.output<V>> = {};
    for (const [k, v] of Object.entries(input)) {
      const parsedKey = key.safeParse(k);
      const parsed = value.safeParse(v);
      for (const issue of [...(parsedKey.error?.issues ?? []), ...(parsed.error?.issues ?? [])]) {
        ctx.addIssue({ code: "custom", message: issue.message, path: [k, ...issue.path] });
      }
      if (parsedKey.success && parsed.success) setOwn(out, k, parsed.data);
    }
    return out;
  });
}
