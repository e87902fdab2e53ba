/**
 * Listen streams under a race and a hostile tenant (docs/hosting.md "Hosting for a team", docs/protocol.md "Protocol eras";
 * docs/hosting.md "Tenants never crowd each other out"), against one real server process on
 * 127.0.0.1 with a real tokens file: streams opened concurrently never exceed their credential's
 * share, a revocation ends every stream of the credential (pending ones too) within 2 s, the
 * resources a stream and a credential may name are capped, and a client that does not read is
 * ended as a slow reader. Every loop is bounded in count and time.
 */
import assert from "node:assert/strict";
import type { TokenEntry } from "../../lib/auth/tokens_file.ts";
import { LIMITS } from "../../lib/domain/limits.ts";
import { fairShare } from "../../lib/auth/fair_share.ts";
import { DEFAULTS } from "../../lib/config.ts";
import { tokensFile } from "../support/auth.ts";
import { modernRequest, postModern } from "../support/http.ts";
import { acknowledged, holdListen, type ListenStream, openListen } from "../support/listen.ts";
import type { LogRecord } from "../support/logs.ts";
import { spawnServer } from "../support/server_process.ts";
import { sleep, until } from "../support/time.ts";

const SECRETS = {
  lead: "lead-secret-0123456789abcdef",
  writer: "writer-secret-0123456789abcdef",
  doomed: "doomed-secret-0123456789abcdef",
  bulk: "bulk-secret-0123456789abcdef",
  slow: "slow-secret-0123456789abcdef",
} as const;
type Tenant = keyof typeof SECRETS;

const ENTRIES: TokenEntry[] = (Object.keys(SECRETS) as Tenant[]).map((name) => ({
  name,
  token: SECRETS[name],
  namespaces: ["team"],
  access: name === "writer" ? "write" : "read",
}));

