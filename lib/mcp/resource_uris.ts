/**
 * The `checklist://` resource URIs, built and read here alone: a session's task tree
 * (`checklist://sessions/{sessionId}`), a saved work (`checklist://works/{workId}`) and a project's
 * progress document (`checklist://progress/{project}`). A name is percent-encoded in the URI, so any
 * session id or project (a `/`, a space, `__proto__`) round-trips. The plan view's `ui://` URI is
 * the plan view's own (lib/plan_view).
 */

/** The URI templates, as `resources/templates/list` shows them. */
export const URI_TEMPLATES = {
  session: "checklist://sessions/{sessionId}",
  work: "checklist://works/{workId}",
  progress: "checklist://progress/{project}",
} as const;

const SESSION = "checklist://sessions/";
const WORK = "checklist://works/";
const PROGRESS = "checklist://progress/";

/** What a `checklist://` URI names. */
export type ResourceRef =
  | { kind: "session"; sessionId: string }
  | { kind: "work"; workId: string }
  | { kind: "progress"; project: string };

/** URI of a session's task tree. */
export function sessionUri(sessionId: string): string {
  return SESSION + encodeURIComponent(sessionId);
}

/** URI of a work entry. */
export function workUri(workId: string): string {
  return WORK + workId;
}

/** URI of a project's progress document. */
export function progressUri(project: string): string {
  return PROGRESS + encodeURIComponent(project);
}

/** What `uri` names; undefined for any other URI, or one whose name does not percent-decode. */
export function parseResourceUri(uri: string): ResourceRef | undefined {
  try {
    if (uri.startsWith(SESSION)) {
      return { kind: "session", sessionId: decodeURIComponent(uri.slice(SESSION.length)) };
    }
    if (uri.startsWith(WORK)) return { kind: "work", workId: decodeURIComponent(uri.slice(WORK.length)) };
    if (uri.startsWith(PROGRESS)) {
      return { kind: "progress", project: decodeURIComponent(uri.slice(PROGRESS.length)) };
    }
  } catch {
    // a malformed percent-encoding names nothing
  }
  return undefined;
}
