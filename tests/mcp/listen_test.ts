/**
 * `subscriptions/listen` (docs/protocol.md "Protocol eras"): a lead listening on a session's resource hears,
 * within 2 s, every change any process on the same store makes; a new session is a list change;
 * a capability is declared only where its notification is sent; a namespace hears only itself;
 * listen streams count in the fair shares of event streams and end when their credential is revoked
 * or its token expires; noticing a change reads what was subscribed, never the whole namespace. And
 * the handshake era's `resources/subscribe` hears the same changes.
 */
import assert from "node:assert/strict";
import { createTask } from "../../lib/domain/task_ops.ts";
import { MemoryStore } from "../../lib/store/memory_store.ts";
import type { Store } from "../../lib/store/store.ts";
import { call, type Connection, ok, spawnStdio, startHttp } from "../support/harness.ts";
import { makeApp, modernRequest, send } from "../support/http.ts";
import { accessApp, servedAccessApp, tokensFile } from "../support/auth.ts";
import { startIssuer } from "../support/oauth.ts";
import { readSse } from "../support/sse.ts";
import { sleep, until } from "../support/time.ts";
import type { Client } from "../support/sdk_client.ts";

type Json = Record<string, unknown>;

/** The notifications a client receives, with when each came. */
function heard(client: Client): { uri?: string; method: string; at: number }[] {
  const seen: { uri?: string; method: string; at: number }[] = [];
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    seen.push({ method: n.method, uri: n.params.uri, at: Date.now() });
  });
  client.setNotificationHandler("notifications/resources/list_changed", (n) => {
    seen.push({ method: n.method, at: Date.now() });
  });
  return seen;
}

async function places(): Promise<[string, Record<string, string>, () => Promise<void>][]> {
  const dir = await Deno.makeTempDir({ prefix: "checklist-listen-" });
  const cleanup = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  return [
    ["JSON file", { FILE_PATH: `${dir}/plan.json` }, cleanup],
    ["Deno KV", { KV_PATH: `${dir}/plan.kv` }, cleanup],
  ];
}

for (const lead of ["stdio", "HTTP"] as const) {
  Deno.test(`a lead listening over ${lead} hears, within 2 s, a worker process change its session, and a new session`, async (t) => {
    for (const [label, env, cleanup] of await places()) {
      await t.step(label, async () => {
        try {
          await using worker = await spawnStdio({ env });
          await ok(worker.client, "createTask", {
            sessionId: "plan",
            id: "a",
            name: "A",
            tasks: [{ id: "a1", name: "A1" }],
          });
          await using boss = lead === "stdio" ? await spawnStdio({ env }) : await startHttp({ env });
          const seen = heard(boss.client);
          const subscription = await boss.client.listen({
            resourceSubscriptions: ["checklist://sessions/plan"],
            resourcesListChanged: true,
          });
          assert.deepEqual(subscription.honoredFilter, {
            resourceSubscriptions: ["checklist://sessions/plan"],
            resourcesListChanged: true,
          });
          const started = Date.now();
          await ok(worker.client, "startTask", { sessionId: "plan", id: "a1" });
          await until(() => seen.some((s) => s.uri === "checklist://sessions/plan"));
          const update = seen.find((s) => s.uri === "checklist://sessions/plan");
          assert.ok(update, `heard nothing: ${JSON.stringify(seen)}`);
          assert.ok(update.at - started < 2000, `heard after ${update.at - started} ms`);
          assert.ok(!seen.some((s) => s.method.endsWith("list_changed")), "no list change for an update");

          seen.length = 0;
          await ok(worker.client, "createTask", { sessionId: "other", name: "B" });
          await until(() => seen.some((s) => s.method === "notifications/resources/list_changed"));
          assert.ok(
            seen.some((s) => s.method === "notifications/resources/list_changed"),
            JSON.stringify(seen),
          );
          assert.ok(!seen.some((s) => s.uri !== undefined), "a session nobody listens to is not announced");
          await subscription.close();
        } finally {
          await cleanup();
        }
      });
    }
  });
}

