/**
 * The sign-in pages' frame (lib/http/auth/routes.ts, browser_session.ts,
 * pages.ts): the tenant chooser, no open redirect through `next`, strict
 * page headers, sign-out with the page's CSRF token only.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { safeNext } from "../../../lib/http/auth/browser_session.ts";
import { OIDC_POLICY, ORIGIN, signInTest } from "./world.ts";

Deno.test("next accepts same-origin paths only", () => {
  assertEquals(safeNext("/ui/acme/web?env=prod#flags"), "/ui/acme/web?env=prod#flags");
  for (
    const bad of [
      "//evil.test/x",
      "/\\evil.test",
      "https://evil.test/",
      "evil.test",
      "javascript:alert(1)",
      "/\t/evil.test",
      "",
      null,
    ]
  ) {
    assertEquals(safeNext(bad), "/auth/signed-in", String(bad));
  }
});

signInTest(
  "the login page asks for a tenant, with strict headers and a labelled field",
  async (w) => {
    const res = await w.call("GET", "/auth/login?next=//evil.test");
    assertEquals(res.status, 200);
    const csp = res.headers.get("content-security-policy") ?? "";
    assertStringIncludes(csp, "default-src 'none'");
    assert(!csp.includes("unsafe-inline"));
    assertEquals(res.headers.get("referrer-policy"), "same-origin");
    assertEquals(res.headers.get("cache-control"), "no-store");
    const page = await res.text();
    assertStringIncludes(page, '<label for="tenant">');
    assertStringIncludes(page, 'name="next" value="/auth/signed-in"', "the unsafe next is dropped");
    assertEquals(
      safeNext("/.//evil.test"),
      "/auth/signed-in",
      "normalised paths are checked again",
    );
    assertEquals(safeNext("/%2e%2e//evil.test"), "/auth/signed-in");
    const css = await w.call("GET", "/auth/assets/style.css");
    assertEquals(css.headers.get("content-type"), "text/css; charset=utf-8");
  },
);

signInTest("an unknown tenant is no such tenant; a tenant without sign-in says so", async (w) => {
  const a = await w.call("GET", "/auth/login?tenant=acme", { headers: { accept: "text/html" } });
  const b = await w.call("GET", "/auth/login?tenant=nope", { headers: { accept: "text/html" } });
  assertEquals([a.status, b.status], [404, 404]);
  const [withoutSignIn, unknown] = [await a.text(), await b.text()];
  assertStringIncludes(withoutSignIn, "Tenant acme has no sign-in set up");
  assertStringIncludes(unknown, "No such tenant: nope");
  assert(!unknown.includes("no sign-in set up"), unknown);
  // (each such answer counts against the per-address limit: tests/e2e/first_run_test.ts)
});

signInTest("sign-out with the cookie needs the page's CSRF token", async (w) => {
  const ana = await w.person("ana@acme.test", "acme");
  const landing = await w.call("GET", "/auth/signed-in", { cookie: ana.cookie });
  assertStringIncludes(await landing.text(), "ana@acme.test");
  const forged = await w.call("POST", "/auth/logout", {
    cookie: ana.cookie,
    headers: { origin: "https://evil.test", accept: "text/html" },
    body: new URLSearchParams({ _csrf: ana.csrf }),
  });
  assertEquals(forged.status, 403);
  const missing = await w.call("POST", "/auth/logout", {
    cookie: ana.cookie,
    headers: { origin: ORIGIN },
    body: new URLSearchParams({}),
  });
  assertEquals(missing.status, 403);
  assertEquals((await w.call("GET", "/api/v1/me", { cookie: ana.cookie })).status, 200);
  const out = await w.call("POST", "/auth/logout", {
    cookie: ana.cookie,
    headers: { origin: ORIGIN },
    body: new URLSearchParams({ _csrf: ana.csrf }),
  });
  assertEquals(out.status, 200);
  assertStringIncludes(out.headers.get("set-cookie") ?? "", "Max-Age=0");
  assertEquals((await w.call("GET", "/api/v1/me", { cookie: ana.cookie })).status, 401);
});

signInTest("a CLI session signs itself out with its bearer token", async (w) => {
  const ana = await w.person("ana@acme.test", "acme");
  const res = await w.json("POST", "/auth/logout", { bearer: ana.secret });
  assertEquals([res.status, (res.body.session as { status: string }).status], [200, "revoked"]);
  assertEquals((await w.call("GET", "/api/v1/me", { bearer: ana.secret })).status, 401);
  const token = await w.json("POST", "/auth/logout", { bearer: w.admin });
  assertEquals(token.status, 403);
});

signInTest("a sign-in form body over 64 KiB is refused before it is read", async (w) => {
  const res = await w.call("POST", "/auth/email/start", {
    headers: { origin: ORIGIN },
    body: new URLSearchParams({ tenant: "acme", email: "a".repeat(70_000) }),
  });
  assertEquals(res.status, 413);
});

signInTest(
  "sign-in refuses to build its URLs from a Host that is not loopback nor the public URL",
  async (w) => {
    await w.json("PUT", "/api/v1/tenants/acme/login", { bearer: w.admin, body: OIDC_POLICY });
    const res = await w.call("GET", "/auth/login?tenant=acme", {
      origin: "http://evil.example",
      headers: { accept: "text/html" },
    });
    assertEquals(res.status, 503);
    assertStringIncludes(await res.text(), "--public-url");
  },
);

signInTest("a sign-in started by another site asks the person before going on", async (w) => {
  await w.json("PUT", "/api/v1/tenants/acme/login", { bearer: w.admin, body: OIDC_POLICY });
  const res = await w.call("GET", "/auth/login?tenant=acme&next=/ui", {
    headers: { "sec-fetch-site": "cross-site" },
  });
  assertEquals(res.status, 200, "a page, not a redirect to the provider");
  const page = await res.text();
  assertStringIncludes(page, "Continue to sign in to <strong>acme</strong>?");
  assertStringIncludes(page, 'name="tenant" value="acme"');
});

signInTest("over HTTPS only the __Host- cookie counts; a plain one is ignored", async (w) => {
  const ana = await w.person("ana@acme.test", "acme");
  const planted = await w.call("GET", "/api/v1/me", {
    origin: "https://flags.test",
    cookie: `cfgtool_session=${ana.secret}`,
  });
  assertEquals(planted.status, 401);
  const proper = await w.call("GET", "/api/v1/me", {
    origin: "https://flags.test",
    cookie: `__Host-cfgtool_session=${ana.secret}`,
  });
  assertEquals(proper.status, 200);
});
