import { assert, assertEquals, assertRejects } from "../assert.ts";
import { LoginError, UnavailableError } from "../../lib/errors.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { hmacHex } from "../../lib/auth/digest.ts";
import {
  completeOidcFlow,
  type OidcFacts,
  type OidcFlow,
  startOidcFlow,
} from "../../lib/login/oidc_flow.ts";
import type { OidcLoginPolicy } from "../../lib/protocol/login_policy.ts";
import { eventAuditEntry } from "../../lib/store/audit.ts";
import { putLoginPolicy } from "../../lib/store/login_policies.ts";
import { peekOneTime } from "../../lib/store/one_time.ts";
import { createTenant } from "../../lib/store/tenants.ts";

const SECRET_VAR = "CFGTOOL_TEST_OIDC_FLOW_SECRET";
Deno.env.set(SECRET_VAR, "s3cret");

/** A store with tenant acme, a fake issuer's metadata, and acme's OIDC policy through it. */
async function world(scopes?: string[]) {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const issuer = new URL(req.url).origin;
    return Response.json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      ...(scopes ? { scopes_supported: scopes } : {}),
    });
  });
  const issuer = `http://127.0.0.1:${server.addr.port}`;
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  await createTenant(kv, { slug: "acme", created_by: "tok_1" });
  const policy: OidcLoginPolicy = {
    method: "oidc",
    issuer,
    client_id: "cfgtool",
    client_secret_ref: `env:${SECRET_VAR}`,
  };
  const setPolicy = (p: OidcLoginPolicy) =>
    putLoginPolicy(
      kv,
      { tenant_slug: "acme", policy: p, updated_at: new Date().toISOString(), updated_by: "tok_1" },
      eventAuditEntry(
        "tenant.login_policy_changed",
        {
          id: "tok_1",
          principal_type: "service",
          request_id: "r",
        },
        new Date(),
        { tenant_slug: "acme" },
      ),
    );
  await setPolicy(policy);
  const deps = { kv, key };
  const start = () =>
    startOidcFlow(deps, "acme", policy, {
      redirectUri: "https://flags.example.com/auth/oidc/callback",
      next: "/ui",
    });
  return {
    kv,
    key,
    deps,
    policy,
    issuer,
    start,
    setPolicy,
    async [Symbol.asyncDispose]() {
      kv.close();
      await server.shutdown();
    },
  };
}

/** The refusal `completeOidcFlow` raises for these parameters, and the facts it learnt. */
async function refusal(
  w: Awaited<ReturnType<typeof world>>,
  params: Record<string, string>,
  bound: string | undefined,
) {
  const facts: OidcFacts = { method: "oidc" };
  const err = await assertRejects(
    () => completeOidcFlow(w.deps, new URLSearchParams(params), bound, facts),
    LoginError,
  );
  return { reason: err.reason, status: err.status, message: err.message, tenant: facts.tenant };
}

Deno.test("starting a flow gives the authorization URL with PKCE S256, state and nonce, and keeps the flow under the state's digest", async () => {
  await using w = await world();
  const { url, state } = await w.start();
  assertEquals(`${url.origin}${url.pathname}`, `${w.issuer}/authorize`);
  const q = url.searchParams;
  assertEquals(q.get("client_id"), "cfgtool");
  assertEquals(q.get("response_type"), "code");
  assertEquals(q.get("scope"), "openid email profile");
  assertEquals(q.get("redirect_uri"), "https://flags.example.com/auth/oidc/callback");
  assertEquals(q.get("code_challenge_method"), "S256");
  assertEquals(q.get("state"), state);
  const flow = await peekOneTime<OidcFlow>(
    w.kv,
    "oidc_state",
    await hmacHex(w.key, `oidc_state:${state}`),
    Date.now(),
  );
  assert(flow !== null);
  assertEquals(flow.tenant, "acme");
  assertEquals(flow.nonce, q.get("nonce"));
  assertEquals(flow.next, "/ui");
  const challenge = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(flow.verifier)),
  );
  const b64u = btoa(String.fromCharCode(...challenge)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
  assertEquals(q.get("code_challenge"), b64u);
  const again = await w.start();
  assert(again.state !== state, "states are fresh");
});

Deno.test("the groups scope is asked for when the issuer lists it", async () => {
  await using w = await world(["openid", "email", "groups"]);
  assertEquals((await w.start()).url.searchParams.get("scope"), "openid email profile groups");
});

Deno.test("a missing client secret stops the start with 503 before the person leaves", async () => {
  await using w = await world();
  const policy = { ...w.policy, client_secret_ref: "env:CFGTOOL_TEST_OIDC_NO_SUCH_SECRET" };
  await assertRejects(
    () => startOidcFlow(w.deps, "acme", policy, { redirectUri: "https://x/cb", next: "/" }),
    UnavailableError,
  );
});

Deno.test("a callback without state is 400 state; the browser's own flow names the tenant", async () => {
  await using w = await world();
  const { state } = await w.start();
  assertEquals(await refusal(w, { code: "c" }, state), {
    reason: "state",
    status: 400,
    message: "The sign-in response carries no state; start again",
    tenant: "acme",
  });
});

Deno.test("a callback with an unknown state is refused as state", async () => {
  await using w = await world();
  const { state } = await w.start();
  const r = await refusal(w, { code: "c", state: "made-up" }, state);
  assertEquals([r.reason, r.status, r.tenant], ["state", 403, "acme"]);
  const stranger = await refusal(w, { code: "c", state: "made-up" }, undefined);
  assertEquals([stranger.reason, stranger.tenant], ["state", null]);
});

Deno.test("a callback this browser did not start is refused as state, and the flow is spent", async () => {
  await using w = await world();
  const { state } = await w.start();
  const r = await refusal(w, { code: "c", state }, "another-browser-state");
  assertEquals([r.reason, r.tenant], ["state", "acme"]);
  assert(r.message.includes("not started in this browser"), r.message);
  const replay = await refusal(w, { code: "c", state }, state);
  assertEquals([replay.reason, replay.tenant], ["code", "acme"]);
});

Deno.test("a state is used once: the second callback is refused as code (a replay)", async () => {
  await using w = await world();
  const { state } = await w.start();
  // The first use fails later (the fake issuer has no token endpoint); the state is spent all the same.
  await completeOidcFlow(w.deps, new URLSearchParams({ code: "c", state }), state, {
    method: "oidc",
  }).catch(() => {});
  const r = await refusal(w, { code: "c", state }, state);
  assertEquals([r.reason, r.tenant], ["code", "acme"]);
  assert(r.message.includes("used already"), r.message);
});

Deno.test("a policy changed during the sign-in refuses the callback as policy", async () => {
  await using w = await world();
  const { state } = await w.start();
  await w.setPolicy({ ...w.policy, client_id: "another-client" });
  const r = await refusal(w, { code: "c", state }, state);
  assertEquals([r.reason, r.tenant], ["policy", "acme"]);
});
