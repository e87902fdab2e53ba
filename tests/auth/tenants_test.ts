/**
 * Tenants never crowd each other out (docs/hosting.md "Hosting for a team"), through the real HTTP app and a
 * real tokens file: fair shares of the connection cap and of the event-stream cap, event streams
 * that carry only their own namespace's changes, and the credential's own namespace where a
 * dashboard request names none.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import type { TokenEntry } from "../../lib/auth/tokens_file.ts";
import { initializeBody, openRawConnection, post, send } from "../support/http.ts";
import { ok } from "../support/harness.ts";
import { recordingLogger } from "../support/logs.ts";
import { readUntil } from "../support/streams.ts";
import { accessApp, connectWith, tokensFile } from "../support/auth.ts";

/** Secrets of the tenants: a read-only share-link token and four others. */
const SECRETS = {
  viewer: "viewer-secret-0123456789abcdef",
  ci: "ci-secret-0123456789abcdef",
  c: "c-secret-0123456789abcdef",
  d: "d-secret-0123456789abcdef",
  e: "e-secret-0123456789abcdef",
} as const;
type Tenant = keyof typeof SECRETS;

const ENTRIES: TokenEntry[] = [
  { name: "viewer", token: SECRETS.viewer, namespaces: ["team-a"], access: "read" },
  { name: "ci", token: SECRETS.ci, namespaces: ["team-b", "shared"], access: "write" },
  { name: "c", token: SECRETS.c, namespaces: ["team-c"], access: "write" },
  { name: "d", token: SECRETS.d, namespaces: ["team-d"], access: "write" },
  { name: "e", token: SECRETS.e, namespaces: ["team-e"], access: "write" },
];

const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${SECRETS[tenant]}` });

async function pingStatus(app: Hono, tenant: Tenant, connection: string): Promise<number> {
  const response = await post(app, { jsonrpc: "2.0", id: 9, method: "ping" }, {
    ...bearer(tenant),
    "mcp-session-id": connection,
  });
  await response.body?.cancel();
  return response.status;
}

/** Opens an event stream (`/events`, plus `?ns=`); returns its reader once `ready` has arrived. */
async function openStream(app: Hono, tenant: Tenant, ns?: string) {
  const response = await send(app, {
    path: ns === undefined ? "/events" : `/events?ns=${ns}`,
    headers: bearer(tenant),
  });
  assert.equal(response.status, 200, `${tenant}'s stream`);
  const reader = response.body!.getReader();
  await readUntil(reader, (t) => t.includes("event: ready"));
  return reader;
}

/** Resolves when the stream has ended (within `ms`). */
async function ended(reader: ReadableStreamDefaultReader<Uint8Array>, ms = 2000): Promise<void> {
  await readUntil(reader, () => false, ms);
}

Deno.test("connections: one credential opening MAX_CONNECTIONS connections closes only its own, never another's", async () => {
  await using file = await tokensFile(ENTRIES);
  const { log, records } = recordingLogger();
  await using app = await accessApp({ authTokensFile: file.path }, { log, config: { maxConnections: 8 } });
  const theirs = await openRawConnection(app.app, bearer("ci"));
  const mine: string[] = [];
  for (let i = 0; i < 8; i++) mine.push(await openRawConnection(app.app, bearer("viewer")));
  assert.equal(await pingStatus(app.app, "ci", theirs), 200, "another credential's connection lives on");
  const statuses = [];
  for (const id of mine) statuses.push(await pingStatus(app.app, "viewer", id));
  assert.deepEqual(statuses, [404, 404, 404, 404, 404, 404, 200, 200], "a quarter of 8: its 2 newest");

  const bites = records.filter((r) => r.msg.startsWith("http connection quota"));
  assert.equal(bites.length, 6);
  assert.ok(bites.every((r) => r.credential === "viewer"), "the log names the credential");
  assert.ok(!JSON.stringify(records).includes(SECRETS.viewer), "never its secret");

  // Four credentials at their share fill the cap: a fifth is refused (503), nobody's is closed.
  await openRawConnection(app.app, bearer("ci"));
  for (const tenant of ["c", "d"] as const) {
    for (let i = 0; i < 2; i++) await openRawConnection(app.app, bearer(tenant));
  }
  const refused = await post(app.app, initializeBody(), bearer("e"));
  assert.equal(refused.status, 503, await refused.clone().text());
  assert.equal(refused.headers.get("retry-after"), "5");
  await refused.body?.cancel();
  assert.equal(await pingStatus(app.app, "ci", theirs), 200);
  assert.equal(await pingStatus(app.app, "viewer", mine[7]!), 200);
  // Full, a credential that holds some gives up its own oldest.
  const again = await openRawConnection(app.app, bearer("viewer"));
  assert.equal(await pingStatus(app.app, "viewer", mine[6]!), 404);
  assert.equal(await pingStatus(app.app, "viewer", again), 200);
  assert.equal(await pingStatus(app.app, "ci", theirs), 200);
});

