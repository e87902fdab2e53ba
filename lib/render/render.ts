/**
 * How the view model looks: element descriptions (vnode.ts) for the session list, a session's tree
 * and its task in progress, the history, the progress documents and the recent works. Written once;
 * the server turns them into HTML, the dashboard's script and the chat view into DOM nodes.
 *
 * Class names and `data-*` attributes here are what the styles and the scripts rely on. Lease times
 * are drawn against `now` (the viewer's clock, in ms): an element with `data-expires` is a claim,
 * marked `stale` once its lease has ended, and its `time.lease` says what is left; an element with
 * `data-while="live"` (or `"stale"`) is shown only while the lease of its nearest `data-expires` is
 * live (or has ended). lease_dom.ts keeps all of it current between updates.
 */
import type {
  AgentAtWork,
  DocumentView,
  Focus,
  HeldWork,
  Holder,
  MoreRow,
  NamespaceView,
  RecentHistory,
  Row,
  SessionNote,
  SessionView,
  TaskChange,
  TaskNote,
  TaskRow,
  WorkView,
} from "./model.ts";
import {
  foldedLabel,
  leaseLabel,
  leaseLive,
  moreLabel,
  progressLabel,
  STATUS_MARKS,
  STATUS_WORDS,
  timeLabel,
} from "./text.ts";
import { h, type VElement, type VNode } from "./vnode.ts";

/** Deepest indentation class (`d-12`); deeper rows indent no further. */
export const MAX_INDENT = 12;

/**
 * The link that selects a session: `?ns=NAME&session=ID` (plus `after=` to keep the window of the
 * session list that shows it). The namespace is always named: without it the dashboard shows the
 * credential's own namespace, which need not be `default`.
 */
export function sessionHref(namespace: string, id: string, after = ""): string {
  const params = new URLSearchParams();
  params.set("ns", namespace);
  if (after !== "") params.set("after", after);
  params.set("session", id);
  return `?${params}`;
}

/**
 * The link to a window of a namespace's session list: `?ns=NAME&after=ID` (no `after`: the first
 * window). The namespace is always named, as in {@link sessionHref}.
 */
export function windowHref(namespace: string, after: string): string {
  const params = new URLSearchParams();
  params.set("ns", namespace);
  if (after !== "") params.set("after", after);
  return `?${params}`;
}

/** `5 sessions`, or for a window of more: `Sessions 101–200 of 5,000`. */
export function windowLabel(ns: Pick<NamespaceView, "total" | "start" | "sessions">): string {
  if (ns.total === ns.sessions.length) return ns.total === 1 ? "1 session" : `${ns.total} sessions`;
  const from = ns.sessions.length === 0 ? ns.start : ns.start + 1;
  return `Sessions ${from}–${ns.start + ns.sessions.length} of ${ns.total.toLocaleString("en-US")}`;
}

/** A progress bar with its label. */
export function progressBar(done: number, total: number): VElement {
  return h(
    "span",
    { class: "progress" },
    h("progress", { value: done, max: Math.max(total, 1), "aria-label": progressLabel(done, total) }),
    h("span", { class: "progress-label" }, progressLabel(done, total)),
  );
}

/**
 * The sessions of every namespace, the selected one marked: one window of each (data.ts), its count,
 * and links to the windows before and after it.
 */
export function sessionList(
  namespaces: readonly NamespaceView[],
  selected?: { namespace: string; id: string },
  now: number = Date.now(),
): VElement {
  const many = namespaces.length > 1;
  return h(
    "nav",
    { id: "sessions", "aria-label": "Sessions" },
    h("h2", {}, "Sessions"),
    namespaces.map((ns) =>
      h(
        "section",
        { class: "namespace", "data-namespace": ns.name },
        many && h("h3", {}, ns.name),
        ns.total === 0
          ? h("p", { class: "empty" }, "No sessions yet.")
          : h("p", { class: "session-count", "data-total": ns.total }, windowLabel(ns)),
        h(
          "ul",
          { class: "session-list" },
          ns.sessions.map((s) => {
            const current = selected?.namespace === ns.name && selected.id === s.id;
            return h(
              "li",
              { class: current ? "session current" : "session" },
              h(
                "a",
                { href: sessionHref(ns.name, s.id, ns.after), "aria-current": current ? "page" : undefined },
                s.id,
              ),
              progressBar(s.done, s.total),
              s.active !== null &&
                h("span", { class: "session-active" }, `${STATUS_MARKS.in_progress} ${s.active}`),
              s.agents.length > 0 &&
                h(
                  "span",
                  { class: "session-agents", "aria-label": "Agents at work" },
                  s.agents.map((holder) => claimNode(holder, now, false)),
                ),
            );
          }),
        ),
        (ns.previous !== null || ns.next !== null) &&
          h(
            "p",
            { class: "session-pages" },
            ns.previous !== null &&
              h(
                "a",
                { href: windowHref(ns.name, ns.previous), rel: "prev", class: "previous" },
                "← previous",
              ),
            ns.previous !== null && ns.next !== null && " · ",
            ns.next !== null &&
              h("a", { href: windowHref(ns.name, ns.next), rel: "next", class: "next" }, "next →"),
          ),
      )
    ),
  );
}

