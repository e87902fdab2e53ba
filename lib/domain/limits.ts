/**
 * The documented limits (README "Limits"). Exceeding one is `LIMIT_EXCEEDED` and changes nothing.
 *
 * They keep one tree small enough to answer fast and one stored value small enough for every store
 * (a Deno KV value is at most 64 KiB).
 */
export const LIMITS = {
  sessionIdLength: 100,
  taskIdLength: 64,
  nameLength: 200,
  descriptionLength: 4000,
  resolutionLength: 4000,
  listItems: 20,
  listItemLength: 500,
  depth: 12,
  childrenPerTask: 1000,
  tasksPerCall: 500,
  tasksPerSession: 100_000,
  tableRows: 25,
  treeTextLines: 400,
  /** A project name (one progress document each). */
  projectLength: 200,
  /** A progress document, in characters of JSON text (one Deno KV value). */
  progressContentLength: 32_000,
  workDescriptionLength: 200,
  workSummaryLength: 20_000,
  /** A work entry's task snapshot, in characters of JSON: a bigger session is refused, not cut. */
  workSnapshotLength: 50_000,
  /** An HTTP request body, in bytes. */
  bodyBytes: 1024 * 1024,
} as const;
