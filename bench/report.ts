/**
 * What a benchmark part gives `run.ts` (its Markdown and its targets), and the Markdown helpers the
 * parts write it with.
 */

/** A benchmark target: met, missed, or not measurable on this run. */
export interface Target {
  name: string;
  met: boolean | undefined;
  detail: string;
}

/** What each part returns to `run.ts`. */
export interface PartResult {
  /** Markdown, starting with its `##` heading. */
  markdown: string;
  targets: Target[];
  /** Figures other parts may reuse (e.g. RSS with 100k tasks). */
  figures?: Record<string, number>;
}

/** Options every part takes. */
export interface PartOptions {
  /** Fewer samples and smaller sizes, for trying the harness. */
  quick: boolean;
  /** Progress lines go here (stderr). */
  note: (line: string) => void;
}

/** Milliseconds with a sensible number of digits. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return "—";
  if (value < 1) return value.toFixed(3);
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

/** A ratio as `1.23×`. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "—";
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** "met" / "missed" / "not measured". */
export function verdict(met: boolean | undefined): string {
  return met === undefined ? "not measured" : met ? "met" : "**missed**";
}
