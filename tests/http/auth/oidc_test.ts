/**
 * The OIDC routes in-process (lib/http/auth/oidc.ts): the start of a
 * sign-in (redirect to the provider, state bound to the browser by a
 * cookie) and the callback's refusals that need no provider. The whole
 * flow against a real provider is tests/e2e/login_oidc_test.ts.
 */
import { assert, assertEquals } from "../../assert.ts";
import { signInTest, type SignInWorld } from "./world.ts";

Deno.env.set("CFGTOOL_TEST_OIDC_ROUTES_SECRET", "s3cret");

/** A fake issuer that serves only its discovery document. */
function fakeIssuer() {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const issuer = new URL(req.url).origin;
    return Response.json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
    });
  });
  return {
    issuer: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Sets acme's policy to OIDC through `issuer`. */
async function oidcPolicy(
  w: SignInWorld,
  issuer: string,
  secretRef = "env:CFGTOOL_TEST_OIDC_ROUTES_SECRET",
) {
  const res = await w.json("PUT", "/api/v1/tenants/acme/login", {
    bearer: w.admin,
    body: { method: "oidc", issuer, client_id: "cfgtool", client_secret_ref: secretRef },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
}

/** The `login.failed` reasons in acme's audit log. */
async function failedReasons(w: SignInWorld): Promise<unknown[]> {
  const res = await w.json("GET", "/api/v1/audit?tenant=acme&type=login.failed", {
    bearer: w.admin,
  });
  return (res.body.entries as { details: { reason: unknown } }[]).map((e) => e.details.reason);
}

signInTest(
  "GET /auth/login for an OIDC tenant redirects to the provider and binds the state to the browser",
  async (w) => {
    await using idp = fakeIssuer();
    await oidcPolicy(w, idp.issuer);
    const res = await w.call("GET", "/auth/login?tenant=acme&next=/ui/acme");
    assertEquals(res.status, 303);
    const to = new URL(res.headers.get("location")!);
    assertEquals(`${to.origin}${to.pathname}`, `${idp.issuer}/authorize`);
    assertEquals(to.searchParams.get("redirect_uri"), "http://127.0.0.1:8080/auth/oidc/callback");
    assertEquals(to.searchParams.get("code_challenge_method"), "S256");
    const state = to.searchParams.get("state")!;
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("cfgtool_oidc="));
    assert(cookie !== undefined, res.headers.getSetCookie().join("\n"));
    assert(cookie.startsWith(`cfgtool_oidc=${state};`), cookie);
    assert(
      /HttpOnly/i.test(cookie) && /SameSite=Lax/i.test(cookie) && /Max-Age=600/i.test(cookie),
      cookie,
    );
    assertEquals(res.headers.get("cache-control"), "no-store");
  },
);

signInTest(
  "a callback without the browser's flow cookie is a 403 page and an audited state refusal",
  async (w) => {
    await using idp = fakeIssuer();
    await oidcPolicy(w, idp.issuer);
    const start = await w.call("GET", "/auth/login?tenant=acme");
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    const res = await w.call("GET", `/auth/oidc/callback?code=abc&state=${state}`, {
      headers: { accept: "text/html" },
    });
    assertEquals(res.status, 403);
    assert(res.headers.get("content-type")?.startsWith("text/html"));
    const page = await res.text();
    assert(page.includes("This sign-in was not started in this browser"), page);
    assertEquals(res.headers.getSetCookie().filter((c) => c.startsWith("cfgtool_session=")), []);
    assertEquals(await failedReasons(w), ["state"]);
  },
);

signInTest("a callback with no state at all is a 400 page", async (w) => {
  const res = await w.call("GET", "/auth/oidc/callback?code=abc", {
    headers: { accept: "text/html" },
  });
  assertEquals(res.status, 400);
  assert((await res.text()).includes("carries no state"));
});

signInTest(
  "a provider that does not answer makes /auth/login a 503 page, not a redirect",
  async (w) => {
    const gone = fakeIssuer();
    const issuer = gone.issuer;
    await gone[Symbol.asyncDispose]();
    await oidcPolicy(w, issuer);
    const res = await w.call("GET", "/auth/login?tenant=acme", {
      headers: { accept: "text/html" },
    });
    assertEquals(res.status, 503);
    const page = await res.text();
    assert(page.includes("did not answer with its OpenID configuration"), page);
    assert(!/\bat .*:\d+:\d+/.test(page), page);
  },
);

signInTest("a client secret the server cannot read makes /auth/login a 503 page", async (w) => {
  await using idp = fakeIssuer();
  await oidcPolicy(w, idp.issuer, "env:CFGTOOL_TEST_OIDC_ROUTES_NO_SUCH_SECRET");
  const res = await w.call("GET", "/auth/login?tenant=acme", { headers: { accept: "text/html" } });
  assertEquals(res.status, 503);
  assert((await res.text()).includes("is not available to the server"));
});

signInTest(
  "a callback from a browser that started another sign-in is refused, and its flow cookie cleared",
  async (w) => {
    await using idp = fakeIssuer();
    await oidcPolicy(w, idp.issuer);
    const first = await w.call("GET", "/auth/login?tenant=acme");
    const state = new URL(first.headers.get("location")!).searchParams.get("state")!;
    const res = await w.call("GET", `/auth/oidc/callback?code=abc&state=${state}`, {
      cookie: "cfgtool_oidc=state-of-another-sign-in",
      headers: { accept: "text/html" },
    });
    assertEquals(res.status, 403);
    const cleared = res.headers.getSetCookie().find((c) => c.startsWith("cfgtool_oidc="));
    assert(cleared !== undefined && /Max-Age=0/i.test(cleared), res.headers.getSetCookie().join());
    assertEquals(await failedReasons(w), ["state"]);
  },
);