/**
 * Who holds a leaf: `@agent` and, with `lease`, the time left on the lease at `now` (or that it is
 * stale). Marked `stale` once the lease has ended.
 */
export function claimNode(holder: Holder, now: number, lease = true): VElement {
  return h(
    "span",
    {
      class: leaseLive(holder.expires_at, now) ? "claim" : "claim stale",
      "data-agent": holder.agent,
      "data-expires": holder.expires_at,
    },
    h("span", { class: "agent" }, `@${holder.agent}`),
    lease && " ",
    lease && h("time", { class: "lease", datetime: holder.expires_at }, leaseLabel(holder.expires_at, now)),
  );
}

/** What a blocked task waits for: `waits for A, B +2 more` (a blocker cut to its id shows the id). */
function blockedNode(row: TaskRow): VElement | null {
  if (!row.blocked_by) return null;
  return h(
    "span",
    { class: "blocked-by", title: "Blocked: waits for these to be done" },
    "waits for ",
    row.blocked_by.map((b, i) => [
      i > 0 ? ", " : "",
      h("span", { class: "blocker", "data-id": b.id }, b.name || b.id),
    ]).flat(),
    row.blocked_more !== undefined ? ` +${row.blocked_more} more` : "",
  );
}

/**
 * Shown only while the lease ending at `expiresAt` is live (`while: "live"`) or once it has ended
 * (`"stale"`), judged at `now` here and by lease_dom.ts from then on.
 */
function whileLease(when: "live" | "stale", expiresAt: string, now: number) {
  return { "data-while": when, hidden: (when === "live") !== leaseLive(expiresAt, now) };
}

/**
 * Where a held leaf's work is: its paths (`src/api/**, docs/api.md +2`), which reserve nothing once
 * its lease has ended (then said), and its branch@head, the whole git record in its title.
 */
function whereNode(work: HeldWork, claim: Holder, now: number): VElement {
  return h(
    "span",
    { class: "where" },
    work.paths.length > 0 && h(
      "span",
      {
        class: leaseLive(claim.expires_at, now) ? "paths" : "paths stale",
        "data-expires": claim.expires_at,
        title: "Paths this claim reserves while its lease is live",
      },
      work.paths.map((p, i) => [i > 0 ? ", " : "", h("code", { class: "pattern" }, p)]).flat(),
      work.paths_more !== undefined && h("span", { class: "paths-more" }, ` +${work.paths_more}`),
      h(
        "span",
        { class: "lapsed", ...whileLease("stale", claim.expires_at, now) },
        " (not reserved: the lease has ended)",
      ),
    ),
    work.git && h(
      "span",
      {
        class: "branch",
        title: `Where the work was last seen: ${work.git.line} (by ${work.git.agent} at ${
          timeLabel(work.git.at)
        })`,
      },
      work.git.short,
    ),
  );
}

/**
 * A leaf waiting on reservations: `paths reserved by @backend, @ui +1 more`, each holder's task and
 * overlapping patterns in its title. Shown while the latest of their leases is live; a holder whose
 * lease has ended is marked stale.
 */
