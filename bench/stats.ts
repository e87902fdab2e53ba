/** Statistics of samples of durations: nearest-rank percentiles, median, mean, extremes. */

/** Summary of a sample of durations in milliseconds. */
export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile `p` (0–100) of values sorted ascending; NaN for none. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** p50, p99, mean, min, max of `samples`. */
export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : NaN,
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

/** Nearest-rank percentile `p` (0–100) of `values` in any order. */
export function percentileOf(values: readonly number[], p: number): number {
  return percentile([...values].sort((a, b) => a - b), p);
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  return percentileOf(values, 50);
}