Deno.test("event streams: one credential opening 100 streams ends only its own; everyone else's /events still opens", async () => {
  await using file = await tokensFile(ENTRIES);
  const { log, records } = recordingLogger();
  await using app = await accessApp({ authTokensFile: file.path }, { log });
  const theirs = await openStream(app.app, "ci");
  const mine = [];
  for (let i = 0; i < 100; i++) mine.push(await openStream(app.app, "viewer"));
  for (const reader of mine.slice(0, 75)) await ended(reader);
  const bites = records.filter((r) => r.msg.startsWith("event stream quota"));
  assert.equal(bites.length, 75, "a quarter of 100: its 25 newest stay");
  assert.ok(bites.every((r) => r.credential === "viewer"));
  assert.ok(!JSON.stringify(records).includes(SECRETS.viewer));

  const second = await openStream(app.app, "ci"); // today: 503
  await using ci = await connectWith(app.app, SECRETS.ci);
  await ok(ci.client, "createTask", { sessionId: "plan", name: "still live" });
  for (const reader of [theirs, second]) {
    assert.match(await readUntil(reader, (t) => t.includes("event: change")), /event: change/);
  }
  for (const reader of [theirs, second, ...mine.slice(75)]) await reader.cancel();
});

Deno.test("event streams: four credentials at their share fill the cap; a fifth gets 503 and nobody's stream ends", async () => {
  await using file = await tokensFile(ENTRIES);
  await using app = await accessApp({ authTokensFile: file.path }, { events: { maxStreams: 8 } });
  const open = [];
  for (const tenant of ["viewer", "ci", "c", "d"] as const) {
    for (let i = 0; i < 2; i++) open.push(await openStream(app.app, tenant));
  }
  const refused = await send(app.app, { path: "/events", headers: bearer("e") });
  assert.equal(refused.status, 503);
  await refused.body?.cancel();
  const renewed = await openStream(app.app, "viewer"); // its own oldest goes
  await ended(open[0]!);
  for (const reader of [...open.slice(1), renewed]) await reader.cancel();
});

Deno.test("/events carries only changes of the namespace it asks for, which the credential must be allowed", async () => {
  await using file = await tokensFile(ENTRIES);
  await using app = await accessApp({ authTokensFile: file.path });
  for (const path of ["/events?ns=team-a", "/events?ns=nobody", "/events?ns=a%2Fb"]) {
    const response = await send(app.app, { path, headers: bearer("ci") });
    assert.equal(response.status, 404, path);
    assert.equal((await response.json()).error.code, "NOT_FOUND");
  }

  const own = await openStream(app.app, "ci"); // no ns: its own, team-b
  const shared = await openStream(app.app, "ci", "shared");
  const other = await openStream(app.app, "c");
  await using c = await connectWith(app.app, SECRETS.c);
  await ok(c.client, "createTask", { sessionId: "plan", name: "in team-c" });
  assert.match(await readUntil(other, (t) => t.includes("event: change")), /"seq":1/);
  for (const reader of [own, shared]) {
    await assert.rejects(
      readUntil(reader, (t) => t.includes("event: change"), 700),
      /timed out/,
      "another namespace's change is not told",
    );
    await reader.cancel();
  }

  const own2 = await openStream(app.app, "ci");
  const shared2 = await openStream(app.app, "ci", "shared");
  await using ci = await connectWith(app.app, SECRETS.ci);
  await ok(ci.client, "createTask", { sessionId: "plan", name: "in team-b" });
  assert.match(await readUntil(own2, (t) => t.includes("event: change")), /event: change/);
  await assert.rejects(readUntil(shared2, (t) => t.includes("event: change"), 700), /timed out/);
  await using inShared = await connectWith(app.app, SECRETS.ci, "/mcp/shared");
  await ok(inShared.client, "createTask", { sessionId: "plan", name: "in shared" });
  const shared3 = await openStream(app.app, "ci", "shared");
  await ok(inShared.client, "createTask", { sessionId: "plan", name: "again in shared" });
  assert.match(await readUntil(shared3, (t) => t.includes("event: change")), /event: change/);
  for (const reader of [own2, shared2, shared3, other]) await reader.cancel();
});

