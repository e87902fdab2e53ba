/**
 * Run counts of the property tests and fuzzers: modest under `deno task test`, 20 times more
 * under `deno task fuzz` (`FUZZ=1`; `FUZZ_RUNS=N` sets the multiplier), always from a fixed seed
 * unless `FUZZ_SEED` names another.
 */

/** The seed every property test and fuzzer starts from. */
export const FUZZ_SEED: number = Number(env("FUZZ_SEED") ?? 20261123);

/** `base` runs, times `FUZZ_RUNS` (20 under `deno task fuzz`, else 1). */
export function fuzzRuns(base: number): number {
  const factor = Number(env("FUZZ_RUNS") ?? (env("FUZZ") ? 20 : 1));
  return Math.max(1, Math.round(base * (Number.isFinite(factor) && factor > 0 ? factor : 1)));
}

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