function reservedNode(row: TaskRow, now: number): VElement | null {
  if (!row.reserved_by) return null;
  const until = row.reserved_by.reduce(
    (latest, r) => (Date.parse(r.expires_at) > Date.parse(latest) ? r.expires_at : latest),
    row.reserved_by[0]!.expires_at,
  );
  return h(
    "span",
    {
      class: "reserved-by",
      "data-expires": until,
      ...whileLease("live", until, now),
      title: "Waits for other agents' reservations: its paths overlap theirs",
    },
    "paths reserved by ",
    row.reserved_by.map((r, i) => [
      i > 0 ? ", " : "",
      h(
        "span",
        {
          class: leaseLive(r.expires_at, now) ? "reserver" : "reserver stale",
          "data-agent": r.agent,
          "data-expires": r.expires_at,
          title: `${r.pair[0]} overlaps ${r.pair[1]} of ${r.name} (${r.id}), reserved until ${
            timeLabel(r.expires_at)
          }`,
        },
        h("span", { class: "agent" }, `@${r.agent}`),
      ),
    ]).flat(),
    row.reserved_more !== undefined ? ` +${row.reserved_more} more` : "",
  );
}

/** One row of the tree: a task (with a fold button when it has subtasks) or a "more" placeholder. */
export function rowNode(row: Row, now: number = Date.now()): VElement {
  return row.kind === "task" ? taskRowNode(row, now) : moreRowNode(row);
}

function indent(depth: number): string {
  return `d-${Math.min(depth, MAX_INDENT)}`;
}

function taskRowNode(row: TaskRow, now: number): VElement {
  const classes = ["row", `s-${row.status}`, indent(row.depth)];
  if (row.on_path) classes.push("path");
  if (row.active) classes.push("active");
  if (row.change) classes.push(`ch-${row.change}`);
  if (row.parallel) classes.push("parallel");
  if (row.blocked_by) classes.push("blocked");
  if (row.claim) classes.push("held");
  if (row.work && row.claim) classes.push("has-where");
  const folder = row.children > 0;
  return h(
    "li",
    {
      class: classes.join(" "),
      "data-kind": "task",
      "data-id": row.id,
      "data-depth": row.depth,
      "data-children": row.children,
    },
    folder
      ? h(
        "button",
        {
          type: "button",
          class: "fold",
          "data-id": row.id,
          "aria-expanded": row.open ? "true" : "false",
          "aria-label": `${row.open ? "Fold" : "Unfold"} ${row.name}`,
        },
        row.open ? "▾" : "▸",
      )
      : h("span", { class: "leaf", "aria-hidden": "true" }),
    h(
      "span",
      { class: "mark", title: STATUS_WORDS[row.status], "aria-label": STATUS_WORDS[row.status] },
      STATUS_MARKS[row.status],
    ),
    h("span", { class: "name" }, row.name),
    h("span", { class: "id" }, row.id),
    row.parallel && h("span", { class: "parallel-mark", title: "Subtasks may run at once" }, "∥ parallel"),
    row.claim && claimNode(row.claim, now),
    row.work && row.claim && whereNode(row.work, row.claim, now),
    blockedNode(row),
    reservedNode(row, now),
    row.change && h("span", { class: `change c-${row.change}` }, row.change),
    folder &&
      h(
        "span",
        { class: "count", title: foldedLabel(row.done, row.total) },
        `${row.done}/${row.total}`,
      ),
  );
}

function moreRowNode(row: MoreRow): VElement {
  return h(
    "li",
    {
      class: `more ${indent(row.depth)}`,
      "data-kind": "more",
      "data-depth": row.depth,
      "data-parent": row.parent_id ?? "",
      "data-offset": row.offset,
      "data-count": row.count,
    },
    h("button", { type: "button", class: "load" }, moreLabel(row.count)),
  );
}

/** The rows as list items, in order. */
export function rowNodes(rows: readonly Row[], now: number = Date.now()): VElement[] {
  return rows.map((row) => rowNode(row, now));
}

/** The agents holding leaves: each with its task and the time left on its lease (stale ones marked). */
export function agentsPanel(
  agents: readonly AgentAtWork[],
  more: number | undefined,
  now: number,
): VElement | null {
  if (agents.length === 0) return null;
  return h(
    "section",
    { id: "agents", class: "agents", "aria-label": "Agents at work" },
    h("h3", {}, "Agents at work"),
    h(
      "ul",
      {},
      agents.map((a) =>
        h(
          "li",
          { "data-id": a.id },
          claimNode(a, now),
          " on ",
          h("span", { class: "name" }, a.name),
          " ",
          h("span", { class: "id" }, a.id),
        )
      ),
    ),
    more !== undefined && h("p", { class: "empty" }, `${more} more held ${more === 1 ? "task" : "tasks"}.`),
  );
}

