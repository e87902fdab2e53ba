/**
 * `deno task token NAME [--namespaces a,b | --namespaces '*'] [--access read|write] [--file PATH]`
 * makes a token for the tokens file (`AUTH_TOKENS_FILE`, or `--file`): it prints the new secret once
 * on stdout and appends `{ name, token: "sha256:…", namespaces, access }` to the file, which keeps
 * only the hash. The file is created when missing (mode 0600) and replaced atomically; the server
 * reads it again on its next request. Defaults: namespace `NAME`'s own (`--namespaces NAME`), access
 * `read`. Exit 1 with the reason on stderr, and the file unchanged, on any error.
 */
import { base64url } from "jose";
import { sha256, toHex } from "../lib/auth/credential.ts";
import { parseTokensFile, type TokenEntry, TokenEntrySchema } from "../lib/auth/tokens_file.ts";

const USAGE = "usage: deno task token NAME [--namespaces a,b | '*'] [--access read|write] [--file PATH]";

/** The value after `flag`, if given. */
function option(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  if (i === -1) {
    const joined = args.find((a) => a.startsWith(`${flag}=`));
    return joined?.slice(flag.length + 1);
  }
  const value = args[i + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${flag} needs a value\n${USAGE}`);
  return value;
}

async function run(args: string[]): Promise<void> {
  const name = args[0];
  if (!name || name.startsWith("--")) throw new Error(USAGE);
  const path = option(args, "--file") ?? Deno.env.get("AUTH_TOKENS_FILE");
  if (!path) throw new Error(`no tokens file: pass --file PATH or set AUTH_TOKENS_FILE\n${USAGE}`);
  const listed = option(args, "--namespaces") ?? name;
  const secret = `clt_${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
  const hex = toHex(sha256(secret));
  const entry = TokenEntrySchema.safeParse({
    name,
    token: `sha256:${hex}`,
    namespaces: listed.trim() === "*" ? "*" : listed.split(",").map((s) => s.trim()).filter(Boolean),
    access: option(args, "--access") ?? "read",
  });
  if (!entry.success) {
    const problems = entry.error.issues.map((i) => `${String(i.path[0] ?? "")}: ${i.message}`);
    throw new Error(`${problems.join("; ")}\n${USAGE}`);
  }

  let entries: unknown[] = [];
  try {
    const text = await Deno.readTextFile(path);
    parseTokensFile(text, path); // refuse to add to a broken file
    entries = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const next = [...entries, entry.data satisfies TokenEntry];
  const text = JSON.stringify(next, null, 2) + "\n";
  parseTokensFile(text, path); // e.g. a name already taken
  const temporary = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(temporary, text, { mode: 0o600 });
  try {
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
  const scope = entry.data.namespaces === "*" ? "every namespace" : entry.data.namespaces.join(", ");
  console.error(
    `Added "${name}" (${entry.data.access} access to ${scope}) to ${path}. ` +
      "The secret below is shown once; the file keeps only its hash.",
  );
  console.log(secret);
}

if (import.meta.main) {
  try {
    await run(Deno.args);
  } catch (error) {
    console.error(`token: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
