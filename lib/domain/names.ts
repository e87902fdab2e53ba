/**
 * The default names, written once: the namespace and the session a call uses when it names none.
 * Plain constants with no imports, so the browser bundles can use them without zod.
 */

/** The namespace that holds everything stored before namespaces existed (docs/namespaces.md). */
export const DEFAULT_NAMESPACE = "default";

/**
 * The session the task, history and view tools use when the arguments name none; also the session
 * a bare array of root tasks (the seed's file format) loads as.
 */
export const DEFAULT_SESSION = "default";
