/** Writing figures into `BENCHMARKS.md`, left as `deno fmt` wants it so `deno task ok` stays clean. */
import { ROOT } from "../tests/support/paths.ts";

/** `BENCHMARKS.md` at the project root. */
export const BENCHMARKS_FILE: string = `${ROOT}/BENCHMARKS.md`;

/**
 * Rewrites `BENCHMARKS.md` with what `place` makes of its current text (undefined when there is
 * none), then formats the file. Each suite's `place` replaces its own part and keeps the others.
 */
export async function updateBenchmarks(place: (document: string | undefined) => string): Promise<void> {
  const current = await Deno.readTextFile(BENCHMARKS_FILE).catch(() => undefined);
  await Deno.writeTextFile(BENCHMARKS_FILE, place(current));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", BENCHMARKS_FILE], cwd: ROOT }).output();
}
