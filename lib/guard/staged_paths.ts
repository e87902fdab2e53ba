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
import { isAbsolute, resolve } from "node:path";
import { runGit } from "../git/run_git.ts";

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

/** What a commit being made in a work tree changes, and where that work tree is. */
export interface StagedCommit {
  /** The work tree's top directory, as git writes it (`git rev-parse --show-toplevel`). */
  top: string;
  /** The paths the commit changes, in git's order (by path). */
  staged: StagedPath[];
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
 * The commit being made in `dir`: two git runs, one `rev-parse` (the top directory, and where
 * `MERGE_HEAD` would be) and one `diff` (two while a merge is concluded). Throws a `GitError`
 * (run_git.ts) when git gives nothing: not a work tree, no git, no permission, a hang.
 */
export async function readStaged(dir: string, options: ReadStagedOptions = {}): Promise<StagedCommit> {
  const run = async (args: readonly string[]) =>
    new TextDecoder().decode(await runGit(args, { cwd: dir, timeoutMs: options.timeoutMs }));
  // rev-parse first: outside a repository `git diff` is `git diff --no-index`, which fails otherwise.
  const paths = (await run(["rev-parse", "--show-toplevel", "--git-path", "MERGE_HEAD"])).replace(/\n$/, "");
  // One path a line; the top directory's own name may hold a newline, so it is all but the last line.
  const cut = paths.lastIndexOf("\n");
  const top = paths.slice(0, cut);
  const mergeHeadPath = paths.slice(cut + 1);
  const merging = await mergeHead(isAbsolute(mergeHeadPath) ? mergeHeadPath : resolve(dir, mergeHeadPath));
  const staged = parseNameStatus(await run(DIFF));
  if (!merging || staged.length === 0) return { top, staged };
  const fromOther = new Set(parseNameStatus(await run([...DIFF, merging])).map((s) => s.path));
  return { top, staged: staged.filter((s) => fromOther.has(s.path)) };
}

/** The commit the `MERGE_HEAD` file names while a merge is being concluded, else undefined. */
async function mergeHead(path: string): Promise<string | undefined> {
  try {
    const id = (await Deno.readTextFile(path)).split("\n")[0]!.trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(id) ? id : undefined;
  } catch {
    return undefined; // no merge in progress
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