/** The task in progress: its path, description, and the criteria and constraints that apply. */
export function focusPanel(
  focus: Focus | null,
  next: SessionView["next"],
  now: number = Date.now(),
): VElement {
  if (!focus) {
    return h(
      "section",
      { id: "focus", class: "focus idle", "aria-label": "Task in progress" },
      h("h3", {}, "In progress"),
      h("p", { class: "empty" }, next ? "Nothing in progress. Next: " : "Nothing in progress."),
      next &&
        h(
          "p",
          { class: "next" },
          h("span", { class: "name" }, next.name),
          " ",
          h("span", { class: "id" }, next.id),
        ),
    );
  }
  const rules = (title: string, cls: string, items: Focus["criteria"]) =>
    h(
      "section",
      { class: cls },
      h("h4", {}, title),
      items.length === 0 ? h("p", { class: "empty" }, "None.") : h(
        "ul",
        {},
        items.map((rule) =>
          h(
            "li",
            { class: rule.from_id === focus.id ? "own" : "inherited" },
            h("span", { class: "rule" }, rule.text),
            h("span", { class: "from" }, rule.from_id === focus.id ? "this task" : `from ${rule.from_name}`),
          )
        ),
      ),
    );
  return h(
    "section",
    { id: "focus", class: "focus", "aria-label": "Task in progress" },
    h("h3", {}, "In progress"),
    h(
      "ol",
      { class: "crumbs" },
      focus.path.map((step) => h("li", { "data-id": step.id }, step.name)),
    ),
    h("p", { class: "focus-name" }, h("span", { class: "mark" }, STATUS_MARKS.in_progress), " ", focus.name),
    focus.claim && h("p", { class: "holder" }, "Held by ", claimNode(focus.claim, now)),
    focus.description !== "" &&
      h("p", { class: "description" }, focus.description + (focus.description_cut ? " …" : "")),
    rules("Completion criteria", "criteria", focus.criteria),
    rules("Constraints", "constraints", focus.constraints),
    focus.rules_cut !== undefined &&
      h(
        "p",
        { class: "empty rules-cut" },
        `${focus.rules_cut} more criteria or constraints not shown (too long for one view).`,
      ),
    focus.notes &&
      h(
        "section",
        { class: "task-notes" },
        h("h4", {}, "Notes"),
        h("ol", { class: "notes" }, focus.notes.map((note) => noteItem(note))),
      ),
  );
}

/** One note: who, when, and its text (agent text: always a text node). */
function noteItem(note: TaskNote, task?: { id: string; name: string }): VElement {
  return h(
    "li",
    { class: "note", ...(task ? { "data-id": task.id } : {}) },
    h("span", { class: "agent" }, `@${note.agent}`),
    h("time", { datetime: note.at }, timeLabel(note.at)),
    task &&
      h(
        "span",
        { class: "note-task" },
        "on ",
        h("span", { class: "name" }, task.name),
        " ",
        h("span", { class: "id" }, task.id),
      ),
    h("p", { class: "note-text" }, note.text),
  );
}

/** The session's latest notes on any task, newest first; nothing when it has none. */
export function notesPanel(
  notes: readonly SessionNote[] | undefined,
  more: number | undefined,
): VElement | null {
  if (!notes || notes.length === 0) return null;
  return h(
    "section",
    { id: "notes", class: "notes-panel", "aria-label": "Notes" },
    h("h3", {}, "Notes"),
    h(
      "ol",
      { class: "notes" },
      notes.map((note) => noteItem(note, { id: note.task_id, name: note.task_name })),
    ),
    more !== undefined &&
      h(
        "p",
        { class: "empty" },
        `${more} older ${more === 1 ? "note" : "notes"} not shown (getTask has them).`,
      ),
  );
}

/** The history, newest first; nothing at all when the store keeps none. */
export function historyList(history: RecentHistory | null): VElement | null {
  if (!history) return null;
  return h(
    "section",
    { id: "history", class: "history", "aria-label": "History" },
    h("h3", {}, `History (revision ${history.revision})`),
    history.entries.length === 0 ? h("p", { class: "empty" }, "No changes recorded yet.") : h(
      "ol",
      {},
      history.entries.map((entry) =>
        h(
          "li",
          { "data-revision": entry.revision },
          h("span", { class: "revision" }, `#${entry.revision}`),
          h("time", { datetime: entry.at }, timeLabel(entry.at)),
          h("span", { class: "tool" }, entry.tool),
          h("span", { class: "summary" }, entry.summary),
        )
      ),
    ),
  );
}

