/**
 * Dashboard access over HTTP (in process, `app.request`): credentials, share links, the loopback
 * guard, and the security headers on every response.
 */
import assert from "node:assert/strict";
import { CONTENT_SECURITY_POLICY } from "../../lib/dashboard/server/security.ts";
import { makeApp, send } from "../support/http.ts";

const TOKEN = "s3cret-token-for-tests";
const ROUTES = ["/", "/api/view", "/api/children?session=default&offset=0&count=5", "/events"];

Deno.test("with AUTH_TOKEN, the page, the JSON routes and the events answer 401 without a credential", async () => {
  await using app = makeApp({ authToken: TOKEN });
  for (const path of ROUTES) {
    const missing = await send(app.app, { path });
    assert.equal(missing.status, 401, path);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="checklist-mcp"');
    assert.ok(!(await missing.text()).includes(TOKEN));
    const wrong = await send(app.app, { path, headers: { authorization: "Bearer nope" } });
    assert.equal(wrong.status, 401, path);
    assert.match(wrong.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    await wrong.body?.cancel();
    const badCookie = await send(app.app, { path, headers: { cookie: "checklist_token=nope" } });
    assert.equal(badCookie.status, 401, path);
    await badCookie.body?.cancel();
  }
  for (const path of ROUTES.slice(0, 2)) {
    const good = await send(app.app, { path, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(good.status, 200, path);
    await good.body?.cancel();
  }
});

Deno.test("a share link sets an HttpOnly SameSite=Strict cookie and redirects to the same page without the token", async () => {
  await using app = makeApp({ authToken: TOKEN });
  const response = await send(app.app, { path: `/?session=plan&token=${TOKEN}`, redirect: "manual" });
  assert.equal(response.status, 303);
  assert.equal(response.headers.get("location"), "/?session=plan");
  const cookie = response.headers.get("set-cookie") ?? "";
  assert.match(cookie, new RegExp(`^checklist_token=${TOKEN};`));
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Path=\//);
  assert.doesNotMatch(cookie, /Secure/, "no Secure flag over plain http");
  assert.equal(response.headers.get("referrer-policy"), "no-referrer");

  const page = await send(app.app, {
    path: "/?session=plan",
    headers: { cookie: `checklist_token=${TOKEN}` },
  });
  assert.equal(page.status, 200);
  await page.body?.cancel();
  const data = await send(app.app, { path: "/api/view", headers: { cookie: `checklist_token=${TOKEN}` } });
  assert.equal(data.status, 200);
  await data.body?.cancel();
});

Deno.test("a share link over https sets a Secure cookie", async () => {
  await using app = makeApp({ authToken: TOKEN });
  const response = await send(app.app, {
    path: `/?token=${TOKEN}`,
    redirect: "manual",
    headers: { "x-forwarded-proto": "https" },
  });
  assert.equal(response.status, 303);
  assert.equal(response.headers.get("location"), "/");
  assert.match(response.headers.get("set-cookie") ?? "", /; Secure/);
});

Deno.test("a share link with a wrong token is 401 and sets no cookie", async () => {
  await using app = makeApp({ authToken: TOKEN });
  for (const token of ["wrong", ""]) {
    const response = await send(app.app, { path: `/?token=${token}`, redirect: "manual" });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get("set-cookie"), null);
    await response.body?.cancel();
  }
});

Deno.test("without access control the dashboard answers loopback hosts only", async () => {
  await using app = makeApp();
  for (const path of ROUTES.slice(0, 2)) {
    const local = await send(app.app, { path });
    assert.equal(local.status, 200, path);
    await local.body?.cancel();
    const foreign = await app.app.request(`http://evil.example${path}`, {
      headers: { host: "evil.example" },
    });
    assert.equal(foreign.status, 403, path);
    await foreign.body?.cancel();
    const rebinding = await send(app.app, { path, headers: { origin: "http://evil.example" } });
    assert.equal(rebinding.status, 403, path);
    await rebinding.body?.cancel();
  }
});

Deno.test("every dashboard response carries a CSP that allows only the server's own origin", async () => {
  await using app = makeApp();
  const page = await send(app.app, { path: "/" });
  const html = await page.text();
  assert.equal(page.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
  assert.match(CONTENT_SECURITY_POLICY, /^default-src 'self'/);
  assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe|https?:|\*/);
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  assert.equal(page.headers.get("cache-control"), "no-store");
  // No inline script, style or handler in the page itself.
  assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  assert.doesNotMatch(html, /https?:\/\//);
  const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  assert.equal(assets.length, 3);
  for (const path of assets) {
    const asset = await send(app.app, { path });
    assert.equal(asset.status, 200, path);
    assert.equal(asset.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
    const body = await asset.text();
    assert.doesNotMatch(body, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, `${path} names another host`);
  }
  const json = await send(app.app, { path: "/api/view" });
  assert.equal(json.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
  await json.body?.cancel();
});

Deno.test("the dashboard routes only read: other methods are not found", async () => {
  await using app = makeApp();
  for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
    for (const path of ROUTES) {
      const response = await send(app.app, { path, method });
      assert.equal(response.status, 404, `${method} ${path}`);
      await response.body?.cancel();
    }
  }
});

Deno.test("the children route checks its query and answers 404 for an unknown session or task", async () => {
  await using app = makeApp();
  const bad = await send(app.app, { path: "/api/children?offset=0" });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  const unknown = await send(app.app, { path: "/api/children?session=nope&offset=0&count=5" });
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
});
