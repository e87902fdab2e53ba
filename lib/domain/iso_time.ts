/**
 * Times as ISO 8601 text without V8's Date formatting: no imports, so the browser bundles and every
 * layer may use it.
 */
/**
 * `new Date(ms).toISOString()` for the years 0000–9999, computed in JavaScript: every change stamps
 * its history entry, and V8's own formatting is a runtime call that costs about 4 µs on a cold
 * cache, more than the rest of the entry (BENCHMARKS.md, latency). Other years use V8's.
 */
export function isoTime(ms: number): string {
  if (!(ms >= -62167219200000 && ms <= 253402300799999)) return new Date(ms).toISOString();
  const day = Math.floor(ms / 86_400_000);
  let rest = ms - day * 86_400_000;
  // Civil date from days since 1970-01-01 (H. Hinnant's days_from_civil, inverted).
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const min = Math.floor(rest / 60_000);
  rest -= min * 60_000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(min, 2)}:${pad(s, 2)}.${pad(milli, 3)}Z`;
}

function pad(n: number, width: number): string {
  const text = String(n);
  return text.length >= width ? text : "0".repeat(width - text.length) + text;
}