Deno.test("the dashboard without ns works in the credential's own namespace: /api/view?session=a finds it", async () => {
  await using file = await tokensFile(ENTRIES);
  await using app = await accessApp({ authTokensFile: file.path });
  await using ci = await connectWith(app.app, SECRETS.ci);
  await ok(ci.client, "createTask", { sessionId: "a", name: "Own namespace task" });
  const view = await send(app.app, { path: "/api/view?session=a", headers: bearer("ci") });
  assert.equal(view.status, 200);
  const body = await view.json();
  assert.equal(body.session?.namespace, "team-b");
  assert.equal(body.session?.id, "a");
  const page = await send(app.app, { path: "/?session=a", headers: bearer("ci") });
  assert.match(await page.text(), /Own namespace task/);
  const children = await send(app.app, {
    path: "/api/children?session=a&offset=0&count=5",
    headers: bearer("ci"),
  });
  assert.equal(children.status, 200);
  assert.equal((await children.json()).rows.length, 1);
});

Deno.test("revocation: removing a token ends its event streams and MCP streams within 2 seconds; its connections answer 401", async () => {
  await using file = await tokensFile(ENTRIES);
  const { log, records } = recordingLogger();
  await using app = await accessApp({ authTokensFile: file.path }, { log });
  const events = await openStream(app.app, "viewer");
  const id = await openRawConnection(app.app, bearer("viewer"));
  const headers = { ...bearer("viewer"), "mcp-session-id": id };
  await (await post(app.app, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).body
    ?.cancel();
  const get = await send(app.app, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
  assert.equal(get.status, 200);
  const mcpStream = get.body!.getReader();
  const theirEvents = await openStream(app.app, "ci");
  const theirs = await openRawConnection(app.app, bearer("ci"));

  const start = performance.now();
  await file.write(ENTRIES.filter((e) => e.name !== "viewer"));
  await Promise.all([ended(events), ended(mcpStream)]);
  const took = performance.now() - start;
  assert.ok(took < 2000, `ended after ${Math.round(took)} ms`);
  assert.equal(await pingStatus(app.app, "viewer", id), 401);

  assert.equal(await pingStatus(app.app, "ci", theirs), 200, "another credential's connection lives on");
  await using ci = await connectWith(app.app, SECRETS.ci);
  await ok(ci.client, "createTask", { sessionId: "plan", name: "after the revocation" });
  assert.match(await readUntil(theirEvents, (t) => t.includes("event: change")), /event: change/);
  await theirEvents.cancel();
  const logged = records.filter((r) => r.msg.includes("revoked"));
  assert.ok(logged.some((r) => r.credential === "viewer"), "the log names the revoked credential");
  assert.ok(!JSON.stringify(records).includes(SECRETS.viewer), "never its secret");
});

Deno.test("revocation: a rewritten tokens file ends the streams of entries it changed and keeps those it kept", async () => {
  await using file = await tokensFile(ENTRIES);
  await using app = await accessApp({ authTokensFile: file.path });
  const changed = await openStream(app.app, "viewer");
  const kept = await openStream(app.app, "ci");
  await file.write(ENTRIES.map((e) => e.name === "viewer" ? { ...e, access: "write" as const } : e));
  await ended(changed);
  await using ci = await connectWith(app.app, SECRETS.ci);
  await ok(ci.client, "createTask", { sessionId: "plan", name: "kept alive" });
  assert.match(await readUntil(kept, (t) => t.includes("event: change")), /event: change/);
  await kept.cancel();
});
