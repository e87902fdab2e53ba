/**
 * The dashboard under the tokens file: a share link with a read token signs a person in (cookie,
 * redirect without the token), the page shows only what the token may see, the cookie stops
 * working when the token is revoked, and nothing gets in without a credential.
 */
import assert from "node:assert/strict";
import { send } from "../support/http.ts";
import { ok } from "../support/harness.ts";
import { accessApp, connectWith, sha256Hex, tokensFile } from "../support/auth.ts";

const ADMIN = "admin-secret-0123456789abcdef";
const VIEWER = "viewer-secret-0123456789abcdef";
const OUTSIDER = "outsider-secret-0123456789abcdef";

Deno.test("dashboard: a share link with a read token from the tokens file signs in; without a credential 401", async () => {
  await using file = await tokensFile([
    { name: "admin", token: ADMIN, namespaces: "*", access: "write" },
    { name: "viewer", token: `sha256:${await sha256Hex(VIEWER)}`, namespaces: ["default"], access: "read" },
    { name: "outsider", token: OUTSIDER, namespaces: ["team-b"], access: "read" },
  ]);
  await using app = await accessApp({ authTokensFile: file.path });
  await using admin = await connectWith(app.app, ADMIN);
  await ok(admin.client, "createTask", { sessionId: "launch", name: "Visible to the viewer" });

  for (const path of ["/", "/api/view", "/events"]) {
    const missing = await send(app.app, { path });
    assert.equal(missing.status, 401, path);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="checklist-mcp"');
    await missing.body?.cancel();
  }

  const link = await send(app.app, { path: `/?session=launch&token=${VIEWER}`, redirect: "manual" });
  assert.equal(link.status, 303);
  assert.equal(link.headers.get("location"), "/?session=launch");
  const cookie = link.headers.get("set-cookie") ?? "";
  assert.match(cookie, /^checklist_token=[^;]+; .*HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  const jar = cookie.split(";")[0]!;

  const page = await send(app.app, { path: "/?session=launch", headers: { cookie: jar } });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Visible to the viewer/);
  const view = await send(app.app, { path: "/api/view", headers: { cookie: jar } });
  assert.equal(view.status, 200);
  assert.ok(JSON.stringify(await view.json()).includes("Visible to the viewer"));

  // A token for another namespace sees none of it.
  const other = await send(app.app, { path: "/api/view", headers: { authorization: `Bearer ${OUTSIDER}` } });
  assert.equal(other.status, 200);
  assert.ok(!JSON.stringify(await other.json()).includes("Visible to the viewer"));

  // A wrong share link sets nothing; a revoked token's cookie stops working at once.
  const wrong = await send(app.app, { path: `/?token=${VIEWER}x`, redirect: "manual" });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers.get("set-cookie"), null);
  assert.match(wrong.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  await wrong.body?.cancel();
  await file.write([{ name: "admin", token: ADMIN, namespaces: "*", access: "write" }]);
  const revoked = await send(app.app, { path: "/api/view", headers: { cookie: jar } });
  assert.equal(revoked.status, 401);
  await revoked.body?.cancel();
});
