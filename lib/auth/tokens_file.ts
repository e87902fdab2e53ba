/**
 * The tokens file (`AUTH_TOKENS_FILE`): a JSON array of `{ name, token, namespaces, access }`.
 *
 * `token` is the secret itself or `sha256:<64 hex>` of it; the file's secrets are kept as SHA-256
 * digests, a presented token is hashed and compared with every entry in constant time. The last few
 * tokens found are also kept as presented (in memory only, dropped when the file is read again) and
 * compared first, in constant time too, which spares the hashing on the next requests.
 * The file is checked on use (its size, modification and change times and inode), at most every
 * {@link RECHECK_MS} ms: a change is read again then, so a token is revoked by removing it, without a
 * restart, within a tenth of a second. A file that turns bad while the
 * server runs admits nobody until it is fixed (fail closed), and the log says why.
 * An entry that a new version of the file keeps unchanged keeps its {@link Credential} object; one
 * removed or changed is {@link TokensFile.revoked} from then on, so what it opened can be ended.
 * Secrets never reach a log or an error message; entries are named by `name`.
 */
import { z } from "zod";
import type { Logger } from "../log.ts";
import {
  ACCESS_LEVELS,
  type AccessLevel,
  type Credential,
  digestsMatch,
  sha256,
  tokensMatch,
} from "./credential.ts";
import { NamespaceSchema } from "../domain/schemas.ts";
import { DEFAULT_NAMESPACE } from "../domain/names.ts";

const HASHED = /^sha256:([0-9a-fA-F]{64})$/;

/** How many recently found tokens are compared directly, before hashing. */
const RECENT = 16;

/** Least time between two checks of the file for a change (a `stat` costs ~25 µs inside a request). */
export const RECHECK_MS = 100;

/** Longest secret in the file: longer bearer tokens (JWTs) are not hashed to be looked up here. */
export const MAX_TOKEN_LENGTH = 256;

/** One entry of the file, as written. */
export const TokenEntrySchema = z.strictObject({
  name: z.string().trim().min(1).max(100).describe("names the token in logs"),
  token: z.string().min(1, "is empty").max(MAX_TOKEN_LENGTH, `is longer than ${MAX_TOKEN_LENGTH} characters`)
    .refine((t) => !/\s/.test(t), "has whitespace")
    .refine((t) => !t.startsWith("sha256:") || HASHED.test(t), "is 'sha256:' without 64 hex digits")
    .describe("the secret, or sha256:<hex> of it"),
  namespaces: z.union([
    z.literal("*"),
    z.array(NamespaceSchema)
      .min(1, "lists no namespace"),
  ]).describe('the namespaces it may use, the first its own; "*": all'),
  access: z.enum(ACCESS_LEVELS),
});

/** One entry of the file, as written. */
export type TokenEntry = z.infer<typeof TokenEntrySchema>;

/** The whole file. */
export const TokensFileSchema = z.array(TokenEntrySchema);

/** An entry as kept: its credential and the SHA-256 of its secret. */
interface Held {
  credential: Credential;
  digest: Uint8Array;
}

/** Reads and checks the file's text; throws an Error naming the file, the entry and the field. */
export function parseTokensFile(text: string, path: string): Held[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // V8's message may quote the text around the fault (a token written without quotes): keep only
    // where the fault is.
    const at = /at position \d+(?: \(line \d+ column \d+\))?/.exec((error as Error).message)?.[0];
    throw new Error(`AUTH_TOKENS_FILE ${path} is not valid JSON${at ? ` (${at})` : ""}: check its syntax`);
  }
  const parsed = TokensFileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((issue) => {
      const [index, field] = issue.path;
      const entry = typeof index === "number" ? `entry ${index + 1}` : "the file";
      const name = typeof index === "number" ? nameOf((json as unknown[])[index]) : "";
      // zod's messages never quote the value, so a secret cannot end up here.
      return `${entry}${name}${field === undefined ? "" : `, field "${String(field)}"`}: ${issue.message}`;
    });
    throw new Error(`AUTH_TOKENS_FILE ${path} is invalid: ${problems.join("; ")}`);
  }
  const held: Held[] = [];
  const names = new Set<string>();
  for (const entry of parsed.data) {
    if (names.has(entry.name)) {
      throw new Error(`AUTH_TOKENS_FILE ${path} is invalid: two entries are named "${entry.name}"`);
    }
    names.add(entry.name);
    held.push({ credential: credentialOf(entry), digest: digestOf(entry.token) });
  }
  for (let i = 0; i < held.length; i++) {
    for (let j = i + 1; j < held.length; j++) {
      if (digestsMatch(held[i]!.digest, held[j]!.digest)) {
        throw new Error(
          `AUTH_TOKENS_FILE ${path} is invalid: "${held[i]!.credential.name}" and "${
            held[j]!.credential.name
          }" have the same token`,
        );
      }
    }
  }
  return held;
}

function nameOf(entry: unknown): string {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === "string" && name.length <= 100 ? ` ("${name}")` : "";
}

function credentialOf(entry: TokenEntry): Credential {
  const namespaces = entry.namespaces === "*" ? "*" : [...new Set(entry.namespaces)];
  const own = namespaces === "*" ? DEFAULT_NAMESPACE : namespaces[0]!;
  return { name: entry.name, namespaces, own, access: entry.access as AccessLevel };
}

