/** The machine the figures are taken on, and the resident memory of a process (Linux `/proc`). */

/** The machine the figures were taken on. */
export interface Machine {
  cpus: string;
  cpu: string;
  ram: string;
  os: string;
  deno: string;
  node: string;
  loadavg: string;
}

/** Describes this machine (Linux `/proc`; `-A`, since Deno guards `/proc/cpuinfo`). */
export async function machine(): Promise<Machine> {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  const meminfo = await Deno.readTextFile("/proc/meminfo").catch(() => "");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? "unknown";
  const memKb = Number(/^MemTotal:\s*(\d+)/m.exec(meminfo)?.[1] ?? NaN);
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  const node = await output("node", ["--version"]);
  return {
    cpus: String(navigator.hardwareConcurrency),
    cpu: model,
    ram: `${(memKb / 1024 / 1024).toFixed(1)} GiB`,
    os: `${Deno.build.os} ${Deno.build.arch}, kernel ${Deno.osRelease()}`,
    deno: Deno.version.deno,
    node: node.trim() || "not found",
    loadavg: load.split(" ").slice(0, 3).join(" "),
  };
}

async function output(command: string, args: string[]): Promise<string> {
  try {
    const result = await new Deno.Command(command, { args, stdout: "piped", stderr: "null" }).output();
    return new TextDecoder().decode(result.stdout);
  } catch {
    return "";
  }
}

/** Resident memory of a process in KiB (`VmRSS` in `/proc/PID/status`). */
export async function rssKiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/^VmRSS:\s*(\d+)/m.exec(status)?.[1] ?? NaN);
}

/** `getconf CLK_TCK` on Linux: the unit of the times in `/proc/PID/stat`. */
const CLOCK_TICKS = 100;

/** CPU time (user + system) a process has used so far, in milliseconds, from `/proc/PID/stat`. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name; in ticks.
  return (Number(fields[11]) + Number(fields[12])) * 1000 / CLOCK_TICKS;
}

/**
 * CPU time a process's live threads have run, in milliseconds, from each thread's `/proc/PID/task/TID/schedstat`
 * (nanoseconds; finer than the ticks of {@link cpuMs}, for short runs such as a start-up).
 */
export async function threadCpuMs(pid: number): Promise<number> {
  let ns = 0;
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    try {
      ns += Number((await Deno.readTextFile(`/proc/${pid}/task/${task.name}/schedstat`)).split(" ")[0]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return ns / 1e6;
}