const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${SECRETS[tenant]}` });
const SHARE = fairShare(DEFAULTS.maxEventStreams);

/** Whether a stream is open now: it is a stream and has not ended. */
const isOpen = (s: ListenStream) => s.streaming && s.endedAt === undefined;

Deno.test("listen streams under a race: the share holds, revocation reaches every stream, resources and unread queues are capped", async (t) => {
  await using file = await tokensFile(ENTRIES);
  const server = await spawnServer({ env: { AUTH_TOKENS_FILE: file.path, LOG_LEVEL: "debug" } });
  const url = `${server.url}/mcp`;
  const createTask = (name: string, sessionId = "plan") =>
    postModern(url, "tools/call", { name: "createTask", arguments: { sessionId, name } }, bearer("writer"));
  let logs: LogRecord[] = [];
  try {
    await t.step("150 streams opened at once by one credential: never more than its share open", async () => {
      const streams = await Promise.all(
        Array.from({ length: 150 }, () => openListen(url, { resourcesListChanged: true }, bearer("lead"))),
      );
      // The ones ended to make room end promptly; the newest stay.
      const settled = await until(() => streams.filter(isOpen).length <= SHARE, 3000);
      const open = streams.filter(isOpen);
      assert.ok(settled, `${open.length} streams of one credential open (its share: ${SHARE})`);
      assert.ok(
        open.length > 0 && await until(() => open.every(acknowledged)),
        "its newest streams are open",
      );
      for (const refused of streams.filter((s) => !s.streaming)) {
        assert.match(JSON.stringify(refused.heard[0]?.message), /fair share/, "a refusal says why");
      }
      // Another credential in the namespace still gets its stream, and it hears.
      const theirs = await openListen(url, { resourcesListChanged: true }, bearer("writer"));
      assert.ok(await until(() => acknowledged(theirs)), JSON.stringify(theirs.heard));
      await createTask("heard by the writer");
      assert.ok(
        await until(() =>
          theirs.heard.some((h) => h.message.method === "notifications/resources/list_changed")
        ),
      );
      await Promise.all([...open, theirs].map((s) => s.cancel()));
    });

    await t.step(
      "a stream names at most listenUris resources, a credential listenUrisPerCredential",
      async () => {
        const uris = (n: number, tag: string) =>
          Array.from({ length: n }, (_, i) => `checklist://sessions/${tag}${i}`);
        const tooMany = await openListen(
          url,
          { resourceSubscriptions: uris(LIMITS.listenUris + 1, "a") },
          bearer("bulk"),
        );
        assert.equal(tooMany.streaming, false);
        await tooMany.ended;
        const error = tooMany.heard[0]?.message.error as { code: number; message: string };
        assert.equal(error.code, -32602);
        assert.match(error.message, new RegExp(`at most ${LIMITS.listenUris} resources \\(listenUris\\)`));

        const full: ListenStream[] = [];
        for (const tag of ["b", "c"]) {
          full.push(
            await openListen(url, { resourceSubscriptions: uris(LIMITS.listenUris, tag) }, bearer("bulk")),
          );
        }
        assert.ok(await until(() => full.every(acknowledged)), "two full streams fit one credential");
        const past = await openListen(
          url,
          { resourceSubscriptions: ["checklist://sessions/one"] },
          bearer("bulk"),
        );
        await past.ended;
        const pastError = past.heard[0]?.message.error as { code: number; message: string };
        assert.match(pastError.message, /listenUrisPerCredential/);
        // Once one closes, there is room again.
        await full[0]!.cancel();
        let again: ListenStream | undefined;
        for (let i = 0; i < 20 && !(again && acknowledged(again)); i++) {
          await sleep(50);
          again = await openListen(
            url,
            { resourceSubscriptions: uris(LIMITS.listenUris, "d") },
            bearer("bulk"),
          );
          await until(() => again!.heard.length > 0, 1000);
        }
        assert.ok(again && acknowledged(again), JSON.stringify(again?.heard[0]));
        await Promise.all([full[1]!.cancel(), again.cancel()]);
      },
    );

    await t.step(
      "revoking a token while its streams open: every one ends within 2 s and hears nothing after",
      async () => {
        const subscribe = {
          resourceSubscriptions: ["checklist://sessions/plan"],
          resourcesListChanged: true,
        };
        await createTask("before the streams");
        const theirs = await openListen(url, subscribe, bearer("writer"));
        // Five requests whose credential is checked now, but whose bodies (and so their streams) come
        // only after the revocation has been acted on; and 40 streams opening at once.
        const held = await Promise.all(
          Array.from({ length: 5 }, () => holdListen(server.port, subscribe, bearer("doomed"))),
        );
        const opening = Array.from({ length: 40 }, () => openListen(url, subscribe, bearer("doomed")));
        await Promise.race(opening);
        const revokedAt = Date.now();
        const writing = file.write(ENTRIES.filter((e) => e.name !== "doomed"));
        const doomed = await Promise.all(opening);
        await writing;
        assert.ok(await until(() => doomed.every((s) => s.endedAt !== undefined), 2500), "the open ones end");
        await Promise.all(held.map((h) => h.sendBody()));
        // Changes go on for 3 s: no stream of the revoked credential may hear those after the first 2 s.
        for (let i = 0; Date.now() - revokedAt < 3000 && i < 100; i++) {
          await createTask(`change ${i}`);
          await sleep(100);
        }
        const late = doomed.flatMap((s) => s.heard.filter((h) => h.at - revokedAt > 2000)).map((h) =>
          h.message
        );
        const lateRaw = held.flatMap((h) =>
          h.received.filter((r) => r.at - revokedAt > 2000 && /notifications\//.test(r.text))
        );
        assert.deepEqual([...late, ...lateRaw.map((r) => r.text)], [], "heard after 2 s");
        const slowest = Math.max(...doomed.map((s) => s.endedAt! - revokedAt));
        assert.ok(slowest < 2000, `the last one ended ${slowest} ms after the revocation`);
        for (const h of held) {
          assert.match(
            h.received.map((r) => r.text).join(""),
            // Refused as revoked at the stream's opening; or, on a loaded machine where the server
            // read the head only after the file changed, refused at the credential check (401).
            /revoked|^HTTP\/1\.1 401 /,
            `a stream opening after it is refused; it received: ${
              JSON.stringify(h.received.map((r) => r.text).join("").slice(0, 400))
            }`,
          );
          await h[Symbol.asyncDispose]();
        }
        assert.ok(isOpen(theirs), "another credential's stream lives on");
        assert.ok(theirs.heard.some((h) => h.at - revokedAt > 2000), "and goes on hearing");
        await theirs.cancel();
      },
    );

    await t.step("a client that does not read is ended as a slow reader; a reading one is not", async () => {
      // Each message of this stream carries its 256 KiB id (the subscription id): the network's
      // buffers (a few MiB) fill after a few dozen changes, then the server's queue.
      const id = "x".repeat(256 * 1024);
      const request = modernRequest("subscriptions/listen", {
        notifications: { resourceSubscriptions: ["checklist://sessions/slow"] },
      });
      const body = JSON.stringify({ ...JSON.parse(request.body), id });
      const head = Object.entries({ ...request.headers, ...bearer("slow"), host: `127.0.0.1:${server.port}` })
        .map(([name, value]) => `${name}: ${value}\r\n`).join("");
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      const bytes = new TextEncoder().encode(
        `POST /mcp HTTP/1.1\r\n${head}content-length: ${body.length}\r\n\r\n${body}`,
      );
      for (let at = 0; at < bytes.byteLength;) at += await conn.write(bytes.subarray(at));
      const reader = await openListen(
        url,
        { resourceSubscriptions: ["checklist://sessions/slow"] },
        bearer("lead"),
      );
      await until(() => acknowledged(reader));
      const changes = 64; // 16 MiB for the slow client were it all queued
      for (let i = 0; i < changes; i++) await createTask(`slow ${i}`, "slow");
      await until(() => reader.heard.length > changes, 5000);
      // Now read what the slow client was sent: a part of it, then the end of the stream.
      const buffer = new Uint8Array(1 << 20);
      let received = 0;
      let tail = "";
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !tail.endsWith("\r\n0\r\n\r\n")) {
        const n = await Promise.race([conn.read(buffer), sleep(deadline - Date.now()).then(() => null)]);
        if (n === null) break;
        received += n;
        tail = (tail + new TextDecoder("latin1").decode(buffer.subarray(0, n))).slice(-16);
      }
      conn.close();
      assert.ok(tail.endsWith("\r\n0\r\n\r\n"), `the slow stream did not end (${received} bytes read)`);
      assert.ok(received < (changes / 2) * id.length, `it was sent ${received} bytes: not bounded`);
      assert.equal(
        reader.heard.filter((h) => h.message.method === "notifications/resources/updated").length,
        changes,
      );
      assert.ok(isOpen(reader), "the reading stream lives on");
      await reader.cancel();
    });
  } finally {
    const stopped = await server.stop();
    logs = stopped.stderr.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  }
  const opened = logs.filter((r) => r.msg === "listen stream opened" && r.credential === "lead");
  assert.ok(opened.length > 0, "the server logs each stream it opens");
  const most = Math.max(...opened.map((r) => r.open as number));
  assert.ok(most <= SHARE, `at one moment the credential held ${most} open streams (its share: ${SHARE})`);
  const slow = logs.filter((r) => r.msg === "listen stream ended: its client reads too slowly");
  assert.equal(slow.length, 1, "one log line for the slow reader");
  assert.equal(slow[0]!.credential, "slow");
  assert.ok(!JSON.stringify(logs).includes(SECRETS.doomed), "never a secret in the log");
});
