/**
 * Real file-system failures for store tests: a tiny tmpfs that fills up, a directory remounted
 * read-only. Both need `mount` (root with CAP_SYS_ADMIN, as in CI containers). Whether they work is
 * probed once, when this module loads: a test that needs them passes `ignore: MOUNTS_UNAVAILABLE`,
 * so Deno reports it as ignored (the reason is printed once) rather than passed. Permission bits are
 * no substitute: root writes through them.
 */

/** A mounted directory; disposing it unmounts it and removes the mount point. */
export interface Mount extends AsyncDisposable {
  path: string;
}

async function run(args: string[]): Promise<{ ok: boolean; text: string }> {
  try {
    const out = await new Deno.Command(args[0]!, { args: args.slice(1), stdout: "piped", stderr: "piped" })
      .output();
    const text = new TextDecoder().decode(out.stderr).trim();
    return { ok: out.success, text };
  } catch (error) {
    return { ok: false, text: (error as Error).message };
  }
}

/** A fresh tmpfs of `sizeKiB` KiB; throws where mounting is impossible (see {@link MOUNTS_UNAVAILABLE}). */
export async function tmpfs(sizeKiB: number): Promise<Mount> {
  const path = await Deno.makeTempDir({ prefix: "checklist-tmpfs-" });
  const mounted = await run(["mount", "-t", "tmpfs", "-o", `size=${sizeKiB}k`, "tmpfs", path]);
  if (!mounted.ok) {
    await Deno.remove(path, { recursive: true });
    throw new Error(`cannot mount a tmpfs (${mounted.text || "mount failed"})`);
  }
  return {
    path,
    [Symbol.asyncDispose]: async () => {
      await run(["umount", "-l", path]);
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/** Switches a bind mount of `dir` on itself between read-only and writable. */
export interface ReadOnlySwitch extends AsyncDisposable {
  readOnly(on: boolean): Promise<void>;
}

/** Binds `dir` on itself so it can be made read-only; throws where impossible (see {@link MOUNTS_UNAVAILABLE}). */
export async function bindSelf(dir: string): Promise<ReadOnlySwitch> {
  const bound = await run(["mount", "--bind", dir, dir]);
  if (!bound.ok) throw new Error(`cannot bind-mount (${bound.text || "mount failed"})`);
  return {
    readOnly: async (on) => {
      const done = await run(["mount", "-o", `remount,bind,${on ? "ro" : "rw"}`, dir]);
      if (!done.ok) throw new Error(`cannot remount ${dir} ${on ? "ro" : "rw"}: ${done.text}`);
    },
    [Symbol.asyncDispose]: async () => void await run(["umount", "-l", dir]),
  };
}

/** Fills the file system of `dir` with one file until it is full; returns the file's path. */
export async function fillUp(dir: string): Promise<string> {
  const path = `${dir}/filler`;
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const block = new Uint8Array(4096);
  try {
    for (;;) await file.write(block);
  } catch {
    // Full.
  } finally {
    file.close();
  }
  return path;
}

/** Mounts a tiny tmpfs, binds it on itself read-only and back, and undoes it all; the failure's text, if any. */
async function probe(): Promise<string | undefined> {
  try {
    await using mount = await tmpfs(64);
    await using bound = await bindSelf(mount.path);
    await bound.readOnly(true);
    await bound.readOnly(false);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const unavailable = await probe();
if (unavailable) console.log(`tests that need mount are ignored: ${unavailable}`);

/** True where {@link tmpfs} and {@link bindSelf} cannot work: pass it as a test's `ignore`. */
export const MOUNTS_UNAVAILABLE: boolean = unavailable !== undefined;
