/**
 * The text drawing of a task tree: one `├── ✓ id: name` line per task, as the checklist tools,
 * getTask, createTask and the session resource show it. A leaf an agent holds ends with `@agent`
 * (`(lease expired)` after it once stale), a task waiting for unfinished blockers with `(blocked by …)`.
 */
import { LIMITS } from "./limits.ts";
import type { Task, TaskStatus } from "./schemas.ts";
import { countTasks, type TaskTree } from "./task_tree.ts";
import { isLive } from "./team.ts";

/** The mark drawn before a task of each status. */
export const MARKS: Readonly<Record<TaskStatus, string>> = { done: "✓", todo: "○", in_progress: "◐" };

/** Options of {@link renderTree}. */
export interface RenderTreeOptions {
  /** Most lines drawn; the tasks past them are counted on one closing line. */
  maxLines?: number;
  /** Size of a subtree, itself included; pass `tree.subtreeSize` to count hidden tasks in O(1). */
  sizeOf?: (task: Task) => number;
  /** Finds a blocker by id, to tell whether it is done; without it, `blocked_by` is not drawn. */
  lookup?: (id: string) => Task | undefined;
  /** The reader's clock in milliseconds, to mark stale claims; without it, none is marked. */
  now?: number;
}

/** Draws tasks as a text tree, one `├── ✓ id: name` line per task, at most `maxLines` lines. */
export function renderTree(roots: readonly Task[], options: RenderTreeOptions = {}): string {
  const maxLines = options.maxLines ?? LIMITS.treeTextLines;
  const sizeOf = options.sizeOf ?? ((task: Task) => countTasks([task]));
  if (roots.length === 0) return "(no tasks)";
  const lines: string[] = [];
  let hidden = 0;
  const draw = (list: readonly Task[], prefix: string) => {
    list.forEach((task, i) => {
      if (lines.length >= maxLines) {
        hidden += sizeOf(task);
        return;
      }
      const last = i === list.length - 1;
      lines.push(
        `${prefix}${last ? "└── " : "├── "}${MARKS[task.status]} ${task.id}: ${oneLine(task.name)}${
          teamNote(task, options)
        }`,
      );
      draw(task.tasks, prefix + (last ? "    " : "│   "));
    });
  };
  draw(roots, "");
  if (hidden > 0) {
    lines.push(`… ${hidden} more tasks not shown (call get_all_tasks on a smaller session, or getTask)`);
  }
  return lines.join("\n");
}

/**
 * Draws a session's whole tree; hidden tasks past the line cap are counted from the tree's index.
 * With `now`, stale claims are marked.
 */
export function renderSession(tree: TaskTree | undefined, now?: number): string {
  return tree
    ? renderTree(tree.roots, { sizeOf: (task) => tree.subtreeSize(task), lookup: (id) => tree.get(id), now })
    : renderTree([]);
}

/** ` @agent` for a held leaf, ` (blocked by a, b)` for a task with unfinished blockers of its own. */
function teamNote(task: Task, options: RenderTreeOptions): string {
  let note = "";
  if (task.claim && task.status === "in_progress") {
    note += ` @${task.claim.agent}`;
    if (options.now !== undefined && !isLive(task.claim, options.now)) note += " (lease expired)";
  }
  if (task.blocked_by && options.lookup && task.status !== "done") {
    const open = task.blocked_by.filter((id) => {
      const blocker = options.lookup!(id);
      return blocker !== undefined && blocker.status !== "done";
    });
    if (open.length > 0) note += ` (blocked by ${open.join(", ")})`;
  }
  return note;
}

function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, " ");
}