function digestOf(token: string): Uint8Array {
  const hex = token.match(HASHED)?.[1];
  if (!hex) return sha256(token);
  return new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16)));
}

/** What identifies a version of the file without reading it. */
function stamp(info: Deno.FileInfo): string {
  return `${info.size}:${info.mtime?.getTime() ?? 0}:${info.ino ?? 0}:${info.ctime?.getTime() ?? 0}`;
}

/** The tokens file, read at start and again whenever it changes. */
export class TokensFile {
  readonly path: string;
  #log: Logger;
  #held: Held[];
  #stamp: string;
  #checking: Promise<Held[]> | undefined;
  #checkedAt = 0;
  /** Tokens found lately, for the file version held; emptied whenever the file is read again. */
  #recent: { token: string; credential: Credential }[] = [];
  /** Every credential this file ever gave out (to tell a revoked one from one of another source). */
  readonly #issued = new WeakSet<Credential>();
  /** Grows whenever the entries held change. */
  #version = 0;

  private constructor(path: string, log: Logger, held: Held[], stamp: string) {
    this.path = path;
    this.#log = log;
    this.#held = held;
    this.#stamp = stamp;
    for (const h of held) this.#issued.add(h.credential);
  }

  /** Reads and checks the file; throws a clear Error (naming no secret) when it is missing or invalid. */
  static async open(path: string, log: Logger): Promise<TokensFile> {
    let info: Deno.FileInfo;
    let text: string;
    try {
      info = await Deno.stat(path);
      text = await Deno.readTextFile(path);
    } catch (error) {
      throw new Error(`AUTH_TOKENS_FILE ${path} cannot be read: ${(error as Error).message}`);
    }
    const held = parseTokensFile(text, path);
    log.info("tokens file read", { path, tokens: held.map((h) => h.credential.name) });
    return new TokensFile(path, log, held, stamp(info));
  }

  /**
   * The credential whose secret is `token`, if any. The file is checked for changes first when the
   * last check is {@link RECHECK_MS} old (one synchronous `stat`; an asynchronous one costs more).
   */
  async find(token: string): Promise<Credential | undefined> {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    const held = this.#changed() ? await this.#current() : this.#held;
    let found: Credential | undefined;
    // Tokens seen lately are compared as they are (constant time, no hashing, nothing allocated).
    for (const recent of this.#recent) {
      if (tokensMatch(token, recent.token)) found = recent.credential; // no early exit
    }
    if (found) return found;
    const presented = sha256(token);
    for (const entry of held) {
      if (digestsMatch(entry.digest, presented)) found = entry.credential; // no early exit
    }
    if (found) {
      if (this.#recent.length >= RECENT) this.#recent.shift();
      this.#recent.push({ token, credential: found });
    }
    return found;
  }

  /**
   * Reads the file again if it changed (at most every {@link RECHECK_MS}); returns the version of
   * the entries held, which grows whenever they change (whoever made it read the file again). What a
   * revocation watch calls between requests.
   */
  async refresh(): Promise<number> {
    if (this.#changed()) await this.#current();
    return this.#version;
  }

  /** Whether `credential` came from this file and the file no longer holds it as it was (removed or changed). */
  revoked(credential: Credential): boolean {
    return this.#issued.has(credential) && !this.#held.some((h) => h.credential === credential);
  }

  /** Whether the file differs from the version held (or a reload is under way). */
  #changed(): boolean {
    if (this.#checking) return true;
    const now = performance.now();
    if (now - this.#checkedAt < RECHECK_MS) return false;
    this.#checkedAt = now;
    try {
      return stamp(Deno.statSync(this.path)) !== this.#stamp;
    } catch {
      return this.#stamp !== "missing";
    }
  }

  /** The entries of the file as it is now; concurrent callers share one reading. */
  #current(): Promise<Held[]> {
    this.#checking ??= this.#reload().finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async #reload(): Promise<Held[]> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(this.path);
    } catch (error) {
      return this.#fail("missing", error as Error);
    }
    const now = stamp(info);
    if (now === this.#stamp) return this.#held;
    try {
      const held = keepUnchanged(this.#held, parseTokensFile(await Deno.readTextFile(this.path), this.path));
      for (const h of held) this.#issued.add(h.credential);
      this.#held = held;
      this.#version++;
      this.#recent = [];
      this.#stamp = now;
      this.#log.info("tokens file read again", {
        path: this.path,
        tokens: held.map((h) => h.credential.name),
      });
      return held;
    } catch (error) {
      return this.#fail(now, error as Error);
    }
  }

  #fail(now: string, error: Error): Held[] {
    if (this.#stamp !== now) {
      this.#log.error("tokens file unusable: refusing every token from it until it is fixed", {
        path: this.path,
        error: error.message,
      });
    }
    this.#held = [];
    this.#recent = [];
    this.#stamp = now;
    this.#version++;
    return [];
  }
}

/** `next`, where an entry equal to one of `before` (name, secret, namespaces, access) keeps that one's credential. */
function keepUnchanged(before: readonly Held[], next: Held[]): Held[] {
  return next.map((entry) => {
    const same = before.find((old) =>
      old.credential.name === entry.credential.name && digestsMatch(old.digest, entry.digest) &&
      old.credential.access === entry.credential.access && old.credential.own === entry.credential.own &&
      JSON.stringify(old.credential.namespaces) === JSON.stringify(entry.credential.namespaces)
    );
    return same ? { ...entry, credential: same.credential } : entry;
  });
}
