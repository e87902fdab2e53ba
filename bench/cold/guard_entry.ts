/**
 * Start-up baseline of the commit guard (bench/guard_bench.ts): the guard's own modules without the
 * server's that `main.ts` imports statically. Not shipped: it shows what `main.ts guard` pays for
 * being the one entry.
 */
const { runGuard } = await import("../../lib/guard/guard_main.ts");
Deno.exit(await runGuard(Deno.args));
