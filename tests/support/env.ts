/**
 * The environment a child server gets: ours (so Deno finds its cache), minus every variable that
 * configures the server, so a setting in the shell that runs the tests or benchmarks never changes
 * what a child serves. The list is the configuration's own, so a new setting is stripped at once.
 */
import { ENV_NAMES, RENAMED_SETTINGS } from "../../lib/config.ts";

/** The variables removed from a child's environment: every setting (old names too), and Deploy's marker. */
export const SERVER_ENV_NAMES: readonly string[] = [
  ...Object.values(ENV_NAMES),
  ...Object.keys(RENAMED_SETTINGS),
  "DENO_DEPLOYMENT_ID",
];

/** This process's environment without {@link SERVER_ENV_NAMES}, with `NO_COLOR=1`, plus `extra`. */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of SERVER_ENV_NAMES) delete env[name];
  return { ...env, NO_COLOR: "1", ...extra };
}