Deno.test("capabilities are declared only where their notification is sent: no tool or prompt list changes", async () => {
  await using conn = await startHttp();
  const capabilities = conn.client.getServerCapabilities()!;
  assert.equal(capabilities.tools?.listChanged, undefined);
  assert.equal(capabilities.prompts?.listChanged, undefined);
  assert.equal(capabilities.resources?.listChanged, true);
  assert.equal(capabilities.resources?.subscribe, true);
  const subscription = await conn.client.listen({
    toolsListChanged: true,
    promptsListChanged: true,
    resourcesListChanged: true,
  });
  assert.deepEqual(subscription.honoredFilter, { resourcesListChanged: true });
  await subscription.close();
});

/** A raw listen request to the app; the SSE response. */
function listen(
  app: Parameters<typeof send>[0],
  notifications: Json,
  headers: Record<string, string> = {},
  path = "/mcp",
) {
  const request = modernRequest("subscriptions/listen", { notifications }, { id: 7 });
  return send(app, { path, method: "POST", headers: { ...request.headers, ...headers }, body: request.body });
}

/** Reads a listen stream's messages as they come; `ended` settles when the stream ends. */
function follow(response: Response): { messages: Json[]; ended: Promise<void> } {
  const messages: Json[] = [];
  const ended = (async () => {
    for await (const event of readSse(response.body!)) messages.push(JSON.parse(event.data));
  })().catch(() => {});
  return { messages, ended };
}

async function ended(stream: { ended: Promise<void> }, ms: number): Promise<boolean> {
  return await Promise.race([stream.ended.then(() => true), sleep(ms).then(() => false)]);
}

Deno.test("a namespace's listeners hear only that namespace, whatever the session is called", async () => {
  const store = new MemoryStore();
  await using app = makeApp({}, { store });
  const a = follow(
    await listen(app.app, { resourceSubscriptions: ["checklist://sessions/plan"] }, {}, "/mcp/team-a"),
  );
  await until(() => a.messages.length > 0);
  assert.equal(
    a.messages[0]!.method,
    "notifications/subscriptions/acknowledged",
    "the acknowledgement comes first",
  );
  await store.space("team-b").updateTree("plan", (tree) => createTask(tree, { name: "B's" }));
  await sleep(300);
  assert.equal(a.messages.length, 1, `team-a heard team-b: ${JSON.stringify(a.messages)}`);
  await store.space("team-a").updateTree("plan", (tree) => createTask(tree, { name: "A's" }));
  await until(() => a.messages.length > 1);
  assert.equal((a.messages[1]!.params as Json).uri, "checklist://sessions/plan");
  await app.close();
});

