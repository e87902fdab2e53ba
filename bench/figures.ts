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

/**
 * Replaces the section that starts with `heading` (up to the next `## ` heading or generated block),
 * or adds it at the end.
 */
export function placeSection(document: string | undefined, heading: string, section: string): string {
  if (!document || document.trim() === "") return `# Benchmarks\n\n${section}\n`;
  const start = document.indexOf(heading);
  if (start < 0) return `${document.trimEnd()}\n\n${section}\n`;
  const rest = document.slice(start + heading.length);
  const next = rest.search(/\n## |\n<!-- bench\/run\.ts: begin/);
  const end = next < 0 ? document.length : start + heading.length + next + 1;
  return `${document.slice(0, start)}${section}\n${next < 0 ? "" : "\n"}${document.slice(end)}`;
}
