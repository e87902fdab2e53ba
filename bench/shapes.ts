/**
 * The task-tree shapes the benchmarks fill a session with: deterministic ids, the `createTask`
 * calls that build a shape within the limits, and the same tree as a store document.
 */
import { callTool, type Rpc } from "./rpc.ts";

/** A tree shape: `roots` roots × `mids` subtasks × `leaves` leaves each. */
export interface Shape {
  roots: number;
  mids: number;
  leaves: number;
}

/** Tasks in a shape. */
export function shapeSize(shape: Shape): number {
  return shape.roots * (1 + shape.mids * (1 + shape.leaves));
}

/**
 * The shape used for a session of `size` tasks: depth 3, at most 110 siblings, built with calls of
 * at most 500 tasks. 100 = 1×9×10, 1,000 = 1×9×110, 10,000 = 10×9×110, 100,000 = 100×9×110.
 */
export function shapeFor(size: number): Shape {
  if (size === 100) return { roots: 1, mids: 9, leaves: 10 };
  if (size % 1000 === 0) return { roots: size / 1000, mids: 9, leaves: 110 };
  throw new Error(`no shape for ${size} tasks`);
}

/** Ids in a shape, in tree order. */
export interface ShapeIds {
  roots: string[];
  mids: string[];
  /** Leaves in tree order: starting and completing them in this order is always valid. */
  leaves: string[];
}

/** Deterministic ids of a shape: `r3`, `r3.m2`, `r3.m2.l17`. */
export function shapeIds(shape: Shape): ShapeIds {
  const ids: ShapeIds = { roots: [], mids: [], leaves: [] };
  for (let r = 0; r < shape.roots; r++) {
    ids.roots.push(`r${r}`);
    for (let m = 0; m < shape.mids; m++) {
      ids.mids.push(`r${r}.m${m}`);
      for (let l = 0; l < shape.leaves; l++) ids.leaves.push(`r${r}.m${m}.l${l}`);
    }
  }
  return ids;
}

interface NewTask {
  id: string;
  name: string;
  description?: string;
  tasks?: NewTask[];
}

function midTask(r: number, m: number, leaves: number): NewTask & { id: string } {
  const tasks: NewTask[] = [];
  for (let l = 0; l < leaves; l++) tasks.push({ id: `r${r}.m${m}.l${l}`, name: `Leaf ${r}.${m}.${l}` });
  return { id: `r${r}.m${m}`, name: `Step ${r}.${m}`, tasks };
}

/** One `createTask` call of a build: a root, or subtask `mid` under root `underRoot` (by index). */
export interface BuildCall {
  args: Record<string, unknown>;
  underRoot?: number;
  mid?: number;
}

/**
 * The `createTask` calls that build a shape, each within the limits (≤ 500 tasks a call): per
 * root, one call with the root and as many whole subtasks as fit, then one call per subtask left.
 * The top task of a call gets a generated id (createTask keeps given ids only for nested tasks).
 */
export function buildCalls(shape: Shape, sessionId: string): BuildCall[] {
  const calls: BuildCall[] = [];
  const perMid = 1 + shape.leaves;
  if (perMid + 1 > 500) throw new Error("a subtask with its leaves must fit in one call");
  const firstMids = Math.min(shape.mids, Math.floor((500 - 1) / perMid));
  for (let r = 0; r < shape.roots; r++) {
    const first: NewTask[] = [];
    for (let m = 0; m < firstMids; m++) first.push(midTask(r, m, shape.leaves));
    calls.push({ args: { sessionId, name: `Goal ${r}`, description: `Root ${r}`, tasks: first } });
    for (let m = firstMids; m < shape.mids; m++) {
      calls.push({ args: { sessionId, ...midTask(r, m, shape.leaves) }, underRoot: r, mid: m });
    }
  }
  return calls;
}

/** Fills a session with `createTask` calls; returns the ids (as generated where so) and how long it took. */
export async function fillSession(
  rpc: Rpc,
  options: { sessionId: string; size: number; deadlineMs?: number },
): Promise<{ ids: ShapeIds; ms: number }> {
  const shape = shapeFor(options.size);
  const limit = options.deadlineMs ?? 300_000;
  const started = performance.now();
  const ids = shapeIds(shape);
  const roots: string[] = [];
  for (const call of buildCalls(shape, options.sessionId)) {
    if (performance.now() - started > limit) {
      throw new Error(`filling ${options.size} tasks took longer than ${limit} ms`);
    }
    const args = call.underRoot === undefined ? call.args : { ...call.args, parentId: roots[call.underRoot] };
    const result = await callTool(rpc, "createTask", args);
    const task = result.structuredContent?.task as { id?: string } | undefined;
    if (!task?.id) throw new Error("createTask answered without structuredContent.task.id");
    if (call.underRoot === undefined) roots.push(task.id);
    else ids.mids[call.underRoot * shape.mids + call.mid!] = task.id;
  }
  return { ids: { ...ids, roots }, ms: performance.now() - started };
}

/** The store document (`FILE_PATH` format) of a shape, every task todo, in session `sessionId`. */
export function shapeDocument(shape: Shape, sessionId: string): Record<string, unknown> {
  const leaf = (id: string, name: string) => ({ id, name, description: "", status: "todo", tasks: [] });
  const roots = [];
  for (let r = 0; r < shape.roots; r++) {
    const mids = [];
    for (let m = 0; m < shape.mids; m++) {
      const leaves = [];
      for (let l = 0; l < shape.leaves; l++) leaves.push(leaf(`r${r}.m${m}.l${l}`, `Leaf ${r}.${m}.${l}`));
      mids.push({ ...leaf(`r${r}.m${m}`, `Step ${r}.${m}`), tasks: leaves });
    }
    roots.push({ ...leaf(`r${r}`, `Goal ${r}`), description: `Root ${r}`, tasks: mids });
  }
  return { version: 1, sessions: { [sessionId]: roots }, works: [], progress: {} };
}

/**
 * The 8 `paths` of module `k` in the benchmarks' plans with reservations (bench/team_bench.ts,
 * bench/reservations_bench.ts): literal files, `*` and `**`, every one rooted in a directory of its own
 * module, as a lead would write them.
 */
export function modulePaths(k: number): string[] {
  return [
    `src/mod${k}/**`,
    `tests/mod${k}/*_test.ts`,
    `docs/mod${k}.md`,
    `lib/**/mod${k}_*.ts`,
    `bench/mod${k}/**/*.ts`,
    `scripts/mod${k}.ts`,
    `src/shared/mod${k}/*.json`,
    `config/mod${k}.*.yml`,
  ];
}