/** A session: heading with done/total, the agents at work, the task in progress, the folded tree, the notes, the history. */
export function sessionPanel(view: SessionView, now: number = Date.now()): VElement {
  return h(
    "section",
    {
      id: "session",
      "data-namespace": view.namespace,
      "data-session": view.id,
      "aria-label": `Session ${view.id}`,
    },
    h("h2", {}, view.id),
    progressBar(view.done, view.total),
    agentsPanel(view.agents, view.agents_more, now),
    focusPanel(view.focus, view.next, now),
    h("h3", {}, "Tasks"),
    view.rows.length === 0
      ? h("p", { class: "empty" }, "No tasks in this session.")
      : h("ol", { class: "tree", "aria-label": "Tasks" }, rowNodes(view.rows, now)),
    notesPanel(view.notes, view.notes_more),
    historyList(view.history),
  );
}

/** One line on what the call shown did: `started 1 · completed 2 · added 3` (nothing when it changed nothing). */
export function changeSummary(changes: Readonly<Record<string, TaskChange>>): VElement | null {
  const counts = new Map<TaskChange, number>();
  for (const change of Object.values(changes)) counts.set(change, (counts.get(change) ?? 0) + 1);
  if (counts.size === 0) return null;
  return h(
    "p",
    { id: "changed", class: "changed" },
    "This call: ",
    [...counts].map(([change, n], i) => [
      i > 0 ? " · " : "",
      h("span", { class: `change c-${change}` }, change),
      ` ${n}`,
    ]).flat(),
  );
}

/** What shows when no session is selected or the selected one does not exist. */
export function noSessionPanel(message: string): VElement {
  return h("section", { id: "session" }, h("p", { class: "empty" }, message));
}

function textList(items: readonly string[], cls: string): VNode {
  return items.length === 0
    ? h("p", { class: `empty ${cls}` }, "—")
    : h("ul", { class: cls }, items.map((item) => h("li", {}, item)));
}

/** The progress documents: goal, completed, next steps, blockers. */
export function documentsPanel(documents: readonly DocumentView[]): VElement {
  return h(
    "section",
    { id: "documents", "aria-label": "Progress documents" },
    h("h2", {}, "Progress"),
    documents.length === 0 && h("p", { class: "empty" }, "No progress documents yet."),
    documents.map((doc) =>
      h(
        "article",
        { class: "document", "data-project": doc.project },
        h("h3", {}, doc.project),
        h(
          "p",
          { class: "meta" },
          `revision ${doc.revision} · ${timeLabel(doc.updated_at)}`,
          doc.session_id !== null ? ` · session ${doc.session_id}` : "",
        ),
        h("h4", {}, "Goal"),
        textList(doc.goal, "goal"),
        h("h4", {}, "Completed"),
        textList(doc.completed, "completed"),
        h("h4", {}, "Next steps"),
        textList(doc.next_steps, "next-steps"),
        h("h4", {}, "Blockers"),
        textList(doc.blockers, "blockers"),
      )
    ),
  );
}

/** The recent works, most recently used first. */
export function worksPanel(works: readonly WorkView[]): VElement {
  return h(
    "section",
    { id: "works", "aria-label": "Recent works" },
    h("h2", {}, "Recent works"),
    works.length === 0 ? h("p", { class: "empty" }, "No work saved yet.") : h(
      "ol",
      { class: "works" },
      works.map((work) =>
        h(
          "li",
          { class: "work", "data-work": work.workId },
          h("span", { class: "work-id" }, work.workId),
          h("time", { datetime: work.at }, timeLabel(work.at)),
          work.session_id !== null && h("span", { class: "work-session" }, work.session_id),
          h("p", { class: "work-description" }, work.description),
          h(
            "details",
            {},
            h("summary", {}, "Summary"),
            h("p", { class: "work-summary" }, work.summary + (work.summary_cut ? " …" : "")),
          ),
        )
      ),
    ),
  );
}
