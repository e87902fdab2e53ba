/**
 * docs/configuration.md holds every setting in one table: each environment variable of lib/config.ts has
 * its row, and the table names no variable the server does not read.
 */
import assert from "node:assert/strict";
import { ENV_NAMES } from "../lib/config.ts";
import { ROOT } from "./support/paths.ts";

/** The variables named in the first column of the configuration table. */
async function tableVariables(): Promise<Set<string>> {
  const text = await Deno.readTextFile(`${ROOT}/docs/configuration.md`);
  const rows = text.split("\n").filter((line) => /^\|\s*`[A-Z_]+`/.test(line));
  const names = rows.flatMap((row) =>
    [...row.split("|")[1]!.matchAll(/`([A-Z][A-Z_]+)`/g)].map((m) => m[1]!)
  );
  return new Set(names);
}

Deno.test("docs/configuration.md's table has a row for every setting of lib/config.ts, and no other", async () => {
  const documented = await tableVariables();
  const read = new Set(Object.values(ENV_NAMES));
  assert.deepEqual([...read].filter((name) => !documented.has(name)), [], "settings missing from the table");
  assert.deepEqual(
    [...documented].filter((name) => !read.has(name)),
    [],
    "rows for settings the server lacks",
  );
});
