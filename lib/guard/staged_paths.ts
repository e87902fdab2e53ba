/**
 * The paths a commit would change, read from git (docs/guard.md "What it checks"): the index against
 * `HEAD` (`git diff --cached --name-status --no-renames -z`). Without rename detection a rename is a
 * deletion of its old name and an addition of its new one, so both names are checked, whatever
 * `diff.renames` says; a deletion is a change like any other. Before the first commit every staged
 * path counts. In a hook git points `GIT_INDEX_FILE` at the index being committed (`commit -a`,
 * `commit PATH` use a temporary one); it reaches git through the environment.
 *
 * Concluding a merge (`MERGE_HEAD` exists), a path counts only when the index differs from both
 * parents: what the merge took whole from one side is that side's work, not this commit's (as the
 * pre-commit framework checks only the files a merge had to reconcile).
 */
import { GitError, runGit } from "../git/run_git.ts";

/** One path a commit changes, with git's status letter (`A`, `M`, `D`, `T`, `U`, …). */
export interface StagedPath {
  path: string;
  status: string;
}

/** Options of {@link readStaged}. */
export interface ReadStagedOptions {
  /** Milliseconds each git run may take. */
  timeoutMs?: number;
}

const DIFF = [
  "diff",
  "--cached",
  "--name-status",
  "--no-renames",
  "--no-ext-diff",
  "--ignore-submodules=none",
  "-z",
];

/**
 * The paths the commit being made in `dir` changes, in git's order (by path). Throws a
 * {@link GitError} (run_git.ts) when git gives nothing: not a work tree, no git, no permission, a hang.
 */
export async function readStaged(dir: string, options: ReadStagedOptions = {}): Promise<StagedPath[]> {
  const run = (args: readonly string[]) => runGit(args, { cwd: dir, timeoutMs: options.timeoutMs });
  const decoder = new TextDecoder();
  // rev-parse first: outside a repository `git diff` is `git diff --no-index`, which fails otherwise.
  const merging = await mergeHead(dir, options);
  const staged = parseNameStatus(decoder.decode(await run(DIFF)));
  if (!merging || staged.length === 0) return staged;
  const fromOther = new Set(
    parseNameStatus(decoder.decode(await run([...DIFF, merging]))).map((s) => s.path),
  );
  return staged.filter((s) => fromOther.has(s.path));
}

/** The commit `MERGE_HEAD` names while a merge is being concluded, else undefined. */
async function mergeHead(dir: string, options: ReadStagedOptions): Promise<string | undefined> {
  try {
    const out = await runGit(["rev-parse", "-q", "--verify", "MERGE_HEAD^{commit}"], {
      cwd: dir,
      timeoutMs: options.timeoutMs,
    });
    return new TextDecoder().decode(out).trim() || undefined;
  } catch (error) {
    // No MERGE_HEAD: rev-parse -q --verify fails quietly. Anything else is the diff's to report.
    if (error instanceof GitError && error.reason === "failed") return undefined;
    throw error;
  }
}

/**
 * Parses `git diff --name-status --no-renames -z` output: a status, then its path, each ended by NUL.
 * A status with a score (`R100`, `C75`: only with rename or copy detection) is followed by two paths,
 * both kept.
 */
export function parseNameStatus(output: string): StagedPath[] {
  const fields = output.split("\0");
  if (fields.at(-1) === "") fields.pop();
  const out: StagedPath[] = [];
  for (let i = 0; i < fields.length;) {
    const status = fields[i++]!;
    const letter = status.charAt(0);
    const names = letter === "R" || letter === "C" ? 2 : 1;
    for (let k = 0; k < names && i < fields.length; k++) out.push({ path: fields[i++]!, status: letter });
  }
  return out;
}
