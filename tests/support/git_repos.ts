/**
 * Real git repositories in temporary directories, for tests and benchmarks: `git init` with a user
 * set per repository (never globally), files written and committed, a bare repository as the upstream,
 * second work trees. Each place is one temporary directory removed on dispose. The git commands run
 * here ignore the machine's global and system configuration, so a developer's settings never change a
 * test's repository; the code under test runs git as the server does.
 */

/** Runs git in `cwd` (global and system configuration ignored); returns stdout, throws with stderr on failure. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { success, stdout, stderr } = await new Deno.Command("git", {
    args,
    cwd,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  if (!success) throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${decoder.decode(stderr)}`);
  return decoder.decode(stdout);
}

/** A temporary directory (its real path: git reports real paths) holding repositories; removed on dispose. */
export interface GitPlace extends AsyncDisposable {
  /** The directory; repositories go in subdirectories. */
  dir: string;
  /** A new repository in `dir/name` on branch `main` with user name and email set, no commit yet. */
  init(name?: string): Promise<Repo>;
  /** A new bare repository in `dir/name`. */
  bare(name?: string): Promise<string>;
}

/** One work tree of a repository. */
export interface Repo {
  /** Its top directory. */
  dir: string;
  /** git in this work tree. */
  git(...args: string[]): Promise<string>;
  /** Writes `text` to the repository-relative `path` (parent directories created). */
  write(path: string, text: string): Promise<void>;
  /** Stages everything and commits; returns the new HEAD. */
  commit(message: string): Promise<string>;
  /** The commit HEAD names (40 hex digits). */
  head(): Promise<string>;
  /** `git worktree add ../name -b branch`: a second work tree of this repository. */
  addWorktree(name: string, branch: string): Promise<Repo>;
}

/** A fresh {@link GitPlace}, in the system's temporary directory or under `parent`. */
export async function gitPlace(options: { parent?: string } = {}): Promise<GitPlace> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: options.parent, prefix: "checklist-git-" }));
  return {
    dir,
    init: async (name = "repo") => {
      const path = `${dir}/${name}`;
      await Deno.mkdir(path, { recursive: true });
      await git(path, "init", "-q", "-b", "main");
      await configure(path);
      return repoAt(path);
    },
    bare: async (name = "upstream.git") => {
      await git(dir, "init", "-q", "--bare", "-b", "main", name);
      return `${dir}/${name}`;
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

/** A clone of `url` into `dir`, configured as {@link GitPlace.init} does. */
export async function cloneInto(url: string, dir: string): Promise<Repo> {
  await git(".", "clone", "-q", url, dir);
  await configure(dir);
  return repoAt(dir);
}

async function configure(path: string): Promise<void> {
  await git(path, "config", "--local", "user.name", "Test Agent");
  await git(path, "config", "--local", "user.email", "agent@example.com");
  await git(path, "config", "--local", "commit.gpgsign", "false");
}

/** A {@link Repo} over the work tree at `dir`. */
export function repoAt(dir: string): Repo {
  const repo: Repo = {
    dir,
    git: (...args) => git(dir, ...args),
    write: async (path, text) => {
      const full = `${dir}/${path}`;
      await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(full, text);
    },
    commit: async (message) => {
      await git(dir, "add", "-A");
      await git(dir, "commit", "-q", "--allow-empty", "-m", message);
      return await repo.head();
    },
    head: async () => (await git(dir, "rev-parse", "HEAD")).trim(),
    addWorktree: async (name, branch) => {
      const path = `${dir.slice(0, dir.lastIndexOf("/"))}/${name}`;
      await git(dir, "worktree", "add", "-q", "-b", branch, path);
      return repoAt(path);
    },
  };
  return repo;
}
