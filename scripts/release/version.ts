/**
 * `deno task version [--tag vX.Y.Z]` prints deno.json's `version`. With `--tag` (the release workflow
 * passes the pushed tag) it exits 1, naming both, unless the tag is exactly `v` + that version: a
 * release is cut only from a commit whose deno.json says what the tag says.
 */
import { projectVersion } from "./settings.ts";

/** Why `tag` may not release `version`, or undefined when it may. */
export function tagMismatch(tag: string, version: string): string | undefined {
  if (tag === `v${version}`) return undefined;
  return `tag ${JSON.stringify(tag)} does not match deno.json's version ${version}: ` +
    `tag v${version}, or set "version" in deno.json to the tag's version and commit it`;
}

if (import.meta.main) {
  const version = await projectVersion();
  const i = Deno.args.indexOf("--tag");
  if (i !== -1) {
    const tag = Deno.args[i + 1] ?? "";
    const problem = tagMismatch(tag.replace(/^refs\/tags\//, ""), version);
    if (problem) {
      console.error(problem);
      Deno.exit(1);
    }
  }
  console.log(version);
}
