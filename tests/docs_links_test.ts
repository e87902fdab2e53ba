/**
 * Every relative link in README.md and docs/*.md resolves: the file it names exists and its `#anchor`, if
 * any, is a heading of that file under GitHub's slug rule. Absolute URLs are not checked. And the code's
 * comments cite the guides the repository has (docs/), not a contract file it does not.
 */
import assert from "node:assert/strict";
import { ROOT } from "./support/paths.ts";

/** A link found in a Markdown file: where it is and what it points at. */
interface Link {
  file: string;
  line: number;
  target: string;
}

/** The Markdown files whose links are checked, relative to the project root. */
async function markdownFiles(): Promise<string[]> {
  const files = ["README.md"];
  for await (const entry of Deno.readDir(`${ROOT}/docs`)) {
    if (entry.isFile && entry.name.endsWith(".md")) files.push(`docs/${entry.name}`);
  }
  return files.sort();
}

/** The lines of a Markdown file outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): [number, string][] {
  const lines: [number, string][] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) lines.push([i + 1, line]);
  });
  return lines;
}

/** A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown file's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, line] of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The relative links (and images) of a Markdown file, outside code blocks and inline code. */
export function links(file: string, text: string): Link[] {
  const found: Link[] = [];
  for (const [line, content] of proseLines(text)) {
    const prose = content.replace(/(`+)[^`]*?\1/g, "");
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      found.push({ file, line, target });
    }
  }
  return found;
}

/** Why a link does not resolve, or null when it does. */
async function broken(link: Link): Promise<string | null> {
  const hash = link.target.indexOf("#");
  const path = hash === -1 ? link.target : link.target.slice(0, hash);
  const anchor = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const dir = link.file.includes("/") ? link.file.slice(0, link.file.lastIndexOf("/")) : ".";
  const resolved = path === ""
    ? link.file
    : new URL(decodeURIComponent(path), `file:///${dir}/`).pathname.slice(1);
  let text: string;
  try {
    const info = await Deno.stat(`${ROOT}/${resolved}`);
    if (!info.isFile) return anchor === null ? null : `${resolved} is not a file`;
    text = await Deno.readTextFile(`${ROOT}/${resolved}`);
  } catch {
    return `no file ${resolved}`;
  }
  if (anchor === null || !resolved.endsWith(".md")) return null;
  return anchors(text).has(anchor) ? null : `no heading #${anchor} in ${resolved}`;
}

Deno.test("slug and anchors follow GitHub's rule", () => {
  assert.equal(slug("Protocol eras: which one each client gets"), "protocol-eras-which-one-each-client-gets");
  assert.equal(slug("`deno serve` and Deno Deploy"), "deno-serve-and-deno-deploy");
  assert.equal(
    slug("The DNS-rebinding guard: `ALLOWED_HOSTS`, `ALLOWED_ORIGINS`"),
    "the-dns-rebinding-guard-allowed_hosts-allowed_origins",
  );
  assert.equal(
    slug("Group `checklist` (the original Checklist MCP Server's tools)"),
    "group-checklist-the-original-checklist-mcp-servers-tools",
  );
  assert.deepEqual([...anchors("# A\n\n## A\n\n```\n# not a heading\n```\n\n### A\n")], ["a", "a-1", "a-2"]);
  assert.deepEqual(
    links("x.md", "[a](b.md#c) `[d](e.md)` [f](https://x.org) ![g](h.png)\n```\n[i](j.md)\n```\n").map((l) =>
      l.target
    ),
    ["b.md#c", "h.png"],
  );
});

Deno.test("every relative link and #anchor in README.md and docs/*.md resolves", async () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of await markdownFiles()) {
    const text = await Deno.readTextFile(`${ROOT}/${file}`);
    for (const link of links(file, text)) {
      checked++;
      const why = await broken(link);
      if (why !== null) problems.push(`${link.file}:${link.line}: (${link.target}) ${why}`);
    }
  }
  assert.ok(checked > 0, "the files hold relative links");
  assert.deepEqual(problems, [], `broken links:\n${problems.join("\n")}`);
});

Deno.test("no comment in lib/, main.ts or tests/ cites CONTRACT, a file the repository does not have", async () => {
  assert.equal(await Deno.stat(`${ROOT}/CONTRACT.md`).then(() => true, () => false), false);
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(`${ROOT}/${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (/\.(ts|js)$/.test(entry.name) && path !== "tests/docs_links_test.ts") {
        const text = await Deno.readTextFile(`${ROOT}/${path}`);
        text.split("\n").forEach((line, i) => {
          if (/\bCONTRACT\b(?!_)/.test(line)) found.push(`${path}:${i + 1}`);
        });
      }
    }
  };
  for (const dir of ["lib", "tests"]) await walk(dir);
  if (/\bCONTRACT\b/.test(await Deno.readTextFile(`${ROOT}/main.ts`))) found.push("main.ts");
  assert.deepEqual(found, [], "cite the guide in docs/ instead");
});