Deno.test("noticing a change reads what was subscribed, never the whole namespace: no export while streams are open", async () => {
  const store = new MemoryStore();
  let exports = 0;
  const counting: Store = new Proxy(store, {
    get(target, key, receiver) {
      if (key === "exportDocument") {
        return (...args: unknown[]) => {
          exports++;
          return (target.exportDocument as (...a: unknown[]) => unknown)(...args);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  await using app = makeApp({}, { store: counting });
  const stream = follow(
    await listen(app.app, { resourceSubscriptions: ["checklist://sessions/s"], resourcesListChanged: true }),
  );
  await until(() => stream.messages.length > 0);
  for (let i = 0; i < 20; i++) {
    await store.space("default").updateTree("s", (tree) => createTask(tree, { name: `t${i}` }));
  }
  await until(() => stream.messages.some((m) => m.method === "notifications/resources/updated"));
  assert.ok(stream.messages.some((m) => m.method === "notifications/resources/updated"));
  assert.equal(exports, 0);
  await app.close();
});

Deno.test("listen streams count in a credential's fair share of event streams: at its share its oldest ends", async () => {
  const secret = "listener-secret-0123456789abcdef";
  await using file = await tokensFile([{
    name: "lead",
    token: secret,
    namespaces: ["team"],
    access: "read",
  }]);
  // A cap of 4 streams: each credential's share is 1.
  await using app = await accessApp({ authTokensFile: file.path }, { events: { maxStreams: 4 } });
  const bearer = { authorization: `Bearer ${secret}` };
  const first = follow(await listen(app.app, { resourcesListChanged: true }, bearer));
  await until(() => first.messages.length > 0);
  assert.equal(await ended(first, 100), false);
  const second = follow(await listen(app.app, { resourcesListChanged: true }, bearer));
  await until(() => second.messages.length > 0);
  assert.equal(await ended(first, 1000), true, "the first stream ended for the second");
  assert.equal(await ended(second, 100), false);
  await app.close();
});

Deno.test("a revoked token's listen stream ends within 2 s", async () => {
  const secret = "revoked-secret-0123456789abcdef";
  await using file = await tokensFile([{
    name: "lead",
    token: secret,
    namespaces: ["team"],
    access: "read",
  }]);
  await using app = await accessApp({ authTokensFile: file.path });
  const stream = follow(
    await listen(app.app, { resourcesListChanged: true }, { authorization: `Bearer ${secret}` }),
  );
  await until(() => stream.messages.length > 0);
  assert.equal(await ended(stream, 300), false, "open while the token is valid");
  await file.write([]);
  assert.equal(await ended(stream, 2000), true, "the stream ended");
  await app.close();
});

Deno.test("an OAuth token's listen stream ends at the token's exp, however far away it is", async (t) => {
  await using issuer = await startIssuer();
  await using served = await servedAccessApp({ oauthIssuer: issuer.url }, {
    tuning: { clockToleranceSec: 0 },
  });
  const app = served;
  const listenWith = async (expiresIn: number) => {
    const token = await issuer.server.issuer.buildToken({
      expiresIn,
      scopesOrTransform: (_header, payload) =>
        Object.assign(payload, { sub: "alice", scope: "checklist:read", aud: `${served.url}/mcp` }),
    });
    const request = modernRequest("subscriptions/listen", { notifications: { resourcesListChanged: true } });
    const response = await fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: { ...request.headers, authorization: `Bearer ${token}` },
      body: request.body,
    });
    assert.equal(response.status, 200);
    const stream = follow(response);
    await until(() => stream.messages.length > 0);
    const exp = JSON.parse(atob(token.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/")))
      .exp as number;
    return { stream, exp };
  };
  await t.step("in 2 s: it ends then", async () => {
    const { stream, exp } = await listenWith(2);
    assert.equal(await ended(stream, 300), false, "open while the token is valid");
    assert.equal(await ended(stream, 6000), true, "the stream ended");
    const late = Date.now() - exp * 1000;
    // At exp, not before (the server's clock tolerance is 0 here), and promptly after, load allowing.
    assert.ok(late > -100 && late < 2000, `it ended ${late} ms after the token's exp`);
  });
  await t.step("in 30 days (past what one timer holds): it stays open and hears", async () => {
    const { stream } = await listenWith(30 * 24 * 3600);
    assert.equal(await ended(stream, 500), false, "open while the token is valid");
    await app.store.space("oauth.alice").updateTree("plan", (tree) => createTask(tree, { name: "A" }));
    await until(() => stream.messages.length > 1);
    assert.equal(stream.messages[1]?.method, "notifications/resources/list_changed");
  });
});

Deno.test("the handshake era's resources/subscribe hears a worker process's change within 2 s", async () => {
  const [, env, cleanup] = (await places())[0]!;
  try {
    await using worker: Connection = await spawnStdio({ env });
    await ok(worker.client, "createTask", { sessionId: "plan", id: "a", name: "A" });
    await using boss = await spawnStdio({ env, era: "legacy" });
    const seen = heard(boss.client);
    await boss.client.subscribeResource({ uri: "checklist://sessions/plan" });
    const started = Date.now();
    await call(worker.client, "startTask", { sessionId: "plan", id: "a" });
    await until(() => seen.length > 0);
    assert.equal(seen[0]?.uri, "checklist://sessions/plan");
    assert.ok(seen[0]!.at - started < 2000);
    await boss.client.unsubscribeResource({ uri: "checklist://sessions/plan" });
    seen.length = 0;
    await call(worker.client, "completeTask", { sessionId: "plan", id: "a", resolution: "done" });
    await sleep(1200);
    assert.deepEqual(seen, [], "nothing after unsubscribing");
  } finally {
    await cleanup();
  }
});
