/**
 * The styles of what render.ts draws (the tree, marks, the task in progress, history, documents,
 * works), shared by the dashboard and the chat view. Colours are CSS variables, so a host can set
 * its theme; light and dark follow the system otherwise.
 */

const LIGHT = `--bg: #fbfbfa; --fg: #1d1f21; --muted: #6a6f75; --line: #dfe1e4; --card: #ffffff;
  --accent: #2457c5; --path: #eef3ff; --active: #fff4d6; --done: #2e7d32; --doing: #b26a00; --todo: #6a6f75;`;
const DARK = `--bg: #15171a; --fg: #e6e6e6; --muted: #9aa0a6; --line: #30343a; --card: #1d2024;
  --accent: #8fb0ff; --path: #1f2a40; --active: #3a3018; --done: #7bc47f; --doing: #f0b458; --todo: #9aa0a6;`;

/**
 * The view's stylesheet. A host's theme (`data-theme` on the root, as MCP Apps set it) wins over
 * the system's.
 */
export const VIEW_CSS = `
:root {
  color-scheme: light dark;
  ${LIGHT}
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  font-size: 15px; line-height: 1.45;
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) { ${DARK} }
}
:root[data-theme="light"] { color-scheme: light; ${LIGHT} }
:root[data-theme="dark"] { color-scheme: dark; ${DARK} }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); overflow-wrap: anywhere; }
h1 { font-size: 1.1rem; margin: 0; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
h4 { font-size: .85rem; margin: .6rem 0 .2rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
ul, ol { margin: 0; padding-left: 1.2rem; }
.empty { color: var(--muted); margin: .2rem 0; }
.progress { display: flex; align-items: center; gap: .5rem; font-size: .8rem; color: var(--muted); }
.progress progress { flex: 1; max-width: 14rem; height: .6rem; accent-color: var(--done); }
.focus { border-left: 3px solid var(--doing); padding-left: .8rem; margin: .8rem 0; }
.focus.idle { border-left-color: var(--line); }
.crumbs { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .2rem; font-size: .8rem; color: var(--muted); }
.crumbs li + li::before { content: "› "; }
.focus-name { font-weight: 600; margin: .3rem 0; }
.description { white-space: pre-wrap; margin: .2rem 0; }
.criteria li, .constraints li { margin: .15rem 0; }
.from { display: inline-block; margin-left: .4rem; font-size: .75rem; color: var(--muted); }
.tree { list-style: none; padding: 0; margin: 0; font-size: .92rem; }
.row, .more { display: flex; align-items: baseline; gap: .35rem; padding: .18rem .3rem; border-radius: 4px; }
.row.path { background: var(--path); }
.row.active { background: var(--active); font-weight: 600; }
.fold, .load { font: inherit; color: var(--accent); background: none; border: 0; padding: 0 .15rem; cursor: pointer; min-width: 1.2rem; }
.load { text-decoration: underline; font-size: .85rem; }
.leaf { display: inline-block; min-width: 1.2rem; }
.mark { min-width: 1rem; text-align: center; }
.s-done .mark { color: var(--done); }
.s-in_progress .mark { color: var(--doing); }
.s-todo .mark { color: var(--todo); }
.s-done .name { color: var(--muted); }
.name { flex: 0 1 auto; }
.id, .count { font-size: .75rem; color: var(--muted); font-family: ui-monospace, monospace; }
.count { margin-left: auto; white-space: nowrap; }
.change { font-size: .7rem; padding: 0 .3rem; border-radius: 3px; white-space: nowrap; background: var(--path); color: var(--accent); }
.c-started { color: var(--doing); } .c-completed { color: var(--done); }
.claim { font-size: .78rem; white-space: nowrap; }
.row .id, .row .claim, .row .parallel-mark { flex-shrink: 0; }
.agent { font-family: ui-monospace, monospace; color: var(--accent); font-weight: 600; }
.lease { color: var(--muted); }
.claim.stale .agent { color: var(--muted); text-decoration: line-through; }
.claim.stale .lease { color: var(--doing); font-weight: 600; }
.blocked-by { font-size: .75rem; color: var(--doing); }
.blocked-by::before { content: "⊘ "; }
.row.blocked .name { color: var(--muted); }
.parallel-mark { font-size: .7rem; color: var(--accent); white-space: nowrap; }
.row.has-where { flex-wrap: wrap; }
.row.has-where .name { max-width: calc(100% - 3rem); }
.where { flex: 1 1 14rem; min-width: 0; display: flex; flex-wrap: wrap; align-items: baseline; gap: .1rem .35rem; }
.paths, .branch { font-size: .75rem; color: var(--muted); font-weight: normal; }
.pattern, .branch { font-family: ui-monospace, monospace; }
.branch { background: var(--path); border-radius: 3px; padding: 0 .3rem; white-space: nowrap; }
.paths.stale .pattern { text-decoration: line-through; }
.lapsed { color: var(--doing); }
.reserved-by { font-size: .75rem; color: var(--doing); }
.reserved-by::before { content: "⊘ "; }
.reserver.stale .agent { color: var(--muted); text-decoration: line-through; }
[hidden] { display: none !important; }
.agents ul { list-style: none; padding: 0; }
.agents li { padding: .15rem 0; display: flex; flex-wrap: wrap; align-items: baseline; gap: .3rem; font-size: .88rem; }
.holder { margin: .2rem 0; font-size: .85rem; color: var(--muted); }
.session-agents { display: flex; flex-wrap: wrap; gap: .4rem; }
${
  Array.from({ length: 13 }, (_, d) =>
    `.d-${d} { padding-left: calc(.3rem + ${d} * var(--indent, 1.1rem)); }`).join("\n")
}
@media (max-width: 30rem) { .tree { --indent: .7rem; } .id { display: none; } }
.history ol, .works, ol.notes { list-style: none; padding: 0; }
.note { padding: .3rem 0; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .2rem .5rem; font-size: .88rem; }
.note-task { font-size: .78rem; color: var(--muted); }
.note-text { flex-basis: 100%; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.history li, .work { padding: .3rem 0; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .2rem .5rem; }
.revision, .work-id { font-family: ui-monospace, monospace; font-size: .8rem; }
time, .tool, .work-session, .meta { font-size: .78rem; color: var(--muted); }
.summary, .work-description { flex-basis: 100%; margin: 0; }
.work details { flex-basis: 100%; font-size: .85rem; }
.work-summary { white-space: pre-wrap; }
.document { border-bottom: 1px solid var(--line); padding-bottom: .5rem; margin-bottom: .5rem; }
.document:last-child { border-bottom: 0; }
.document h3 { margin-top: .2rem; }
.meta { margin: 0; }
`;
